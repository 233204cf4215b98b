/*
 * An audit of the keys server-side scripts touch, read from a Redis MONITOR
 * stream: every key a command run by a script names must be among the keys
 * its call declared (KEYS), and every declared or touched key must hash to
 * the slot of the first declared key (the lock key). Redis 7.0 checks
 * neither outside a cluster, and a cluster only the second.
 *
 * MONITOR (7.0) prints a script's call, then the commands it ran, each on a
 * line of its own and nothing in between (a script is atomic):
 *   1764150000.123456 [0 127.0.0.1:40000] "evalsha" "<sha>" "1" "P{r}" "argv..."
 *   1764150000.123502 [0 lua] "RPUSH" "P{r}:w:<token>" "y"
 * Which arguments of a command are keys, the server says: COMMAND INFO once
 * per command name (its first, last and step), checked against COMMAND
 * GETKEYS the first time; commands whose keys move with their arguments ask
 * GETKEYS each time.
 *
 * A violation is recorded once per distinct (what, script, command, key
 * shape), a key's shape being it relative to the lock key ("P{R}:q",
 * "P{R}:w:<token>"), with a count and the first example.
 *
 * Used by tests/core/test_redis_keys.c and tests/tools/key_audit.c.
 */
#ifndef LKC_T_MONITOR_AUDIT_H
#define LKC_T_MONITOR_AUDIT_H

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hiredis/hiredis.h>

#include "../../ext/core/lkc_redis_topo.h"

#pragma GCC diagnostic ignored "-Wunused-function"

/* How much of an example a finding keeps, in bytes of MONITOR text. */
#define MA_EXAMPLE_MAX 400

/* One MONITOR line: who ran the command and its arguments, unescaped. */
typedef struct {
	int lua;                 /* run by a script ("[db lua]") */
	int argc;
	char **argv;             /* each NUL-terminated too; may hold NUL bytes */
	size_t *lens;
	const char *args_text;   /* the line from its first argument on, as MONITOR escaped it */
	size_t args_text_len;
} ma_line;

/* A script the audit knows by name: its body, and the SHA-1 the server gave it. */
typedef struct {
	const char *name;
	const char *body;
	char sha[41];
	unsigned long runs;
} ma_script;

/* A distinct violation. */
typedef struct {
	char *what;              /* "undeclared key", "key outside the lock key's slot", ... */
	char *script;
	char *command;
	char *shape;
	char *example;
	unsigned long count;
	unsigned first_gen;      /* the generation (ma_audit.gen) it was first seen in */
	unsigned last_gen;
} ma_finding;

/* How to find a command's keys: none, by position, or by asking the server each time. */
typedef enum { MA_KEYS_NONE, MA_KEYS_RANGE, MA_KEYS_ASK } ma_keys_kind;

typedef struct {
	char *name;              /* lower case */
	ma_keys_kind kind;
	int first, last, step;
	int checked;             /* the range was compared with COMMAND GETKEYS once */
} ma_spec;

typedef struct ma_audit {
	redisContext *admin;     /* for SCRIPT LOAD, COMMAND INFO and COMMAND GETKEYS */
	ma_script *scripts;
	size_t nscripts;
	/* The script call whose commands the lines that follow are. */
	int running;
	char *script_name;       /* a table name, or "unknown script <sha>" */
	ma_script *script;       /* NULL when unknown */
	ma_line call;
	int nkeys;               /* declared keys: call.argv[3 .. 3 + nkeys) */
	unsigned slot;           /* the lock key's slot */
	ma_spec *specs;
	size_t nspecs;
	ma_finding *findings;
	size_t nfindings;
	unsigned gen;            /* the caller's current generation (a test case) */
	unsigned long lines, script_runs, script_commands;
	/* Called for each new distinct finding, right when it is recorded. */
	void (*on_finding)(void *ctx, const ma_finding *f);
	void *ctx;
} ma_audit;

static void ma_line_free(ma_line *l)
{
	for (int i = 0; i < l->argc; i++) {
		free(l->argv[i]);
	}
	free(l->argv);
	free(l->lens);
	memset(l, 0, sizeof(*l));
}

static int ma_hex(int c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Reads one quoted argument at *at (MONITOR's escapes, those of Redis's
 * sdscatrepr: \" \\ \n \r \t \a \b \xHH); 0 with *at past it, -1 when malformed.
 */
static int ma_unquote(const char **at, const char *end, char **out, size_t *out_len)
{
	const char *p = *at;
	char *buf;
	size_t n = 0;

	if (p >= end || *p != '"') {
		return -1;
	}
	buf = malloc((size_t) (end - p) + 1);
	if (buf == NULL) {
		return -1;
	}
	for (p++; p < end && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			if (++p >= end) {
				break;
			}
			switch (*p) {
				case '\\': c = '\\'; break;
				case '"': c = '"'; break;
				case 'n': c = '\n'; break;
				case 'r': c = '\r'; break;
				case 't': c = '\t'; break;
				case 'a': c = '\a'; break;
				case 'b': c = '\b'; break;
				case 'x': {
					int hi = p + 2 < end ? ma_hex(p[1]) : -1, lo = hi >= 0 ? ma_hex(p[2]) : -1;

					if (lo < 0) {
						free(buf);
						return -1;
					}
					c = (char) (hi * 16 + lo);
					p += 2;
					break;
				}
				default:
					free(buf);
					return -1;
			}
		}
		buf[n++] = c;
	}
	if (p >= end) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*at = p + 1;
	*out = buf;
	*out_len = n;
	return 0;
}

/* Parses a MONITOR line ("ts [db client] "arg" ..."); 0, or -1 when it is not one (out is then empty). */
static int ma_parse(const char *text, size_t len, ma_line *out)
{
	const char *end = text + len, *open = memchr(text, '[', len), *p, *close;
	int cap = 0;

	memset(out, 0, sizeof(*out));
	if (open == NULL) {
		return -1;
	}
	/* The client is an address, "lua" or "unix:PATH"; the arguments start at the first '] "'. */
	for (close = open; close + 2 < end && !(close[0] == ']' && close[1] == ' ' && close[2] == '"'); close++) {
	}
	if (close + 2 >= end) {
		return -1;
	}
	p = open + 1;
	while (p < close && isdigit((unsigned char) *p)) {
		p++;
	}
	out->lua = close - p == 4 && memcmp(p, " lua", 4) == 0;
	p = close + 2;
	out->args_text = p;
	out->args_text_len = (size_t) (end - p);
	while (p < end) {
		char *arg;
		size_t arg_len;

		if (ma_unquote(&p, end, &arg, &arg_len) != 0) {
			ma_line_free(out);
			return -1;
		}
		if (out->argc == cap) {
			int ncap = cap ? cap * 2 : 8;
			char **argv = realloc(out->argv, (size_t) ncap * sizeof(*argv));
			size_t *lens = argv != NULL ? realloc(out->lens, (size_t) ncap * sizeof(*lens)) : NULL;

			if (argv != NULL) {
				out->argv = argv;
			}
			if (lens == NULL) {
				free(arg);
				ma_line_free(out);
				return -1;
			}
			out->lens = lens;
			cap = ncap;
		}
		out->argv[out->argc] = arg;
		out->lens[out->argc++] = arg_len;
		if (p < end && *p == ' ') {
			p++;
		}
	}
	return out->argc > 0 ? 0 : -1;
}

/* Appends s (len bytes) to buf escaped as MONITOR prints it, unquoted; never past size (NUL included). */
static void ma_escape(char *buf, size_t size, const char *s, size_t len)
{
	size_t n = strlen(buf);

	for (size_t i = 0; i < len && n + 5 < size; i++) {
		unsigned char c = (unsigned char) s[i];

		if (c == '\\' || c == '"') {
			buf[n++] = '\\';
			buf[n++] = (char) c;
		} else if (isprint(c)) {
			buf[n++] = (char) c;
		} else {
			n += (size_t) snprintf(buf + n, size - n, "\\x%02x", c);
		}
	}
	buf[n] = '\0';
}

/* As ma_escape, in double quotes. */
static void ma_quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t n = strlen(buf);

	if (n + 3 > size) {
		return;
	}
	strcat(buf, "\"");
	ma_escape(buf, size - 1, s, len);
	strcat(buf, "\"");
}

static char *ma_strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy = malloc(len);

	if (copy != NULL) {
		memcpy(copy, s, len);
	}
	return copy;
}

/* Whether s is a run of 32 or more hex digits: an owner token. */
static int ma_hex_token(const char *s, size_t len)
{
	if (len < 32) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		if (ma_hex((unsigned char) s[i]) < 0) {
			return 0;
		}
	}
	return 1;
}

/*
 * The shape of key relative to the lock key (the first declared key): "P{R}"
 * for it, "P{R}" and the suffix for a key that extends it, with a waiter's
 * token (whatever follows ":w:", or a last part of 32 hex digits) as
 * <token>; "<other key>" for any other. Written to out (size bytes).
 */
static void ma_shape(const ma_audit *a, const char *key, size_t len, char *out, size_t size)
{
	const char *lock = a->nkeys > 0 ? a->call.argv[3] : NULL, *suffix, *colon;
	size_t lock_len = a->nkeys > 0 ? a->call.lens[3] : 0, suffix_len;

	if (lock == NULL || len < lock_len || memcmp(key, lock, lock_len) != 0) {
		snprintf(out, size, "<other key>");
		return;
	}
	snprintf(out, size, "P{R}");
	suffix = key + lock_len;
	suffix_len = len - lock_len;
	if (suffix_len >= 3 && memcmp(suffix, ":w:", 3) == 0) {
		snprintf(out + 4, size - 4, ":w:<token>");
		return;
	}
	for (colon = suffix + suffix_len; colon > suffix && colon[-1] != ':'; colon--) {
	}
	colon = colon > suffix + 1 ? colon - 1 : NULL;
	if (colon != NULL && ma_hex_token(colon + 1, suffix_len - (size_t) (colon + 1 - suffix))) {
		ma_escape(out, size - 8, suffix, (size_t) (colon + 1 - suffix));
		strcat(out, "<token>");
		return;
	}
	ma_escape(out, size, suffix, suffix_len);
}

/* Upper-cases a command name (len bytes) into out. */
static void ma_upper(char *out, size_t size, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++) {
		out[i] = (char) toupper((unsigned char) name[i]);
	}
	out[i] = '\0';
}

/* Records one occurrence of a violation in script; l is the line that showed it (NULL: the call itself). */
static void ma_report(ma_audit *a, const char *script, const char *what, const char *command, const char *shape,
	const ma_line *l)
{
	char example[MA_EXAMPLE_MAX + 64] = "";
	ma_finding *f;

	for (size_t i = 0; i < a->nfindings; i++) {
		f = &a->findings[i];
		if (strcmp(f->what, what) == 0 && strcmp(f->script, script) == 0
			&& strcmp(f->command, command) == 0 && strcmp(f->shape, shape) == 0) {
			f->count++;
			f->last_gen = a->gen;
			return;
		}
	}
	f = realloc(a->findings, (a->nfindings + 1) * sizeof(*f));
	if (f == NULL) {
		return;
	}
	a->findings = f;
	f = &a->findings[a->nfindings];
	/* The example: the script's declared keys, then the line, as MONITOR printed them. */
	snprintf(example, sizeof(example), "%s KEYS=[", script);
	for (int i = 0; i < a->nkeys && strlen(example) < MA_EXAMPLE_MAX / 2; i++) {
		if (i > 0) {
			strcat(example, " ");
		}
		ma_quote(example, MA_EXAMPLE_MAX / 2 + 8, a->call.argv[3 + i], a->call.lens[3 + i]);
	}
	strcat(example, "]");
	if (l != NULL) {
		size_t n = strlen(example), take = l->args_text_len;

		if (take > MA_EXAMPLE_MAX - n) {
			take = MA_EXAMPLE_MAX - n;
		}
		snprintf(example + n, sizeof(example) - n, " ran %.*s%s", (int) take, l->args_text,
			take < l->args_text_len ? "..." : "");
	}
	f->what = ma_strdup(what);
	f->script = ma_strdup(script);
	f->command = ma_strdup(command);
	f->shape = ma_strdup(shape);
	f->example = ma_strdup(example);
	f->count = 1;
	f->first_gen = f->last_gen = a->gen;
	if (f->what == NULL || f->script == NULL || f->command == NULL || f->shape == NULL || f->example == NULL) {
		free(f->what);
		free(f->script);
		free(f->command);
		free(f->shape);
		free(f->example);
		return;
	}
	a->nfindings++;
	if (a->on_finding != NULL) {
		a->on_finding(a->ctx, f);
	}
}

/* Checks that key hashes to the lock key's slot; declared says which kind of key it is. */
static void ma_check_slot(ma_audit *a, const char *key, size_t len, const char *command, const ma_line *l, int declared)
{
	char shape[128];

	if (a->nkeys == 0 || lkc_rtopo_slot(key, len) == a->slot) {
		return;
	}
	ma_shape(a, key, len, shape, sizeof(shape));
	ma_report(a, a->script_name, declared ? "declared key outside the lock key's slot" : "key outside the lock key's slot",
		command, shape, l);
}

/* Sets up an audit asking admin; add the scripts with ma_add_script. */
static void ma_init(ma_audit *a, redisContext *admin)
{
	memset(a, 0, sizeof(*a));
	a->admin = admin;
}

/* Names the script body by name: loads it (SCRIPT LOAD) to learn the SHA-1 the server knows it by. 0, or -1. */
static int ma_add_script(ma_audit *a, const char *name, const char *body)
{
	redisReply *reply = redisCommand(a->admin, "SCRIPT LOAD %s", body);
	ma_script *s;
	int ok = reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40;

	if (ok && (s = realloc(a->scripts, (a->nscripts + 1) * sizeof(*s))) != NULL) {
		a->scripts = s;
		s = &a->scripts[a->nscripts++];
		s->name = name;
		s->body = body;
		memcpy(s->sha, reply->str, 41);
		s->runs = 0;
	} else {
		ok = 0;
	}
	freeReplyObject(reply);
	return ok ? 0 : -1;
}

static void ma_free(ma_audit *a)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		free(a->findings[i].what);
		free(a->findings[i].script);
		free(a->findings[i].command);
		free(a->findings[i].shape);
		free(a->findings[i].example);
	}
	for (size_t i = 0; i < a->nspecs; i++) {
		free(a->specs[i].name);
	}
	free(a->findings);
	free(a->specs);
	free(a->scripts);
	free(a->script_name);
	ma_line_free(&a->call);
	memset(a, 0, sizeof(*a));
}

/* Asks COMMAND GETKEYS for the keys of l; sets *keys (argument indexes, malloc'd) and *n. 0, or -1 with no answer. */
static int ma_getkeys(ma_audit *a, const ma_line *l, int **keys, int *n)
{
	const char **argv = malloc(((size_t) l->argc + 2) * sizeof(*argv));
	size_t *lens = malloc(((size_t) l->argc + 2) * sizeof(*lens));
	redisReply *reply = NULL;
	int rc = -1;

	*keys = NULL;
	*n = 0;
	if (argv != NULL && lens != NULL) {
		argv[0] = "COMMAND";
		lens[0] = 7;
		argv[1] = "GETKEYS";
		lens[1] = 7;
		for (int i = 0; i < l->argc; i++) {
			argv[2 + i] = l->argv[i];
			lens[2 + i] = l->lens[i];
		}
		reply = redisCommandArgv(a->admin, l->argc + 2, argv, lens);
	}
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR
		&& (strstr(reply->str, "no key arguments") != NULL || (l->argc == 1 && strstr(reply->str, "wrong number") != NULL))) {
		/* No keys; a command of no arguments at all (TIME) gets the arity error of GETKEYS itself. */
		rc = 0;
	} else if (reply != NULL && reply->type == REDIS_REPLY_ARRAY) {
		*keys = malloc((reply->elements + 1) * sizeof(**keys));
		rc = *keys != NULL ? 0 : -1;
		/* The answer names keys by value: each is matched to the first argument not matched yet that equals it. */
		for (size_t i = 0; rc == 0 && i < reply->elements; i++) {
			int at = -1;

			for (int j = 1; j < l->argc && at < 0; j++) {
				int used = 0;

				for (int k = 0; k < *n; k++) {
					used |= (*keys)[k] == j;
				}
				if (!used && l->lens[j] == reply->element[i]->len && memcmp(l->argv[j], reply->element[i]->str, l->lens[j]) == 0) {
					at = j;
				}
			}
			if (at < 0) {
				rc = -1;
			} else {
				(*keys)[(*n)++] = at;
			}
		}
	}
	freeReplyObject(reply);
	free(argv);
	free(lens);
	if (rc != 0) {
		free(*keys);
		*keys = NULL;
		*n = 0;
	}
	return rc;
}

/* What the server says about how to find the keys of the command name; NULL when out of memory. */
static ma_spec *ma_spec_of(ma_audit *a, const char *name)
{
	redisReply *reply, *info;
	ma_spec *s;
	char lower[64];
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < sizeof(lower); i++) {
		lower[i] = (char) tolower((unsigned char) name[i]);
	}
	lower[i] = '\0';
	for (i = 0; i < a->nspecs; i++) {
		if (strcmp(a->specs[i].name, lower) == 0) {
			return &a->specs[i];
		}
	}
	s = realloc(a->specs, (a->nspecs + 1) * sizeof(*s));
	if (s == NULL) {
		return NULL;
	}
	a->specs = s;
	s = &a->specs[a->nspecs];
	memset(s, 0, sizeof(*s));
	s->name = ma_strdup(lower);
	if (s->name == NULL) {
		return NULL;
	}
	a->nspecs++;
	s->kind = MA_KEYS_ASK;
	reply = redisCommand(a->admin, "COMMAND INFO %s", lower);
	info = reply != NULL && reply->type == REDIS_REPLY_ARRAY && reply->elements == 1 ? reply->element[0] : NULL;
	if (info != NULL && info->type == REDIS_REPLY_ARRAY && info->elements >= 6 && info->element[2]->type == REDIS_REPLY_ARRAY) {
		int movable = 0;

		for (i = 0; i < info->element[2]->elements; i++) {
			const redisReply *flag = info->element[2]->element[i];

			movable |= flag->str != NULL && strcmp(flag->str, "movablekeys") == 0;
		}
		if (!movable) {
			s->first = (int) info->element[3]->integer;
			s->last = (int) info->element[4]->integer;
			s->step = (int) info->element[5]->integer;
			s->kind = s->first == 0 ? MA_KEYS_NONE : MA_KEYS_RANGE;
		}
	}
	freeReplyObject(reply);
	return s;
}

/* The argument indexes of l's keys by s's range; *n of them, at most l->argc. */
static void ma_range_keys(const ma_spec *s, const ma_line *l, int *keys, int *n)
{
	int last = s->last < 0 ? l->argc + s->last : s->last;

	*n = 0;
	for (int i = s->first; s->step > 0 && i <= last && i < l->argc; i += s->step) {
		keys[(*n)++] = i;
	}
}

/* A command a script ran: its keys must be declared, and in the lock key's slot. */
static void ma_script_command(ma_audit *a, const ma_line *l)
{
	char command[64], shape[128];
	ma_spec *spec = ma_spec_of(a, l->argv[0]);
	int *keys = NULL, n = 0;

	ma_upper(command, sizeof(command), l->argv[0], l->lens[0]);
	a->script_commands++;
	if (spec == NULL || spec->kind == MA_KEYS_NONE) {
		return;
	}
	if (spec->kind == MA_KEYS_RANGE) {
		keys = malloc(((size_t) l->argc + 1) * sizeof(*keys));
		if (keys == NULL) {
			return;
		}
		ma_range_keys(spec, l, keys, &n);
		if (!spec->checked) {
			int *asked, m;

			/* Once per command: does the range say what the server says? Else ask it each time. */
			spec->checked = 1;
			if (ma_getkeys(a, l, &asked, &m) != 0 || m != n || (n > 0 && memcmp(asked, keys, (size_t) n * sizeof(*keys)) != 0)) {
				spec->kind = MA_KEYS_ASK;
			}
			free(asked);
		}
	}
	if (spec->kind == MA_KEYS_ASK) {
		free(keys);
		if (ma_getkeys(a, l, &keys, &n) != 0) {
			ma_report(a, a->script_name, "keys unknown (COMMAND GETKEYS failed)", command, "", l);
			return;
		}
	}
	for (int k = 0; k < n; k++) {
		const char *key = l->argv[keys[k]];
		size_t len = l->lens[keys[k]];
		int declared = 0;

		for (int d = 0; d < a->nkeys && !declared; d++) {
			declared = a->call.lens[3 + d] == len && memcmp(a->call.argv[3 + d], key, len) == 0;
		}
		if (!declared) {
			ma_shape(a, key, len, shape, sizeof(shape));
			ma_report(a, a->script_name, "undeclared key", command, shape, l);
		}
		ma_check_slot(a, key, len, command, l, 0);
	}
	free(keys);
}

/* Whether a client's command runs a script: EVAL, EVALSHA and their _RO forms. */
static int ma_is_call(const ma_line *l)
{
	return !l->lua && (strcasecmp(l->argv[0], "eval") == 0 || strcasecmp(l->argv[0], "evalsha") == 0
		|| strcasecmp(l->argv[0], "eval_ro") == 0 || strcasecmp(l->argv[0], "evalsha_ro") == 0);
}

/* Starts a script call: which script, its declared keys and their slot. Takes l. */
static void ma_start_call(ma_audit *a, ma_line *l)
{
	int by_sha = tolower((unsigned char) l->argv[0][4]) == 's';
	char name[128];
	long numkeys = l->argc >= 3 ? strtol(l->argv[2], NULL, 10) : -1;

	ma_line_free(&a->call);
	free(a->script_name);
	a->call = *l;
	memset(l, 0, sizeof(*l));
	a->running = 1;
	a->script = NULL;
	a->nkeys = numkeys >= 0 && numkeys <= a->call.argc - 3 ? (int) numkeys : 0;
	for (size_t i = 0; i < a->nscripts && a->script == NULL; i++) {
		if (by_sha ? a->call.argc >= 2 && strcasecmp(a->call.argv[1], a->scripts[i].sha) == 0
			: a->call.argc >= 2 && strcmp(a->call.argv[1], a->scripts[i].body) == 0) {
			a->script = &a->scripts[i];
		}
	}
	if (a->script != NULL) {
		snprintf(name, sizeof(name), "%s", a->script->name);
		a->script->runs++;
	} else if (by_sha) {
		snprintf(name, sizeof(name), "unknown script %.40s", a->call.argc >= 2 ? a->call.argv[1] : "");
	} else {
		snprintf(name, sizeof(name), "unknown EVAL body");
	}
	a->script_name = ma_strdup(name);
	if (a->script_name == NULL) {
		a->running = 0;
		return;
	}
	a->script_runs++;
	ma_upper(name, sizeof(name), a->call.argv[0], a->call.lens[0]);
	if (a->script == NULL) {
		/* Its keys are checked all the same; the caller should name it (the store's: redis_scripts.h). */
		ma_report(a, a->script_name, "script not in the audit's table", name, "", NULL);
	}
	if (a->nkeys > 0) {
		a->slot = lkc_rtopo_slot(a->call.argv[3], a->call.lens[3]);
	}
	for (int d = 1; d < a->nkeys; d++) {
		ma_check_slot(a, a->call.argv[3 + d], a->call.lens[3 + d], name, NULL, 1);
	}
}

/* Feeds one MONITOR line (a status reply's text) to the audit. */
static void ma_feed(ma_audit *a, const char *text, size_t len)
{
	ma_line l;

	a->lines++;
	if (ma_parse(text, len, &l) != 0) {
		return;
	}
	if (l.lua) {
		if (a->running) {
			ma_script_command(a, &l);
		} else {
			char command[64];

			ma_upper(command, sizeof(command), l.argv[0], l.lens[0]);
			ma_report(a, "(no script call seen)", "script command without its call", command, "", &l);
		}
	} else if (ma_is_call(&l)) {
		ma_start_call(a, &l);
	} else {
		a->running = 0;
	}
	ma_line_free(&l);
}

/*
 * Reads what mon (a connection in MONITOR mode) has and feeds it, until a
 * line passes whose arguments are exactly until (e.g. "echo" "MARK"), or
 * timeout_ms passes with nothing to read (-1: until stop is set; until NULL:
 * until then). 0 when until was seen, 1 when stopped or timed out, -1 when the
 * connection failed.
 */
static int ma_pump(ma_audit *a, redisContext *mon, const char *const *until, int until_argc, int timeout_ms,
	volatile int *stop)
{
	for (;;) {
		void *r = NULL;
		struct pollfd pfd;
		int n;

		if (redisGetReplyFromReader(mon, &r) != REDIS_OK) {
			return -1;
		}
		if (r != NULL) {
			redisReply *reply = r;
			int done = 0;

			if (reply->type == REDIS_REPLY_STATUS && reply->str != NULL && strcmp(reply->str, "OK") != 0) {
				ma_line l;

				ma_feed(a, reply->str, reply->len);
				if (until != NULL && ma_parse(reply->str, reply->len, &l) == 0) {
					done = !l.lua && l.argc == until_argc;
					for (int i = 0; done && i < until_argc; i++) {
						done = strcasecmp(l.argv[i], until[i]) == 0;
					}
					ma_line_free(&l);
				}
			}
			freeReplyObject(reply);
			if (done) {
				return 0;
			}
			continue;
		}
		if (stop != NULL && *stop) {
			return 1;
		}
		pfd.fd = mon->fd;
		pfd.events = POLLIN;
		n = poll(&pfd, 1, timeout_ms < 0 || timeout_ms > 200 ? 200 : timeout_ms);
		if (n < 0 && errno != EINTR) {
			return -1;
		}
		if (n == 0 && timeout_ms >= 0) {
			timeout_ms -= 200;
			if (timeout_ms <= 0) {
				return 1;
			}
		}
		if (n > 0 && redisBufferRead(mon) != REDIS_OK) {
			return -1;
		}
	}
}

/* Opens a connection to host:port in MONITOR mode; NULL with a message on stderr when it cannot. */
static redisContext *ma_monitor(const char *host, int port)
{
	redisContext *c = redisConnect(host, port);
	redisReply *reply;

	if (c == NULL || c->err != 0) {
		fprintf(stderr, "MONITOR: cannot connect to %s:%d: %s\n", host, port, c != NULL ? c->errstr : "out of memory");
		redisFree(c);
		return NULL;
	}
	reply = redisCommand(c, "MONITOR");
	if (reply == NULL || reply->type != REDIS_REPLY_STATUS) {
		fprintf(stderr, "MONITOR: refused by %s:%d: %s\n", host, port, reply != NULL && reply->str != NULL ? reply->str : c->errstr);
		freeReplyObject(reply);
		redisFree(c);
		return NULL;
	}
	freeReplyObject(reply);
	return c;
}

/*
 * Reads everything mon has for what ran before now: sends ECHO of a fresh
 * mark on the admin connection and feeds lines until MONITOR shows it. 0, or
 * -1 when it did not within 10 s or a connection failed.
 */
static int ma_drain(ma_audit *a, redisContext *mon)
{
	static unsigned long marks;
	char mark[64];
	const char *until[2] = { "echo", mark };
	redisReply *reply;

	snprintf(mark, sizeof(mark), "monitor-audit-mark-%lu", ++marks);
	reply = redisCommand(a->admin, "ECHO %s", mark);
	if (reply == NULL) {
		return -1;
	}
	freeReplyObject(reply);
	return ma_pump(a, mon, until, 2, 10000, NULL) == 0 ? 0 : -1;
}

/* Prints f as one line to out, prefixed by lead. */
static void ma_print(FILE *out, const char *lead, const ma_finding *f)
{
	fprintf(out, "%s%s: %s %s %s (%lu time%s; e.g. %s)\n", lead, f->script, f->what, f->command, f->shape,
		f->count, f->count == 1 ? "" : "s", f->example);
}

#endif
