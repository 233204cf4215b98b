/* Unit tests of the Memcached store's pure parts: resource keys and server lists (no server needed). */
#include "t.h"


/* Whether key is a valid memcached key: 1 to 250 bytes, no control characters or spaces. */
static int valid_key(const char *key, size_t len)
{
	if (len == 0 || len > 250) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char) key[i];
		if (c <= 0x20 || c == 0x7f) {
			return 0;
		}
	}
	return 1;
}

static void test_key_hex(void)
{
	size_t len;
	char *key = lkc_memcached_key("app:", 4, "a b\n\0", 5, &len);

	CHECK(key != NULL);
	CHECK(len == 4 + 1 + 10);
	CHECK(strcmp(key, "app:x6120620a00") == 0);
	CHECK(valid_key(key, len));
	free(key);
}

static void test_key_hashed_when_long(void)
{
	char prefix[129];
	char *name = malloc(LKC_RESOURCE_MAX);
	size_t len;

	memset(prefix, 'p', sizeof(prefix) - 1);
	prefix[128] = '\0';
	memset(name, 0xff, LKC_RESOURCE_MAX);
	/* The longest prefix and the longest name still make a valid key. */
	for (size_t n = 1; n <= LKC_RESOURCE_MAX; n = n < 200 ? n + 1 : n * 2) {
		char *key = lkc_memcached_key(prefix, 128, name, n, &len);

		CHECK(key != NULL && valid_key(key, len));
		CHECK(key != NULL && key[128] == (128 + 1 + 2 * n <= 250 ? 'x' : 'h'));
		free(key);
	}
	free(name);
}

static void test_key_distinct(void)
{
	/* A name whose hex form would look like another's SHA-256 form stays apart: the tag differs. */
	char longname[200];
	size_t la, lb;
	char *a, *b;

	memset(longname, 'n', sizeof(longname));
	a = lkc_memcached_key("", 0, longname, sizeof(longname), &la);
	b = lkc_memcached_key("", 0, "n", 1, &lb);
	CHECK(a != NULL && b != NULL && a[0] == 'h' && b[0] == 'x');
	CHECK(la != lb || memcmp(a, b, la) != 0);
	free(a);
	free(b);
}

static void test_servers(void)
{
	lkc_memcached_config cfg;
	lkc_err err;

	lkc_memcached_config_init(&cfg);
	CHECK_RC(lkc_memcached_add_servers(&cfg, "h1:11212,h2,[::1]:11213,[::2]", 11211, &err), LKC_OK, &err);
	CHECK(cfg.nservers == 4);
	CHECK(cfg.nservers == 4 && strcmp(cfg.servers[0].host, "h1") == 0 && cfg.servers[0].port == 11212);
	CHECK(cfg.nservers == 4 && strcmp(cfg.servers[1].host, "h2") == 0 && cfg.servers[1].port == 11211);
	CHECK(cfg.nservers == 4 && strcmp(cfg.servers[2].host, "::1") == 0 && cfg.servers[2].port == 11213);
	CHECK(cfg.nservers == 4 && strcmp(cfg.servers[3].host, "::2") == 0 && cfg.servers[3].port == 11211);
	lkc_memcached_config_free(&cfg);

	static const char *const bad[] = {
		"", ",", "h1,", ",h1", "h1:0", "h1:65536", "h1:x", "h1:", ":11211", "h1:1:2", "[::1", "[]:1",
		"[::1]x", "h 1", "h1,h1", "h\x01", "[::1]:99999",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lkc_memcached_config_init(&cfg);
		lkc_err_clear(&err);
		CHECK_RC(lkc_memcached_add_servers(&cfg, bad[i], 11211, &err), LKC_ERR_INVALID, &err);
		CHECK(err.msg[0] != '\0');
		lkc_memcached_config_free(&cfg);
	}
}

/* A malloc'd copy of s (strdup is not C11). */
static char *copy(const char *s)
{
	char *c = malloc(strlen(s) + 1);

	if (c != NULL) {
		memcpy(c, s, strlen(s) + 1);
	}
	return c;
}

static void test_open_checks(void)
{
	lkc_memcached_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_memcached_config_init(&cfg);
	CHECK_RC(lkc_memcached_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	CHECK(store == NULL);
	CHECK_RC(lkc_memcached_add_servers(&cfg, "127.0.0.1:1", 11211, &err), LKC_OK, &err);
	cfg.prefix = copy("a b");
	cfg.prefix_len = 3;
	CHECK_RC(lkc_memcached_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	free(cfg.prefix);
	cfg.prefix = copy("ok:");
	CHECK_RC(lkc_memcached_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(cfg.servers == NULL);
	CHECK(store != NULL && !(store->ops->caps & LKC_CAP_SHARED) && (store->ops->caps & LKC_CAP_EXPIRY));
	if (store != NULL) {
		int locked = 0;

		/* Nothing listens on port 1: an error naming the server, quickly. */
		CHECK_RC(store->ops->is_locked(store, "r", 1, &locked, &err), LKC_ERR_IO, &err);
		CHECK(strstr(err.msg, "Memcached at 127.0.0.1:1: ") == err.msg);
		lkc_store_release(store);
	}
	lkc_memcached_config_free(&cfg);
	lkc_memcached_pool_shutdown();
}

TEST_MAIN(T(test_key_hex), T(test_key_hashed_when_long), T(test_key_distinct), T(test_servers), T(test_open_checks))
