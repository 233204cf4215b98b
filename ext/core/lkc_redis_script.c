/*
 * The Redis store's scripts and their calls (see lkc_redis_int.h): each script
 * by the SHA-1 Redis names it by, the keys a call declares (the lock key, the
 * keys of the resource that follow it, the wake lists of the tickets the
 * caller knows), a "need" answered by sending the call again with the lists
 * it names, and the wake-ups a script leaves to the caller (the deliver
 * script). The keys themselves, and why a call declares each, are described
 * at the top of lkc_redis.c.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The scripts, one per ext/core/lua/NAME.lua, each the C string lkc_rs_NAME_lua
 * made by scripts/gen-lua.sh (`scripts/gen-lua.sh --print NAME` prints one as
 * it is sent).
 */
#include "lkc_redis_lua.h"

#define LKC_RS_LUA(name, what) { what, lkc_rs_##name##_lua, lkc_rs_##name##_keys, lkc_rs_##name##_lists, "" }

lkc_rs_lua lkc_rs_scripts[LKC_RS_NSCRIPTS] = {
	[LKC_RS_ACQUIRE] = LKC_RS_LUA(acquire, "acquire"),
	[LKC_RS_RELEASE] = LKC_RS_LUA(release, "release"),
	[LKC_RS_REFRESH] = LKC_RS_LUA(refresh, "refresh"),
	[LKC_RS_CHECK] = LKC_RS_LUA(check, "check"),
	[LKC_RS_FENCE] = LKC_RS_LUA(fence, "fencing token"),
	[LKC_RS_FORCE] = LKC_RS_LUA(force, "force release"),
	[LKC_RS_WATCH] = LKC_RS_LUA(watch, "wait until free"),
	[LKC_RS_DELIVER] = LKC_RS_LUA(deliver, "deliver"),
	[LKC_RS_DROP] = LKC_RS_LUA(drop, "release"),
	[LKC_RS_INSPECT] = LKC_RS_LUA(inspect, "inspect"),
	[LKC_RS_FLOOR] = LKC_RS_LUA(floor, "fencing floor"),
};

/* Rotates x left by n bits. */
static uint32_t lkc_rs_rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

/* Mixes one 64-byte block into a SHA-1 state. */
static void lkc_rs_sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++) {
		w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16
			| (uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
	}
	for (int i = 16; i < 80; i++) {
		w[i] = lkc_rs_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	}
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999u;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1u;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDCu;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6u;
		}
		t = lkc_rs_rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = lkc_rs_rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* The SHA-1 of data in lowercase hex: the name Redis gives a script in its cache. */
static void lkc_rs_sha1_hex(const char *data, size_t len, char out[41])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t h[5] = { 0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u };
	unsigned char tail[128];
	size_t full = len / 64 * 64, rest = len - full, tail_len;
	uint64_t bits = (uint64_t) len * 8;

	for (size_t off = 0; off < full; off += 64) {
		lkc_rs_sha1_block(h, (const unsigned char *) data + off);
	}
	memset(tail, 0, sizeof(tail));
	memcpy(tail, data + full, rest);
	tail[rest] = 0x80;
	tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++) {
		tail[tail_len - 1 - i] = (unsigned char) (bits >> (8 * i));
	}
	lkc_rs_sha1_block(h, tail);
	if (tail_len == 128) {
		lkc_rs_sha1_block(h, tail + 64);
	}
	for (int i = 0; i < 20; i++) {
		unsigned char byte = (unsigned char) (h[i / 4] >> (24 - 8 * (i % 4)));
		out[2 * i] = hex[byte >> 4];
		out[2 * i + 1] = hex[byte & 15];
	}
	out[40] = '\0';
}

/*
 * The lock key of a resource, prefix + "{" + tag + "}"; every other key of
 * the resource is the lock key and a suffix, so all of them share the hash
 * tag. The tag is the resource itself when it holds no brace. A brace would
 * end the tag early, or leave it empty (a resource starting with '}'), which
 * Redis reads as "hash the whole key" and which would scatter the keys of one
 * resource over a cluster's slots; such a resource is tagged "{" and the hex
 * SHA-256 of its bytes instead, which no brace-free resource can equal.
 * (lkc_redis_open refuses the one prefix that would empty the tag whatever
 * follows.)
 */
char *lkc_rs_lock_key(const lkc_rs_store *s, const char *resource, size_t len, size_t *key_len)
{
	static const char hex[] = "0123456789abcdef";
	char hashed[1 + 64];
	const char *tag = resource;
	size_t tag_len = len, prefix_len = s->cfg.prefix_len;
	char *key;

	if (memchr(resource, '{', len) != NULL || memchr(resource, '}', len) != NULL) {
		unsigned char digest[32];

		lkc_sha256(resource, len, digest);
		hashed[0] = '{';
		for (int i = 0; i < 32; i++) {
			hashed[1 + 2 * i] = hex[digest[i] >> 4];
			hashed[2 + 2 * i] = hex[digest[i] & 15];
		}
		tag = hashed;
		tag_len = sizeof(hashed);
	}
	key = malloc(prefix_len + tag_len + 3);
	if (key == NULL) {
		return NULL;
	}
	if (prefix_len > 0) {
		memcpy(key, s->cfg.prefix, prefix_len);
	}
	key[prefix_len] = '{';
	memcpy(key + prefix_len + 1, tag, tag_len);
	key[prefix_len + 1 + tag_len] = '}';
	*key_len = prefix_len + tag_len + 2;
	key[*key_len] = '\0';
	return key;
}

/* A key of the resource: its lock key (key_len bytes, binary safe) and suffix; NULL when out of memory. */
char *lkc_rs_subkey(const char *key, size_t key_len, const char *suffix, size_t *len)
{
	size_t suffix_len = strlen(suffix);
	char *sub = malloc(key_len + suffix_len + 1);

	if (sub != NULL) {
		memcpy(sub, key, key_len);
		memcpy(sub + key_len, suffix, suffix_len + 1);
		*len = key_len + suffix_len;
	}
	return sub;
}

/* Whether the prefix's first '{' is followed at once by '}': an empty hash tag, whatever comes after it. */
int lkc_rs_prefix_empties_tag(const char *prefix, size_t len)
{
	const char *open = prefix != NULL ? memchr(prefix, '{', len) : NULL;

	return open != NULL && (size_t) (open - prefix) + 1 < len && open[1] == '}';
}

/* Names every script by the SHA-1 of its body, once per process. */
void lkc_rs_scripts_init(void)
{
	for (int i = 0; i < LKC_RS_NSCRIPTS; i++) {
		lkc_rs_sha1_hex(lkc_rs_scripts[i].body, strlen(lkc_rs_scripts[i].body), lkc_rs_scripts[i].sha);
	}
}

/* The EVALSHA that lkc_rs_eval sends, in one allocation (returned; NULL when out of memory). */
char *lkc_rs_eval_build(int script, const char *key, size_t key_len, const lkc_rs_lists *lists,
	const char *const *args, const size_t *arg_lens, int nargs, lkc_rs_cmd *cmd)
{
	const lkc_rs_lua *lua = &lkc_rs_scripts[script];
	int nfixed = 1, nlists = lua->lists && lists != NULL ? lists->n : 0, argc, at = 3;
	size_t size = 24;
	const char **argv;
	size_t *lens;
	char *mem, *next;

	while (lua->keys[nfixed - 1] != NULL) {
		size += key_len + strlen(lua->keys[nfixed - 1]);
		nfixed++;
	}
	size += (size_t) nlists * (key_len + 3 + 21);
	argc = 3 + nfixed + nlists + nargs;
	/* One allocation for the arguments, their lengths and the keys built from the lock key. */
	mem = malloc((size_t) argc * (sizeof(*argv) + sizeof(*lens)) + size);
	if (mem == NULL) {
		return NULL;
	}
	argv = (const char **) (void *) mem;
	lens = (size_t *) (void *) (mem + (size_t) argc * sizeof(*argv));
	next = mem + (size_t) argc * (sizeof(*argv) + sizeof(*lens));
	argv[0] = "EVALSHA";
	lens[0] = 7;
	argv[1] = lua->sha;
	lens[1] = 40;
	argv[2] = next;
	lens[2] = (size_t) sprintf(next, "%d", nfixed + nlists);
	next += lens[2] + 1;
	argv[at] = key;
	lens[at++] = key_len;
	for (int i = 0; lua->keys[i] != NULL; i++) {
		size_t n = strlen(lua->keys[i]);

		memcpy(next, key, key_len);
		memcpy(next + key_len, lua->keys[i], n);
		argv[at] = next;
		lens[at++] = key_len + n;
		next += key_len + n;
	}
	for (int i = 0; i < nlists; i++) {
		memcpy(next, key, key_len);
		argv[at] = next;
		lens[at++] = key_len + (size_t) sprintf(next + key_len, ":w:%lld", (long long) lists->ticket[i]);
		next += lens[at - 1] + 1;
	}
	for (int i = 0; i < nargs; i++) {
		argv[at] = args[i];
		lens[at++] = arg_lens != NULL ? arg_lens[i] : strlen(args[i]);
	}
	*cmd = (lkc_rs_cmd) { argc, argv, lens };
	return mem;
}

/*
 * Runs a script on a resource's lock key with nargs arguments, by its SHA-1,
 * loading it with EVAL when the server's script cache does not have it
 * (restart, SCRIPT FLUSH). The keys it gets are the lock key, the keys the
 * script declares after it, and the wake lists of lists (NULL: none).
 * arg_lens gives the arguments' lengths (an owner chosen by the caller may
 * hold NUL bytes), NULL when all are text. *reply is the caller's to free.
 */
lkc_rc lkc_rs_eval(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	const lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, redisReply **reply,
	lkc_err *err)
{
	const lkc_rs_lua *lua = &lkc_rs_scripts[script];
	lkc_rs_cmd cmd;
	char *mem;
	lkc_rc rc;

	mem = lkc_rs_eval_build(script, key, key_len, lists, args, arg_lens, nargs, &cmd);
	if (mem == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
	}
	rc = lkc_rs_send(s, op, key, key_len, &cmd, 1, reply, err);
	if (rc == LKC_OK && (*reply)->type == REDIS_REPLY_ERROR && (*reply)->len >= 8
		&& memcmp((*reply)->str, "NOSCRIPT", 8) == 0) {
		/* The lengths live in mem, which is ours. */
		size_t *lens = (size_t *) cmd.lens;

		/* The server refused before running anything, so sending the body is not a second run. */
		freeReplyObject(*reply);
		*reply = NULL;
		cmd.argv[0] = "EVAL";
		lens[0] = 4;
		cmd.argv[1] = lua->body;
		lens[1] = strlen(lua->body);
		rc = lkc_rs_send(s, op, key, key_len, &cmd, 1, reply, err);
	}
	free(mem);
	if (rc == LKC_OK && (*reply)->type == REDIS_REPLY_ERROR) {
		rc = lkc_rs_unexpected(s, lua->name, *reply, err);
		freeReplyObject(*reply);
		*reply = NULL;
	}
	return rc;
}

/* Adds ticket to lists unless it is there; 0, or -1 when lists is full. */
int lkc_rs_lists_add(lkc_rs_lists *lists, int64_t ticket)
{
	for (int i = 0; i < lists->n; i++) {
		if (lists->ticket[i] == ticket) {
			return 0;
		}
	}
	if (lists->n == LKC_RS_LISTS_MAX) {
		return -1;
	}
	lists->ticket[lists->n++] = ticket;
	return 0;
}

/* A ticket a script answered (a bulk string of digits), 0 when it is none. */
int64_t lkc_rs_ticket_of(const redisReply *reply)
{
	char digits[24];
	char *end;
	long long n;

	if (reply->type != REDIS_REPLY_STRING || reply->len == 0 || reply->len >= sizeof(digits)) {
		return 0;
	}
	memcpy(digits, reply->str, reply->len);
	digits[reply->len] = '\0';
	n = strtoll(digits, &end, 10);
	return *end == '\0' && n > 0 ? n : 0;
}

/*
 * Pushes the wake-ups a script left to us (hints: "y<ticket>", "c<ticket>",
 * "f<ticket>", see the deliver script) with the deliver script, which
 * declares their lists. Best effort: a hand-off it does not push is taken
 * by its waiter's own next step, a hint only saves a waiter some sleep.
 */
static void lkc_rs_deliver(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len,
	const redisReply *const *hints, int n)
{
	const char *args[LKC_RS_LISTS_MAX];
	size_t lens[LKC_RS_LISTS_MAX];
	lkc_rs_lists lists = { .n = 0 };
	redisReply *reply = NULL;
	lkc_err ignored;
	int nargs = 0;

	for (int i = 0; i < n && nargs < LKC_RS_LISTS_MAX; i++) {
		int64_t ticket;

		if (hints[i]->type != REDIS_REPLY_STRING || hints[i]->len < 2) {
			continue;
		}
		ticket = strtoll(hints[i]->str + 1, NULL, 10);
		if (ticket > 0 && lkc_rs_lists_add(&lists, ticket) == 0) {
			args[nargs] = hints[i]->str;
			lens[nargs++] = hints[i]->len;
		}
	}
	if (nargs > 0 && lkc_rs_eval(s, op, LKC_RS_DELIVER, key, key_len, &lists, args, lens, nargs, &reply, &ignored)
		== LKC_OK) {
		freeReplyObject(reply);
	}
}

/*
 * Runs a script as lkc_rs_eval does, and reads the answer of one that takes
 * wake lists (see lib/end.lua): a "need" (the script wrote nothing) is sent
 * again with the lists it names added to lists (NULL: the call declares none
 * of its own); the hints are pushed (lkc_rs_deliver); heads (NULL: not
 * wanted) gets the guess of the next tickets, 0 when the answer has none.
 * *result is the script's own result, inside *reply, which is the caller's
 * to free.
 */
lkc_rc lkc_rs_run(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	redisReply **reply, const redisReply **result, lkc_err *err)
{
	lkc_rs_lists none = { .n = 0 };

	if (lists == NULL) {
		lists = &none;
	}
	for (int tries = 0;; tries++) {
		const redisReply *r;
		lkc_rc rc = lkc_rs_eval(s, op, script, key, key_len, lists, args, arg_lens, nargs, reply, err);

		if (rc != LKC_OK) {
			return rc;
		}
		r = *reply;
		*result = r;
		if (!lkc_rs_scripts[script].lists) {
			return LKC_OK;
		}
		if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 && r->element[0]->type == REDIS_REPLY_STRING
			&& r->element[0]->len == 4 && memcmp(r->element[0]->str, "need", 4) == 0) {
			int full = 0;

			for (size_t i = 1; i < r->elements; i++) {
				int64_t ticket = lkc_rs_ticket_of(r->element[i]);

				full |= ticket == 0 || lkc_rs_lists_add(lists, ticket) != 0;
			}
			if (full || tries == 3) {
				rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
				freeReplyObject(*reply);
				*reply = NULL;
				return rc;
			}
			freeReplyObject(*reply);
			*reply = NULL;
			continue;
		}
		if (r->type == REDIS_REPLY_INTEGER) {
			/* The result alone: no guess, no hints. */
			if (heads != NULL) {
				heads[0] = heads[1] = 0;
			}
			return LKC_OK;
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements < 3) {
			rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
			freeReplyObject(*reply);
			*reply = NULL;
			return rc;
		}
		*result = r->element[0];
		if (heads != NULL) {
			heads[0] = lkc_rs_ticket_of(r->element[1]);
			heads[1] = lkc_rs_ticket_of(r->element[2]);
		}
		if (r->elements > 3) {
			lkc_rs_deliver(s, op, key, key_len, (const redisReply *const *) r->element + 3, (int) r->elements - 3);
		}
		return LKC_OK;
	}
}

/* As lkc_rs_run, for a script that answers an integer, sent again on a new connection when a failure leaves it unknown whether it ran. */
lkc_rc lkc_rs_eval_int(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	long long *result, lkc_err *err)
{
	redisReply *reply;
	const redisReply *r;
	lkc_rc rc;

	for (;;) {
		rc = lkc_rs_run(s, op, script, key, key_len, lists, args, arg_lens, nargs, heads, &reply, &r, err);
		if (!lkc_rs_may_recover(op, rc)) {
			break;
		}
		op->recovered = 1;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	if (r->type == REDIS_REPLY_INTEGER) {
		*result = r->integer;
	} else {
		rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
	}
	freeReplyObject(reply);
	return rc;
}
