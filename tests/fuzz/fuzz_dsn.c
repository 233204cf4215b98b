/*
 * libFuzzer harness of the DSN parser (lkc_dsn_parse, lkc_dsn_free).
 *
 * Beyond "no crash, no leak, no undefined behaviour" it asserts the contract:
 * a failure leaves the result zeroed with an LKC_ERR_INVALID message free of
 * control bytes that never quotes the password; a success fills the fields as
 * lkc.h describes them, and writing the result back as a DSN (percent-encoding
 * what needs it) parses to the very same result.
 */
#include "fuzz.h"

/* The parser refuses longer DSNs; a written-back DSN beyond it cannot be parsed again. */
#define FUZZ_DSN_MAX 4096

/* Whether every field is NULL or 0, as after a failure or lkc_dsn_free. */
static int dsn_zeroed(const lkc_dsn *d)
{
	return d->scheme == NULL && d->user == NULL && d->password == NULL && d->host == NULL
		&& d->port == 0 && d->path == NULL && d->nparams == 0 && d->param_keys == NULL
		&& d->param_values == NULL;
}

/* NULL-aware string equality. */
static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL) {
		return a == b;
	}
	return strcmp(a, b) == 0;
}

/* Whether two parsed DSNs are equal field by field, query pairs in order. */
static int dsn_equal(const lkc_dsn *a, const lkc_dsn *b)
{
	if (!same(a->scheme, b->scheme) || !same(a->user, b->user) || !same(a->password, b->password)
		|| !same(a->host, b->host) || a->port != b->port || !same(a->path, b->path) || a->nparams != b->nparams) {
		return 0;
	}
	for (size_t i = 0; i < a->nparams; i++) {
		if (!same(a->param_keys[i], b->param_keys[i]) || !same(a->param_values[i], b->param_values[i])) {
			return 0;
		}
	}
	return 1;
}

/* A growing output buffer for writing a DSN back. */
typedef struct {
	char *buf;
	size_t len, cap;
} outbuf;

/* Appends one byte, keeping the buffer NUL-terminated. */
static void out_byte(outbuf *o, char c)
{
	if (o->len + 1 >= o->cap) {
		o->cap = o->cap ? o->cap * 2 : 256;
		o->buf = realloc(o->buf, o->cap);
		FUZZ_CHECK(o->buf != NULL);
	}
	o->buf[o->len++] = c;
	o->buf[o->len] = '\0';
}

/* Appends s as it is. */
static void out_str(outbuf *o, const char *s)
{
	for (; *s != '\0'; s++) {
		out_byte(o, *s);
	}
}

/* Appends s, percent-encoding '%', every byte of special and every control or non-ASCII byte. */
static void out_encoded(outbuf *o, const char *s, const char *special)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char) *s;

		if (c == '%' || c < 0x21 || c >= 0x7f || strchr(special, c) != NULL) {
			out_byte(o, '%');
			out_byte(o, hex[c >> 4]);
			out_byte(o, hex[c & 15]);
		} else {
			out_byte(o, (char) c);
		}
	}
}

/* Writes a parsed DSN back as text that must parse to the same fields. */
static void dsn_write(const lkc_dsn *d, outbuf *o)
{
	out_str(o, d->scheme);
	out_byte(o, ':');
	if (d->user != NULL || d->password != NULL || d->host != NULL || d->port != 0) {
		out_str(o, "//");
		if (d->user != NULL || d->password != NULL) {
			if (d->user != NULL) {
				out_encoded(o, d->user, ":@/?");
			}
			if (d->password != NULL) {
				out_byte(o, ':');
				out_encoded(o, d->password, "@/?");
			}
			out_byte(o, '@');
		}
		if (d->host != NULL) {
			/* The host is kept as written, never decoded; a lone IPv6 address lost its brackets. */
			int ipv6 = strchr(d->host, ':') != NULL && strchr(d->host, ',') == NULL;

			if (ipv6) {
				out_byte(o, '[');
			}
			out_str(o, d->host);
			if (ipv6) {
				out_byte(o, ']');
			}
		}
		if (d->port != 0) {
			char port[16];

			snprintf(port, sizeof(port), ":%d", d->port);
			out_str(o, port);
		}
	}
	if (d->path != NULL) {
		/* A path that starts with "//" would read as an authority: its second slash is encoded. */
		if (d->path[0] != '/') {
			out_encoded(o, d->path, "?");
		} else if (d->path[1] == '/') {
			out_str(o, "/%2F");
			out_encoded(o, d->path + 2, "?");
		} else {
			out_byte(o, '/');
			out_encoded(o, d->path + 1, "?");
		}
	}
	if (d->nparams > 0) {
		out_byte(o, '?');
		for (size_t i = 0; i < d->nparams; i++) {
			if (i > 0) {
				out_byte(o, '&');
			}
			out_encoded(o, d->param_keys[i], "&=?");
			out_byte(o, '=');
			out_encoded(o, d->param_values[i], "&=?");
		}
	}
}

/* Checks the fields of a successful parse against lkc.h. */
static void check_fields(const lkc_dsn *d)
{
	FUZZ_CHECK(d->scheme != NULL && d->scheme[0] >= 'a' && d->scheme[0] <= 'z');
	for (const char *p = d->scheme; *p != '\0'; p++) {
		FUZZ_CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.');
	}
	/* NULL when absent or empty: an empty string is never handed out. */
	FUZZ_CHECK(d->user == NULL || d->user[0] != '\0');
	FUZZ_CHECK(d->password == NULL || d->password[0] != '\0');
	FUZZ_CHECK(d->host == NULL || d->host[0] != '\0');
	FUZZ_CHECK(d->path == NULL || d->path[0] != '\0');
	FUZZ_CHECK(d->port >= 0 && d->port <= 65535);
	/* A list of hosts keeps its ports, and then port is 0. */
	FUZZ_CHECK(d->host == NULL || strchr(d->host, ',') == NULL || d->port == 0);
	if (d->nparams > 0) {
		FUZZ_CHECK(d->param_keys != NULL && d->param_values != NULL);
	}
	for (size_t i = 0; i < d->nparams; i++) {
		FUZZ_CHECK(d->param_keys[i] != NULL && d->param_keys[i][0] != '\0' && d->param_values[i] != NULL);
		for (size_t j = 0; j < i; j++) {
			FUZZ_CHECK(strcmp(d->param_keys[i], d->param_keys[j]) != 0);
		}
	}
}

/* Whether c can reach an error message only by quoting the DSN: no message template holds it. */
static int foreign_to_templates(unsigned char c)
{
	return c >= 0x80 || strchr("#$~`|^!;<>\"{}*&", c) != NULL;
}

/*
 * Asserts that a failed parse's message does not quote the password. Checked
 * when the raw password holds a byte no message template has (templates alone
 * spell many short passwords). A message may still spell the password by chance
 * (a quoted query key next to a template's words, as the fuzzer found), so a
 * message that holds it is compared with the message of the same DSN with the
 * password's bytes changed: the password must have got there from somewhere
 * else, which that one shows.
 */
static void check_password_hidden(const char *dsn, size_t len, const lkc_err *err)
{
	const char *colon = memchr(dsn, ':', len);
	size_t start, end, at, pw_start, pw_len;
	int foreign = 0;
	char *masked;
	lkc_dsn parsed;
	lkc_err again;
	lkc_rc rc;

	if (colon == NULL || (size_t) (colon - dsn) + 3 > len || colon[1] != '/' || colon[2] != '/') {
		return;
	}
	start = (size_t) (colon - dsn) + 3;
	end = start;
	while (end < len && dsn[end] != '/' && dsn[end] != '?') {
		end++;
	}
	at = end;
	for (size_t i = start; i < end; i++) {
		if (dsn[i] == '@') {
			at = i;
		}
	}
	if (at == end) {
		return;
	}
	colon = memchr(dsn + start, ':', at - start);
	if (colon == NULL) {
		return;
	}
	pw_start = (size_t) (colon - dsn) + 1;
	pw_len = at - pw_start;
	for (size_t i = pw_start; i < at; i++) {
		foreign |= foreign_to_templates((unsigned char) dsn[i]);
	}
	if (pw_len < 4 || !foreign || !fuzz_contains(err->msg, strlen(err->msg), dsn + pw_start, pw_len)) {
		return;
	}
	masked = fuzz_copy((const uint8_t *) dsn, len);
	/* Letters only, other than the password's first byte: no '@', ':', '/', '?', '%' or brace moves. */
	memset(masked + pw_start, dsn[pw_start] == 'q' ? 'z' : 'q', pw_len);
	lkc_err_clear(&again);
	rc = lkc_dsn_parse(masked, len, &parsed, &again);
	if (rc == LKC_OK) {
		lkc_dsn_free(&parsed);
	}
	if (rc == LKC_OK || !fuzz_contains(again.msg, strlen(again.msg), dsn + pw_start, pw_len)) {
		fprintf(stderr, "the message quotes the password: %s\n", err->msg);
	}
	FUZZ_CHECK(rc != LKC_OK && fuzz_contains(again.msg, strlen(again.msg), dsn + pw_start, pw_len));
	free(masked);
}

/*
 * Reads a parsed DSN into a Redis config (and its host list on its own) and
 * checks what lkc.h promises: a failure is LKC_ERR_INVALID with a clean
 * message; a success names a topology whose fields are filled, every seed a
 * host and a port from 1 to 65535.
 */
static void check_redis_config(const lkc_dsn *d)
{
	lkc_redis_config cfg;
	lkc_redis_addr *addrs;
	size_t n;
	lkc_err err;
	lkc_rc rc;

	if (d->host != NULL) {
		lkc_err_clear(&err);
		rc = lkc_dsn_hosts(d->host, 6379, "fuzz DSN", &addrs, &n, &err);
		if (rc == LKC_OK) {
			FUZZ_CHECK(n >= 1 && addrs != NULL);
			for (size_t i = 0; i < n; i++) {
				FUZZ_CHECK(addrs[i].host != NULL && addrs[i].host[0] != '\0');
				FUZZ_CHECK(addrs[i].port >= 1 && addrs[i].port <= 65535);
			}
			lkc_dsn_hosts_free(addrs, n);
		} else {
			FUZZ_CHECK(rc == LKC_ERR_INVALID && addrs == NULL && n == 0);
			FUZZ_CHECK(fuzz_msg_terminated(&err) && fuzz_no_control(err.msg));
		}
	}
	if (strncmp(d->scheme, "redis", 5) != 0) {
		return;
	}
	lkc_redis_config_init(&cfg);
	lkc_err_clear(&err);
	rc = lkc_redis_config_dsn(&cfg, d, &err);
	if (rc != LKC_OK) {
		FUZZ_CHECK(rc == LKC_ERR_INVALID);
		FUZZ_CHECK(fuzz_msg_terminated(&err) && err.msg[0] != '\0' && fuzz_no_control(err.msg));
	} else if (cfg.topology == LKC_REDIS_SINGLE) {
		FUZZ_CHECK((cfg.host != NULL) != (cfg.socket_path != NULL) && cfg.nseeds == 0);
		FUZZ_CHECK(cfg.socket_path == NULL || !cfg.tls);
		FUZZ_CHECK(cfg.port >= 1 && cfg.port <= 65535 && cfg.database >= 0);
	} else {
		FUZZ_CHECK(cfg.host == NULL && cfg.socket_path == NULL && cfg.nseeds >= 1);
		for (size_t i = 0; i < cfg.nseeds; i++) {
			FUZZ_CHECK(cfg.seeds[i].host != NULL && cfg.seeds[i].host[0] != '\0');
			FUZZ_CHECK(cfg.seeds[i].port >= 1 && cfg.seeds[i].port <= 65535);
		}
		FUZZ_CHECK(cfg.topology == LKC_REDIS_CLUSTER
			? cfg.master_name == NULL && cfg.database == 0
			: cfg.master_name != NULL && cfg.master_name[0] != '\0' && cfg.database >= 0);
	}
	lkc_redis_config_free(&cfg);
}

/* libFuzzer's entry point: checks one input against every property above. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *dsn = fuzz_copy(data, size);
	lkc_dsn parsed, again;
	lkc_err err;
	lkc_rc rc;

	lkc_err_clear(&err);
	/* The parser must overwrite whatever the caller's struct held. */
	memset(&parsed, 0xa5, sizeof(parsed));
	rc = lkc_dsn_parse(dsn, size, &parsed, &err);
	if (rc != LKC_OK) {
		FUZZ_CHECK(rc == LKC_ERR_INVALID);
		FUZZ_CHECK(err.code == rc);
		FUZZ_CHECK(fuzz_msg_terminated(&err) && err.msg[0] != '\0');
		FUZZ_CHECK(fuzz_no_control(err.msg));
		FUZZ_CHECK(dsn_zeroed(&parsed));
		check_password_hidden(dsn, size, &err);
	} else {
		outbuf o = { NULL, 0, 0 };

		check_fields(&parsed);
		check_redis_config(&parsed);
		dsn_write(&parsed, &o);
		if (o.len <= FUZZ_DSN_MAX) {
			lkc_err_clear(&err);
			rc = lkc_dsn_parse(o.buf, o.len, &again, &err);
			if (rc != LKC_OK) {
				fprintf(stderr, "written back as \"%s\", which fails: %s\n", o.buf, err.msg);
			}
			FUZZ_CHECK(rc == LKC_OK);
			if (!dsn_equal(&parsed, &again)) {
				fprintf(stderr, "written back as \"%s\", which parses differently\n", o.buf);
			}
			FUZZ_CHECK(dsn_equal(&parsed, &again));
			lkc_dsn_free(&again);
		}
		free(o.buf);
	}
	lkc_dsn_free(&parsed);
	FUZZ_CHECK(dsn_zeroed(&parsed));
	/* Freeing a zeroed result is allowed and changes nothing. */
	lkc_dsn_free(&parsed);
	free(dsn);
	return 0;
}
