/*
 * Unit tests of the Memcached store's pure parts (resource keys, server lists,
 * a twin's settings: no server needed), and of a twin's refresh on the server
 * of LOCK_TEST_MEMCACHED_PORT when it is set (scripts/test.sh).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>


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

/* A store on servers (a list) with prefix and persistent, or NULL with err set. */
static lkc_store *open_store(const char *servers, const char *prefix, int persistent, lkc_err *err)
{
	lkc_memcached_config cfg;
	lkc_store *store = NULL;

	lkc_memcached_config_init(&cfg);
	lkc_err_clear(err);
	if (lkc_memcached_add_servers(&cfg, servers, 11211, err) == LKC_OK) {
		cfg.prefix = copy(prefix);
		cfg.prefix_len = strlen(prefix);
		cfg.timeout_ms = 2000;
		cfg.persistent = persistent;
		lkc_memcached_open(&store, &cfg, err);
	}
	lkc_memcached_config_free(&cfg);
	return store;
}

/* Gives store a namespace of its own (as the host does), the first 9 bytes naming the server. */
static void name_space(lkc_store *store)
{
	store->ns = malloc(16);
	if (store->ns != NULL) {
		memcpy(store->ns, "127.0.0.1\0db:p", 14);
		store->ns_len = 14;
		store->ns_server_len = 9;
	}
}

/* A twin has the store's namespace, and its servers, prefix and hashing: a resource's key goes to the same server. */
static void twin_copies_settings(void)
{
	lkc_store *store, *twin = NULL;
	char first[sizeof(((lkc_err *) 0)->msg)];
	lkc_err err;
	int locked = 0;

	store = open_store("127.0.0.1:1,127.0.0.2:1,[::1]:1", "p:", 1, &err);
	CHECK(store != NULL);
	if (store == NULL) {
		return;
	}
	name_space(store);
	CHECK(store->ops->twin != NULL);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	CHECK(twin != NULL && twin != store && twin->ops == store->ops);
	if (twin != NULL) {
		CHECK(twin->ns != NULL && twin->ns != store->ns && twin->ns_len == 14 && twin->ns_server_len == 9
			&& memcmp(twin->ns, store->ns, 14) == 0);
		/* Nothing listens on port 1: each message names the server the resource's key went to. */
		for (int i = 0; i < 8; i++) {
			char resource[16];

			snprintf(resource, sizeof(resource), "r%d", i);
			CHECK_RC(store->ops->is_locked(store, resource, strlen(resource), &locked, &err), LKC_ERR_IO, &err);
			memcpy(first, err.msg, sizeof(first));
			CHECK_RC(twin->ops->is_locked(twin, resource, strlen(resource), &locked, &err), LKC_ERR_IO, &err);
			CHECK(strcmp(first, err.msg) == 0);
		}
		lkc_store_release(twin);
	}
	lkc_store_release(store);
	lkc_memcached_pool_shutdown();
}

/* Refreshes through a twin from a thread of its own, as the auto-refresh thread does. */
typedef struct {
	lkc_store *twin;
	lkc_hold *hold;
	int64_t ttl_ms;
	int times;
	int done;
	lkc_rc rc;
	lkc_err err;
} refresh_job;

static void *refresh_thread(void *arg)
{
	refresh_job *job = arg;
	sigset_t all;

	/* As the auto-refresh thread runs: every signal blocked, no host. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	lkc_thread_without_host();
	job->rc = LKC_OK;
	for (int i = 0; i < job->times && job->rc == LKC_OK; i++) {
		lkc_err_clear(&job->err);
		job->rc = job->twin->ops->refresh(job->twin, job->hold, job->ttl_ms, &job->err);
	}
	__atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Refreshes copy (a copy of hold) times times through twin on a thread, while
 * this thread checks hold through store (NULL: no checks); answers the
 * thread's last result, its error in *err.
 */
static lkc_rc refresh_aside(lkc_store *store, lkc_hold *hold, lkc_store *twin, lkc_hold *copy, int64_t ttl_ms,
	int times, lkc_err *err)
{
	refresh_job job = { .twin = twin, .hold = copy, .ttl_ms = ttl_ms, .times = times };
	pthread_t thread;

	if (pthread_create(&thread, NULL, refresh_thread, &job) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "cannot start a thread");
	}
	while (store != NULL && !__atomic_load_n(&job.done, __ATOMIC_ACQUIRE)) {
		lkc_err mine;

		lkc_err_clear(&mine);
		CHECK_RC(lkc_check(store, hold, &mine), LKC_OK, &mine);
	}
	pthread_join(thread, NULL);
	*err = job.err;
	return job.rc;
}

/*
 * A twin's refresh from another thread extends the hold the store took (it is
 * still there past the server's end of its first TTL, 3 s at most for 300 ms:
 * memcached counts whole seconds) while the store is in use; once the hold is
 * broken it answers EXPIRED and takes nothing.
 */
static void twin_refreshes_from_a_thread(void)
{
	const char *env = getenv("LOCK_TEST_MEMCACHED_PORT");
	lkc_store *store, *twin = NULL;
	char servers[64], prefix[64];
	lkc_hold hold, copy;
	lkc_err err;
	int locked = 1;

	if (env == NULL || env[0] == '\0') {
		fprintf(stderr, "twin_refreshes_from_a_thread: skipped, LOCK_TEST_MEMCACHED_PORT is not set\n");
		return;
	}
	snprintf(servers, sizeof(servers), "127.0.0.1:%s", env);
	snprintf(prefix, sizeof(prefix), "twin-%ld:", (long) getpid());
	store = open_store(servers, prefix, 0, &err);
	CHECK(store != NULL && store->ops->twin != NULL);
	if (store == NULL || store->ops->twin == NULL) {
		if (store != NULL) {
			lkc_store_release(store);
		}
		return;
	}
	CHECK_RC(lkc_hold_init(&hold, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 300, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	if (twin == NULL) {
		lkc_hold_dispose(&hold);
		lkc_store_release(store);
		return;
	}
	copy = hold;
	CHECK_RC(refresh_aside(store, &hold, twin, &copy, 6000, 5, &err), LKC_OK, &err);
	sleep(3);
	usleep(300000);
	CHECK_RC(lkc_check(store, &hold, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(refresh_aside(NULL, NULL, twin, &copy, 6000, 1, &err), LKC_EXPIRED, &err);
	CHECK_RC(store->ops->is_locked(store, "orders/1", 8, &locked, &err), LKC_OK, &err);
	CHECK(!locked);
	CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&hold);
	lkc_store_release(twin);
	lkc_store_release(store);
}

TEST_MAIN(T(test_key_hex), T(test_key_hashed_when_long), T(test_key_distinct), T(test_servers), T(test_open_checks),
	T(twin_copies_settings), T(twin_refreshes_from_a_thread))
