/* Unit tests of the DSN parser: every DSN of the API, malformed ones, and random bytes. */
#include "t.h"

#include <stdint.h>

/* Compares a parsed field with the expected value; NULL means absent. */
static int same(const char *got, const char *want)
{
	if (got == NULL || want == NULL) {
		return got == want;
	}
	return strcmp(got, want) == 0;
}

/* The value of query key in dsn, or NULL. */
static const char *param(const lkc_dsn *dsn, const char *key)
{
	for (size_t i = 0; i < dsn->nparams; i++) {
		if (strcmp(dsn->param_keys[i], key) == 0) {
			return dsn->param_values[i];
		}
	}
	return NULL;
}

/* Whether every field of dsn is NULL or 0, as after an error or lkc_dsn_free. */
static int zeroed(const lkc_dsn *dsn)
{
	return dsn->scheme == NULL && dsn->user == NULL && dsn->password == NULL
		&& dsn->host == NULL && dsn->port == 0 && dsn->path == NULL
		&& dsn->nparams == 0 && dsn->param_keys == NULL && dsn->param_values == NULL;
}

typedef struct {
	const char *dsn;
	const char *scheme, *user, *password, *host;
	int port;
	const char *path;
	size_t nparams;
	/* Up to three expected query pairs. */
	const char *params[6];
} valid_case;

static const valid_case valid[] = {
	{ "flock:", "flock", NULL, NULL, NULL, 0, NULL, 0, { NULL } },
	{ "flock:///var/lock/app", "flock", NULL, NULL, NULL, 0, "/var/lock/app", 0, { NULL } },
	{ "flock:/var/lock/app", "flock", NULL, NULL, NULL, 0, "/var/lock/app", 0, { NULL } },
	{ "flock:///tmp/a%20b", "flock", NULL, NULL, NULL, 0, "/tmp/a b", 0, { NULL } },
	{ "semaphore:", "semaphore", NULL, NULL, NULL, 0, NULL, 0, { NULL } },
	{ "SEMAPHORE:", "semaphore", NULL, NULL, NULL, 0, NULL, 0, { NULL } },
	{ "redis://127.0.0.1:6379", "redis", NULL, NULL, "127.0.0.1", 6379, NULL, 0, { NULL } },
	{ "redis://localhost", "redis", NULL, NULL, "localhost", 0, NULL, 0, { NULL } },
	{ "redis://host:1", "redis", NULL, NULL, "host", 1, NULL, 0, { NULL } },
	{ "redis://host:65535/", "redis", NULL, NULL, "host", 65535, "/", 0, { NULL } },
	{ "redis://host:06379", "redis", NULL, NULL, "host", 6379, NULL, 0, { NULL } },
	{ "redis://user:pass@host:6380/2?prefix=app:&timeout=0.5&persistent=1",
		"redis", "user", "pass", "host", 6380, "/2", 3,
		{ "prefix", "app:", "timeout", "0.5", "persistent", "1" } },
	{ "redis://:pass@host", "redis", NULL, "pass", "host", 0, NULL, 0, { NULL } },
	{ "redis://user@host", "redis", "user", NULL, "host", 0, NULL, 0, { NULL } },
	{ "redis://@host", "redis", NULL, NULL, "host", 0, NULL, 0, { NULL } },
	{ "redis://:p%40ss%3Aw%2Fd@host", "redis", NULL, "p@ss:w/d", "host", 0, NULL, 0, { NULL } },
	{ "redis://:p@ss@host:7000", "redis", NULL, "p@ss", "host", 7000, NULL, 0, { NULL } },
	{ "redis://us%65r:a:b@host", "redis", "user", "a:b", "host", 0, NULL, 0, { NULL } },
	{ "redis:///run/redis.sock", "redis", NULL, NULL, NULL, 0, "/run/redis.sock", 0, { NULL } },
	{ "redis://:secret@/run/redis.sock?database=3", "redis", NULL, "secret", NULL, 0, "/run/redis.sock", 1,
		{ "database", "3" } },
	{ "redis://:6379", "redis", NULL, NULL, NULL, 6379, NULL, 0, { NULL } },
	{ "redis+sentinel://h1,h2/mymaster", "redis+sentinel", NULL, NULL, "h1,h2", 0, "/mymaster", 0, { NULL } },
	{ "redlock://h1:6379,h2:6379,h3:6379", "redlock", NULL, NULL, "h1:6379,h2:6379,h3:6379", 0, NULL, 0, { NULL } },
	{ "redlock://u:p@h1:1,[::1]:2?timeout=1", "redlock", "u", "p", "h1:1,[::1]:2", 0, NULL, 1,
		{ "timeout", "1" } },
	{ "redis://[::1]:6379", "redis", NULL, NULL, "::1", 6379, NULL, 0, { NULL } },
	{ "redis://[fe80::1:2]", "redis", NULL, NULL, "fe80::1:2", 0, NULL, 0, { NULL } },
	{ "redis://[::ffff:127.0.0.1]:1/0", "redis", NULL, NULL, "::ffff:127.0.0.1", 1, "/0", 0, { NULL } },
	{ "redis://host?prefix=a%2Bb+c&k%3D=v%3Dw=x", "redis", NULL, NULL, "host", 0, NULL, 2,
		{ "prefix", "a+b+c", "k=", "v=w=x" } },
	{ "redis://host?prefix=", "redis", NULL, NULL, "host", 0, NULL, 1, { "prefix", "" } },
	{ "redis://host?", "redis", NULL, NULL, "host", 0, NULL, 0, { NULL } },
	{ "redis://host?prefix=%FF%e9", "redis", NULL, NULL, "host", 0, NULL, 1, { "prefix", "\xff\xe9" } },
	{ "redis://host/a?b=/c?d", "redis", NULL, NULL, "host", 0, "/a", 1, { "b", "/c?d" } },
	{ "redis:?timeout=2", "redis", NULL, NULL, NULL, 0, NULL, 1, { "timeout", "2" } },
	{ "redis://", "redis", NULL, NULL, NULL, 0, NULL, 0, { NULL } },
	{ "x-y.z+1:opaque", "x-y.z+1", NULL, NULL, NULL, 0, "opaque", 0, { NULL } },
	{ "a:/", "a", NULL, NULL, NULL, 0, "/", 0, { NULL } },
};

static void parses_valid_dsns(void)
{
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		const valid_case *c = &valid[i];
		lkc_dsn dsn;
		lkc_err err;
		lkc_rc rc;

		lkc_err_clear(&err);
		rc = lkc_dsn_parse(c->dsn, strlen(c->dsn), &dsn, &err);
		CHECK_RC(rc, LKC_OK, &err);
		if (rc != LKC_OK) {
			fprintf(stderr, "  dsn: %s\n", c->dsn);
			continue;
		}
		CHECK(same(dsn.scheme, c->scheme));
		CHECK(same(dsn.user, c->user));
		CHECK(same(dsn.password, c->password));
		CHECK(same(dsn.host, c->host));
		CHECK(dsn.port == c->port);
		CHECK(same(dsn.path, c->path));
		CHECK(dsn.nparams == c->nparams);
		for (size_t k = 0; k < c->nparams && k < 3; k++) {
			CHECK(same(dsn.param_keys[k], c->params[2 * k]));
			CHECK(same(dsn.param_values[k], c->params[2 * k + 1]));
		}
		if (!same(dsn.scheme, c->scheme) || !same(dsn.host, c->host) || !same(dsn.path, c->path)
			|| dsn.port != c->port || dsn.nparams != c->nparams) {
			fprintf(stderr, "  dsn: %s -> scheme=%s host=%s port=%d path=%s nparams=%zu\n", c->dsn,
				dsn.scheme, dsn.host ? dsn.host : "(null)", dsn.port, dsn.path ? dsn.path : "(null)", dsn.nparams);
		}
		lkc_dsn_free(&dsn);
		CHECK(zeroed(&dsn));
	}
}

typedef struct {
	const char *dsn;
	size_t len;         /* 0: strlen(dsn) */
	const char *says;   /* a part of the message that names the problem and where */
} invalid_case;

/* The passwords below are all "hunter2"; no message may contain it. */
static const invalid_case invalid[] = {
	{ "", 0, "DSN is empty" },
	{ "redis", 0, "has no scheme" },
	{ "//user:hunter2@host", 0, "invalid scheme: character at offset 0" },
	{ ":hunter2@host", 0, "empty scheme" },
	{ "1redis://host", 0, "offset 0 is not a letter" },
	{ "re dis://host", 0, "offset 2 is not a letter, digit" },
	{ "redis://host:0", 0, "redis DSN has an invalid port at offset 13" },
	{ "redis://host:65536", 0, "invalid port" },
	{ "redis://host:99999999999999999999", 0, "invalid port" },
	{ "redis://host:-1", 0, "invalid port" },
	{ "redis://host:+1", 0, "invalid port" },
	{ "redis://host:63 79", 0, "invalid port" },
	{ "redis://host:", 0, "empty port at offset 13" },
	{ "redis://u:hunter2@host:x", 0, "invalid port at offset 23" },
	{ "redis://:hunter2/x@host", 0, "invalid port at offset 9" },
	{ "redis://::1:6379", 0, "more than one ':'" },
	{ "redis://[::1", 0, "without its closing ']'" },
	{ "redis://[]:1", 0, "invalid IPv6 address" },
	{ "redis://[1.2.3.4]", 0, "invalid IPv6 address" },
	{ "redis://[::g]", 0, "invalid character in the IPv6 address at offset 11" },
	{ "redis://[::1]x", 0, "unexpected character after the IPv6 address at offset 13" },
	{ "redis://[::1]:", 0, "empty port" },
	{ "redis://ho]st", 0, "']' in the host" },
	{ "redis://u:hunter2%4@host", 0, "bad percent escape in the password at offset 17" },
	{ "redis://u:hunter2%@host", 0, "bad percent escape in the password" },
	{ "redis://u:hunter2%zz@host", 0, "bad percent escape in the password" },
	{ "redis://u%g0:hunter2@host", 0, "bad percent escape in the user name at offset 9" },
	{ "redis://u:hunter2%00@host", 0, "encoded NUL byte (%00) in the password at offset 17" },
	{ "flock:///tmp/%00x", 0, "encoded NUL byte (%00) in the path at offset 13" },
	{ "flock:///tmp/%", 0, "bad percent escape in the path at offset 13" },
	{ "redis://h?prefix=%00", 0, "encoded NUL byte (%00) in the query value at offset 17" },
	{ "redis://h?pre%00fix=1", 0, "encoded NUL byte (%00) in the query key at offset 13" },
	{ "redis://h?prefix=%1", 0, "bad percent escape in the query value at offset 17" },
	{ "redis://h?persistent", 0, "query item without '=' at offset 10" },
	{ "redis://h?a=1&&b=2", 0, "empty query item at offset 14" },
	{ "redis://h?a=1&", 0, "empty query item at offset 14" },
	{ "redis://h?=1", 0, "empty key at offset 10" },
	{ "redis://h?prefix=a&timeout=1&prefix=b", 0, "repeats the query key 'prefix' at offset 29" },
	{ "redis://h?p%41ss=hunter2&pAss=hunter2", 0, "repeats the query key 'pAss'" },
	{ "redis://h?%0a%1b=1&%0A%1B=2", 0, "repeats the query key '\\x0a\\x1b'" },
	{ "redis://u:hunter2@h\0st", 22, "contains a NUL byte at offset 19" },
	{ "redis:\0", 7, "contains a NUL byte at offset 6" },
};

static void rejects_invalid_dsns(void)
{
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		const invalid_case *c = &invalid[i];
		size_t len = c->len != 0 ? c->len : strlen(c->dsn);
		lkc_dsn dsn;
		lkc_err err;

		lkc_err_clear(&err);
		CHECK_RC(lkc_dsn_parse(c->dsn, len, &dsn, &err), LKC_ERR_INVALID, &err);
		CHECK(err.code == LKC_ERR_INVALID);
		CHECK(zeroed(&dsn));
		CHECK(strstr(err.msg, "hunter2") == NULL);
		CHECK(strstr(err.msg, c->says) != NULL);
		if (strstr(err.msg, c->says) == NULL) {
			fprintf(stderr, "  dsn #%zu: message \"%s\" lacks \"%s\"\n", i, err.msg, c->says);
		}
		/* Freeing what an error left behind is harmless. */
		lkc_dsn_free(&dsn);
	}
}

static void enforces_length_limit(void)
{
	char *buf = malloc(4098);
	lkc_dsn dsn;
	lkc_err err;

	memcpy(buf, "flock:///", 9);
	memset(buf + 9, 'a', 4098 - 9);
	lkc_err_clear(&err);
	CHECK_RC(lkc_dsn_parse(buf, 4096, &dsn, &err), LKC_OK, &err);
	CHECK(dsn.path != NULL && strlen(dsn.path) == 4096 - 8);
	lkc_dsn_free(&dsn);
	CHECK_RC(lkc_dsn_parse(buf, 4097, &dsn, &err), LKC_ERR_INVALID, &err);
	CHECK(strstr(err.msg, "longer than 4096 bytes") != NULL);
	CHECK(zeroed(&dsn));
	free(buf);
}

static void reads_only_len_bytes(void)
{
	static const char text[] = "redis://host:6379/1?a=b";
	lkc_dsn dsn;
	lkc_err err;

	lkc_err_clear(&err);
	/* Cut before the query and inside the port: the rest must be ignored. */
	CHECK_RC(lkc_dsn_parse(text, 19, &dsn, &err), LKC_OK, &err);
	CHECK(same(dsn.path, "/1"));
	CHECK(dsn.nparams == 0);
	lkc_dsn_free(&dsn);
	CHECK_RC(lkc_dsn_parse(text, 15, &dsn, &err), LKC_OK, &err);
	CHECK(dsn.port == 63 && dsn.path == NULL);
	lkc_dsn_free(&dsn);
}

static void free_is_safe_on_empty_structs(void)
{
	lkc_dsn dsn;
	lkc_err err;

	memset(&dsn, 0, sizeof(dsn));
	lkc_dsn_free(&dsn);
	CHECK(zeroed(&dsn));

	lkc_err_clear(&err);
	CHECK_RC(lkc_dsn_parse("redis://u:p@h:1/2?a=1&b=2", 25, &dsn, &err), LKC_OK, &err);
	CHECK(same(param(&dsn, "b"), "2"));
	CHECK(param(&dsn, "c") == NULL);
	lkc_dsn_free(&dsn);
	lkc_dsn_free(&dsn);
	CHECK(zeroed(&dsn));

	/* A partly filled struct, as a caller building one by hand might leave it. */
	dsn.scheme = malloc(6);
	memcpy(dsn.scheme, "redis", 6);
	dsn.param_keys = calloc(2, sizeof(char *));
	dsn.nparams = 1;
	lkc_dsn_free(&dsn);
	CHECK(zeroed(&dsn));
}

/* xorshift64: a fixed sequence, so a failure repeats. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Checks the promises a successful parse makes about its result. */
static void check_parsed(const lkc_dsn *dsn)
{
	CHECK(dsn->scheme != NULL && dsn->scheme[0] >= 'a' && dsn->scheme[0] <= 'z');
	CHECK(dsn->port >= 0 && dsn->port <= 65535);
	CHECK(dsn->host == NULL || dsn->host[0] != '\0');
	CHECK(dsn->nparams == 0 || (dsn->param_keys != NULL && dsn->param_values != NULL));
	for (size_t i = 0; i < dsn->nparams; i++) {
		CHECK(dsn->param_keys[i] != NULL && dsn->param_keys[i][0] != '\0');
		CHECK(dsn->param_values[i] != NULL);
		for (size_t j = 0; j < i; j++) {
			CHECK(strcmp(dsn->param_keys[i], dsn->param_keys[j]) != 0);
		}
	}
}

static void survives_random_input(void)
{
	static const char special[] = ":/@?&=[],%0aF.+-";
	static const char *const seeds[] = {
		"redis://user:pass@host:6380/2?prefix=app:&timeout=0.5&persistent=1",
		"redlock://h1:6379,h2:6379,h3:6379",
		"redis://[::1]:6379/0?a=%41",
		"flock:///var/lock/app",
		"redis+sentinel://:p%40ss@h1,h2/mymaster",
	};
	char buf[160];
	int ok = 0, bad = 0;

	for (int round = 0; round < 6000; round++) {
		size_t len;
		lkc_dsn dsn;
		lkc_err err;
		lkc_rc rc;

		if (round % 3 == 0) {
			/* Pure noise, biased towards the characters the grammar cares about. */
			len = rnd() % sizeof(buf);
			for (size_t i = 0; i < len; i++) {
				uint64_t r = rnd();
				buf[i] = (r & 1) ? special[(r >> 1) % (sizeof(special) - 1)] : (char) (r >> 8);
			}
		} else {
			const char *seed = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];
			int edits = 1 + (int) (rnd() % 4);

			len = strlen(seed);
			memcpy(buf, seed, len);
			for (int e = 0; e < edits && len > 0; e++) {
				size_t at = rnd() % len;
				switch (rnd() % 4) {
					case 0: /* replace */
						buf[at] = (rnd() & 1) ? special[rnd() % (sizeof(special) - 1)] : (char) rnd();
						break;
					case 1: /* delete */
						memmove(buf + at, buf + at + 1, len - at - 1);
						len--;
						break;
					case 2: /* insert */
						if (len < sizeof(buf)) {
							memmove(buf + at + 1, buf + at, len - at);
							buf[at] = special[rnd() % (sizeof(special) - 1)];
							len++;
						}
						break;
					default: /* truncate */
						len = at;
						break;
				}
			}
		}
		/* Parse from an exact-size heap copy so that ASan sees any read past len. */
		{
			char *copy = malloc(len ? len : 1);
			memcpy(copy, buf, len);
			lkc_err_clear(&err);
			rc = lkc_dsn_parse(copy, len, &dsn, &err);
			free(copy);
		}
		if (rc == LKC_OK) {
			ok++;
			check_parsed(&dsn);
			lkc_dsn_free(&dsn);
		} else {
			bad++;
			CHECK(rc == LKC_ERR_INVALID);
			CHECK(err.msg[0] != '\0');
			CHECK(zeroed(&dsn));
		}
	}
	/* The mutations must exercise both outcomes, or the loop tests nothing. */
	CHECK(ok > 100);
	CHECK(bad > 100);
}

typedef struct {
	const char *list;
	int default_port;
	size_t n;
	/* Up to four expected host, port pairs. */
	const char *hosts[4];
	int ports[4];
} hosts_case;

static const hosts_case hosts_valid[] = {
	{ "h1", 26379, 1, { "h1" }, { 26379 } },
	{ "h1:7000,h2:7001", 6379, 2, { "h1", "h2" }, { 7000, 7001 } },
	{ "h1:1,h2,h3:65535", 26379, 3, { "h1", "h2", "h3" }, { 1, 26379, 65535 } },
	{ "[::1]:7000,[fe80::1],10.0.0.1", 6379, 3, { "::1", "fe80::1", "10.0.0.1" }, { 7000, 6379, 6379 } },
	/* Same name on another port, or another name on the same port: two servers. */
	{ "h:7000,h:7001,H2:7000", 6379, 3, { "h", "h", "H2" }, { 7000, 7001, 7000 } },
	{ "h,h:6380", 6379, 2, { "h", "h" }, { 6379, 6380 } },
};

static void splits_host_lists(void)
{
	for (size_t i = 0; i < sizeof(hosts_valid) / sizeof(hosts_valid[0]); i++) {
		const hosts_case *c = &hosts_valid[i];
		lkc_redis_addr *addrs = NULL;
		size_t n = 0;
		lkc_err err;

		lkc_err_clear(&err);
		CHECK_RC(lkc_dsn_hosts(c->list, c->default_port, "redis+cluster DSN", &addrs, &n, &err), LKC_OK, &err);
		CHECK(n == c->n);
		for (size_t k = 0; k < n && k < c->n; k++) {
			CHECK(same(addrs[k].host, c->hosts[k]));
			CHECK(addrs[k].port == c->ports[k]);
		}
		if (n != c->n) {
			fprintf(stderr, "  list: %s -> %zu hosts\n", c->list, n);
		}
		lkc_dsn_hosts_free(addrs, n);
	}
	lkc_dsn_hosts_free(NULL, 0);
}

typedef struct {
	const char *list;
	const char *says;
} hosts_invalid_case;

static const hosts_invalid_case hosts_invalid[] = {
	{ NULL, "redis+cluster DSN names no host" },
	{ "", "redis+cluster DSN names no host" },
	{ ",", "redis+cluster DSN's host 1 is empty" },
	{ "h1,", "redis+cluster DSN's host 2 is empty" },
	{ "h1,,h2", "redis+cluster DSN's host 2 is empty" },
	{ ",h1", "redis+cluster DSN's host 1 is empty" },
	{ "h1,:7000", "redis+cluster DSN's host 2 has a port but no host" },
	{ "h1,h2:0", "redis+cluster DSN's host 2 has an invalid port at offset 3" },
	{ "h1:65536,h2", "redis+cluster DSN's host 1 has an invalid port" },
	{ "h1:x,h2", "redis+cluster DSN's host 1 has an invalid port" },
	{ "h1,h2:", "redis+cluster DSN's host 2 has an empty port" },
	{ "h1,::1", "redis+cluster DSN's host 2 has more than one ':'" },
	{ "h1,[::1", "redis+cluster DSN's host 2 has an IPv6 address without its closing ']'" },
	{ "h1,[::1]x", "redis+cluster DSN's host 2 has an unexpected character after the IPv6 address" },
	{ "h1,h]2", "redis+cluster DSN's host 2 has a ']' in the host" },
	{ "h1:7000,h2,h1:7000", "redis+cluster DSN's host 3 repeats host 1" },
	{ "h1,H1:6379", "redis+cluster DSN's host 2 repeats host 1" },
	{ "[::1]:7000,[::1]:7000", "redis+cluster DSN's host 2 repeats host 1" },
};

static void rejects_bad_host_lists(void)
{
	for (size_t i = 0; i < sizeof(hosts_invalid) / sizeof(hosts_invalid[0]); i++) {
		const hosts_invalid_case *c = &hosts_invalid[i];
		lkc_redis_addr *addrs = (lkc_redis_addr *) &addrs;
		size_t n = 99;
		lkc_err err;

		lkc_err_clear(&err);
		CHECK_RC(lkc_dsn_hosts(c->list, 6379, "redis+cluster DSN", &addrs, &n, &err), LKC_ERR_INVALID, &err);
		CHECK(addrs == NULL && n == 0);
		CHECK(strstr(err.msg, c->says) != NULL);
		if (strstr(err.msg, c->says) == NULL) {
			fprintf(stderr, "  list #%zu: message \"%s\" lacks \"%s\"\n", i, err.msg, c->says);
		}
	}
}

/* Parses text and reads it into a fresh config; returns the result code, the config to free. */
static lkc_rc config_from(const char *text, lkc_redis_config *cfg, lkc_err *err)
{
	lkc_dsn dsn;
	lkc_rc rc;

	lkc_redis_config_init(cfg);
	lkc_err_clear(err);
	rc = lkc_dsn_parse(text, strlen(text), &dsn, err);
	if (rc != LKC_OK) {
		return rc;
	}
	rc = lkc_redis_config_dsn(cfg, &dsn, err);
	lkc_dsn_free(&dsn);
	return rc;
}

static void reads_redis_dsns_into_config(void)
{
	lkc_redis_config cfg;
	lkc_err err;

	/* One server: the fields the plain redis: DSN always filled, and no topology. */
	CHECK_RC(config_from("redis://u:p@h:6380/2", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_SINGLE && !cfg.tls && cfg.nseeds == 0 && cfg.seeds == NULL);
	CHECK(same(cfg.host, "h") && cfg.port == 6380 && cfg.database == 2 && cfg.socket_path == NULL);
	CHECK(same(cfg.username, "u") && same(cfg.password, "p") && cfg.master_name == NULL);
	CHECK(cfg.tls_verify == 1 && cfg.replicas == 0 && cfg.replicas_timeout_ms == 1000);
	lkc_redis_config_free(&cfg);

	CHECK_RC(config_from("redis:///run/redis.sock", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.host == NULL && same(cfg.socket_path, "/run/redis.sock") && !cfg.tls);
	lkc_redis_config_free(&cfg);

	CHECK_RC(config_from("rediss://[::1]", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_SINGLE && cfg.tls && same(cfg.host, "::1") && cfg.port == 6379);
	lkc_redis_config_free(&cfg);

	CHECK_RC(config_from("REDISS://h:1/0", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.tls && cfg.port == 1 && cfg.database == 0);
	lkc_redis_config_free(&cfg);

	/* Sentinel: the sentinels are seeds on 26379 by default, the credentials the master's. */
	CHECK_RC(config_from("redis+sentinel://u:p%40ss@h1:26380,h2,[::1]/mymaster/3", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_SENTINEL && !cfg.tls && cfg.host == NULL && cfg.socket_path == NULL);
	CHECK(cfg.nseeds == 3);
	if (cfg.nseeds == 3) {
		CHECK(same(cfg.seeds[0].host, "h1") && cfg.seeds[0].port == 26380);
		CHECK(same(cfg.seeds[1].host, "h2") && cfg.seeds[1].port == 26379);
		CHECK(same(cfg.seeds[2].host, "::1") && cfg.seeds[2].port == 26379);
	}
	CHECK(same(cfg.master_name, "mymaster") && cfg.database == 3);
	CHECK(same(cfg.username, "u") && same(cfg.password, "p@ss"));
	CHECK(cfg.sentinel_username == NULL && cfg.sentinel_password == NULL);
	lkc_redis_config_free(&cfg);

	CHECK_RC(config_from("rediss+sentinel://[fe80::2]:5000/m-1.a_b/", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_SENTINEL && cfg.tls && cfg.nseeds == 1 && cfg.database == 0);
	CHECK(cfg.nseeds == 1 && same(cfg.seeds[0].host, "fe80::2") && cfg.seeds[0].port == 5000);
	CHECK(same(cfg.master_name, "m-1.a_b"));
	lkc_redis_config_free(&cfg);

	/* Cluster: the nodes are seeds on 6379 by default; database 0 only. */
	CHECK_RC(config_from("redis+cluster://h1:7000,h2:7001,h3", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_CLUSTER && !cfg.tls && cfg.host == NULL && cfg.nseeds == 3);
	if (cfg.nseeds == 3) {
		CHECK(cfg.seeds[0].port == 7000 && cfg.seeds[1].port == 7001 && cfg.seeds[2].port == 6379);
		CHECK(same(cfg.seeds[2].host, "h3"));
	}
	CHECK(cfg.master_name == NULL && cfg.database == 0);
	lkc_redis_config_free(&cfg);

	CHECK_RC(config_from("rediss+cluster://:pw@node/0", &cfg, &err), LKC_OK, &err);
	CHECK(cfg.topology == LKC_REDIS_CLUSTER && cfg.tls && cfg.nseeds == 1 && cfg.seeds[0].port == 6379);
	CHECK(cfg.username == NULL && same(cfg.password, "pw"));
	lkc_redis_config_free(&cfg);
}

/* The passwords below are all "hunter2"; no message may contain it. */
static const invalid_case config_invalid[] = {
	{ "flock:///tmp", 0, "flock DSN is not a Redis DSN" },
	{ "redis+sentinel+cluster://u:hunter2@h", 0, "redis+sentinel+cluster DSN mixes topologies" },
	{ "rediss+cluster+sentinel://h", 0, "rediss+cluster+sentinel DSN mixes topologies" },
	{ "redis+redlock://h", 0, "redis+redlock DSN mixes topologies or names an unknown one" },
	{ "redisss://h", 0, "redisss DSN mixes topologies or names an unknown one" },
	{ "redis://u:hunter2@h1,h2", 0, "redis DSN names several hosts: a list of hosts needs redis+sentinel: or redis+cluster:" },
	{ "rediss://h1,h2", 0, "rediss DSN names several hosts: a list of hosts needs rediss+sentinel: or rediss+cluster:" },
	{ "redis://", 0, "redis DSN names no host and no unix socket path" },
	{ "redis://:hunter2@", 0, "redis DSN names no host and no unix socket path" },
	{ "rediss:///run/redis.sock", 0, "rediss DSN names a unix socket, which Redis does not serve over TLS" },
	{ "redis://h/x", 0, "redis DSN has a path that is not a database number" },
	{ "redis://h/1234567890", 0, "redis DSN has a path that is not a database number" },
	{ "redis+sentinel:///mymaster", 0, "redis+sentinel DSN names no host: write redis+sentinel://h1:26379,h2,h3/mymaster" },
	{ "redis+sentinel://:hunter2@:26379/mymaster", 0, "redis+sentinel DSN names no host" },
	{ "redis+sentinel://h1,h2", 0, "redis+sentinel DSN names no master: write redis+sentinel://h1:26379,h2,h3/mymaster" },
	{ "redis+sentinel://h1,h2/", 0, "redis+sentinel DSN names no master" },
	{ "rediss+sentinel://h1//0", 0, "rediss+sentinel DSN names no master: write rediss+sentinel://" },
	{ "redis+sentinel://h1/my%20master", 0, "redis+sentinel DSN has a master name with a space, a control byte or a non-ASCII byte at offset 2" },
	{ "redis+sentinel://h1/m%C3%A9", 0, "non-ASCII byte at offset 1" },
	{ "redis+sentinel://h1/m/x", 0, "redis+sentinel DSN has a path after the master name that is not a database number" },
	{ "redis+sentinel://h1/m/1/2", 0, "a path after the master name that is not a database number" },
	{ "redis+sentinel://h1,,h2/m", 0, "redis+sentinel DSN's host 2 is empty" },
	{ "redis+sentinel://u:hunter2@h1,h1:26379/m", 0, "redis+sentinel DSN's host 2 repeats host 1" },
	{ "redis+cluster://", 0, "redis+cluster DSN names no host: write redis+cluster://h1:7000,h2:7001" },
	{ "rediss+cluster:///run/redis.sock", 0, "rediss+cluster DSN names no host: write rediss+cluster://h1:7000,h2:7001" },
	{ "redis+cluster://h1,h2/3", 0, "redis+cluster DSN selects a database other than 0, and Redis Cluster has database 0 only" },
	{ "redis+cluster://h1/x", 0, "redis+cluster DSN has a path that is not a database number" },
	{ "redis+cluster://h1,h2:0", 0, "redis+cluster DSN's host 2 has an invalid port" },
	{ "redis+cluster://h1,:7000", 0, "redis+cluster DSN's host 2 has a port but no host" },
	{ "redis+cluster://h1,", 0, "redis+cluster DSN's host 2 is empty" },
	{ "redis+cluster://u:hunter2@,h1", 0, "redis+cluster DSN's host 1 is empty" },
};

static void rejects_bad_redis_dsns(void)
{
	for (size_t i = 0; i < sizeof(config_invalid) / sizeof(config_invalid[0]); i++) {
		const invalid_case *c = &config_invalid[i];
		lkc_redis_config cfg;
		lkc_err err;

		CHECK_RC(config_from(c->dsn, &cfg, &err), LKC_ERR_INVALID, &err);
		CHECK(strstr(err.msg, "hunter2") == NULL);
		CHECK(strstr(err.msg, c->says) != NULL);
		if (strstr(err.msg, c->says) == NULL) {
			fprintf(stderr, "  dsn #%zu (%s): message \"%s\" lacks \"%s\"\n", i, c->dsn, err.msg, c->says);
		}
		/* Whatever a failure left in the config is freed as usual. */
		lkc_redis_config_free(&cfg);
	}
}

TEST_MAIN(
	T(parses_valid_dsns),
	T(rejects_invalid_dsns),
	T(enforces_length_limit),
	T(reads_only_len_bytes),
	T(free_is_safe_on_empty_structs),
	T(survives_random_input),
	T(splits_host_lists),
	T(rejects_bad_host_lists),
	T(reads_redis_dsns_into_config),
	T(rejects_bad_redis_dsns)
)
