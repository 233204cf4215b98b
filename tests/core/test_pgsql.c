/*
 * Unit tests of the PostgreSQL store's parts that need no server (the advisory
 * key of a resource, table names, a twin's settings), and of a twin's refresh
 * on the server of LOCK_TEST_PGSQL_DSN when it is set (scripts/test.sh).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"

#ifdef HAVE_LOCK_PGSQL
#include "../../ext/core/lkc_pgsql_int.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* The keys docs/pgsql.md's SQL expression gives (checked against PostgreSQL 15's sha256()). */
static void key_matches_documented_hash(void)
{
	int64_t key = 0;

	CHECK(lkc_pg_key("app:", 4, "orders/42", 9, &key) == 0);
	CHECK(key == INT64_C(-8356158869925860602));
	CHECK(lkc_pg_key("", 0, "r", 1, &key) == 0);
	CHECK(key == INT64_C(-5058245414877925777));
}

/* The prefix's length is hashed too: moving bytes between prefix and resource changes the key. */
static void prefix_boundary_changes_the_key(void)
{
	int64_t a = 0, b = 0;

	CHECK(lkc_pg_key("ab", 2, "c", 1, &a) == 0);
	CHECK(lkc_pg_key("a", 1, "bc", 2, &b) == 0);
	CHECK(a != b);
}

/* A resource of 64 KiB (beyond the stack buffer) hashes, with NUL bytes counted. */
static void long_and_binary_resources(void)
{
	static char big[LKC_RESOURCE_MAX];
	int64_t a = 0, b = 0;

	memset(big, 'x', sizeof(big));
	CHECK(lkc_pg_key("p", 1, big, sizeof(big), &a) == 0);
	big[100] = '\0';
	CHECK(lkc_pg_key("p", 1, big, sizeof(big), &b) == 0);
	CHECK(a != b);
	CHECK(lkc_pg_key("p", 1, "a\0b", 3, &a) == 0);
	CHECK(lkc_pg_key("p", 1, "a\0c", 3, &b) == 0);
	CHECK(a != b);
}

/* Table mode's table names: an identifier, or two joined by a dot; nothing that would need quoting inside quotes. */
static void table_names(void)
{
	static const char *const good[] = { "lock_holds", "_x", "x$1", "Schema_1.t_2", "a.b" };
	static const char *const bad[] = { "", "1x", "$x", "a b", "a.b.c", ".a", "a.", "a..b", "\"a\"", "a;b", "a-b", "\xc3\xa4" };
	char name[64 + 1 + 64 + 1];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(lkc_pg_table_name_check(good[i], strlen(good[i])));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!lkc_pg_table_name_check(bad[i], strlen(bad[i])));
	}
	/* A NUL byte inside ends nothing: the length counts. */
	CHECK(!lkc_pg_table_name_check("a\0b", 3));
	/* 63 bytes a part, the server's limit; 64 would be cut short there. */
	memset(name, 't', 63);
	CHECK(lkc_pg_table_name_check(name, 63));
	memset(name, 't', 64);
	CHECK(!lkc_pg_table_name_check(name, 64));
	memset(name, 's', 63);
	name[63] = '.';
	memset(name + 64, 't', 63);
	CHECK(lkc_pg_table_name_check(name, 127));
}

/* A malloc'd copy (strdup is not C11). */
static char *copy(const char *s)
{
	char *out = malloc(strlen(s) + 1);

	if (out != NULL) {
		memcpy(out, s, strlen(s) + 1);
	}
	return out;
}

/* The pool key of a persistent store with these credentials (malloc'd), or NULL. */
static char *pool_key_of(const char *user, const char *password, const char *dbname, size_t *len)
{
	lkc_pg_config cfg;
	lkc_store *store = NULL;
	lkc_err err;
	char *key = NULL;

	lkc_pg_config_init(&cfg);
	cfg.host = copy("127.0.0.1");
	cfg.user = user ? copy(user) : NULL;
	cfg.password = password ? copy(password) : NULL;
	cfg.dbname = dbname ? copy(dbname) : NULL;
	cfg.persistent = 1;
	lkc_err_clear(&err);
	if (lkc_pg_open(&store, &cfg, &err) == LKC_OK) {
		const lkc_pg_store *s = (const lkc_pg_store *) store;

		key = malloc(s->pool_key_len);
		if (key != NULL) {
			memcpy(key, s->pool_key, s->pool_key_len);
			*len = s->pool_key_len;
		}
		lkc_store_release(store);
	}
	lkc_pg_config_free(&cfg);
	return key;
}

/* Pooled sessions are keyed by their whole identity: no two sets of credentials make one key. */
static void pool_keys_keep_identities_apart(void)
{
	char *keys[T_POOL_IDENTITIES];
	size_t lens[T_POOL_IDENTITIES];

	for (size_t i = 0; i < T_POOL_IDENTITIES; i++) {
		keys[i] = pool_key_of(t_pool_identity(i, 0), t_pool_identity(i, 1), t_pool_identity(i, 2), &lens[i]);
	}
	t_check_distinct_keys(keys, lens, T_POOL_IDENTITIES);
}

/* A table-mode store with these settings (borrowed strings), or NULL with err set. */
static lkc_store *table_store(const char *host, int port, const char *user, const char *password, const char *dbname,
	const char *prefix, size_t prefix_len, int persistent, lkc_err *err)
{
	lkc_pg_config cfg;
	lkc_store *store = NULL;

	lkc_pg_config_init(&cfg);
	cfg.host = (char *) host;
	cfg.port = port;
	cfg.user = (char *) user;
	cfg.password = (char *) password;
	cfg.dbname = (char *) dbname;
	cfg.prefix = (char *) prefix;
	cfg.prefix_len = prefix_len;
	cfg.timeout_ms = 4000;
	cfg.persistent = persistent;
	cfg.table_holds = 1;
	cfg.table = "public.lock_holds";
	lkc_err_clear(err);
	return lkc_pg_open(&store, &cfg, err) == LKC_OK ? store : NULL;
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

/* A twin has the store's settings, namespace and table mode, and connections of its own: never pooled. */
static void twin_copies_settings(void)
{
	lkc_store *store, *twin = NULL;
	const lkc_pg_store *s, *t;
	lkc_pg_config cfg;
	lkc_err err;

	store = table_store("127.0.0.1", 5433, "u", "pw", "db", "p\0x", 3, 1, &err);
	CHECK(store != NULL);
	if (store == NULL) {
		return;
	}
	name_space(store);
	CHECK(store->ops->twin != NULL);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	CHECK(twin != NULL && twin != store && twin->ops == store->ops);
	if (twin != NULL) {
		s = (const lkc_pg_store *) store;
		t = (const lkc_pg_store *) twin;
		CHECK(t->persistent == 0 && t->pool_key == NULL && s->pool_key != NULL);
		CHECK(strcmp(t->host, s->host) == 0 && strcmp(t->port, "5433") == 0 && strcmp(t->user, "u") == 0);
		CHECK(strcmp(t->password, "pw") == 0 && strcmp(t->dbname, "db") == 0 && t->timeout_ms == 4000);
		CHECK(t->prefix_len == 3 && memcmp(t->prefix, "p\0x", 3) == 0);
		CHECK(t->table != NULL && strcmp(lkc_pg_endpoint(twin), "127.0.0.1:5433") == 0);
		CHECK(twin->ns != NULL && twin->ns != store->ns && twin->ns_len == 14 && twin->ns_server_len == 9
			&& memcmp(twin->ns, store->ns, 14) == 0);
		lkc_store_release(twin);
	}
	lkc_store_release(store);
	/* Session holds do not expire: no twin. */
	lkc_pg_config_init(&cfg);
	cfg.host = "127.0.0.1";
	CHECK_RC(lkc_pg_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(store->ops->twin == NULL);
	lkc_store_release(store);
	lkc_pg_pool_shutdown();
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
 * Refreshes copy (a copy of hold without its session) times times through twin
 * on a thread, while this thread checks hold through store (NULL: no checks);
 * answers the thread's last result, its error in *err.
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
 * still ours past its first TTL) while the store is in use; once the hold is
 * broken it answers EXPIRED and takes nothing.
 */
static void twin_refreshes_from_a_thread(void)
{
	const char *env = getenv("LOCK_TEST_PGSQL_DSN");
	lkc_store *store = NULL, *twin = NULL;
	lkc_hold hold, copy;
	lkc_inspect seen;
	char prefix[64];
	lkc_dsn dsn;
	lkc_err err;
	int locked = 1;

	if (env == NULL || env[0] == '\0') {
		fprintf(stderr, "twin_refreshes_from_a_thread: skipped, LOCK_TEST_PGSQL_DSN is not set\n");
		return;
	}
	CHECK_RC(lkc_dsn_parse(env, strlen(env), &dsn, &err), LKC_OK, &err);
	snprintf(prefix, sizeof(prefix), "twin-%ld:", (long) getpid());
	store = table_store(dsn.host, dsn.port != 0 ? dsn.port : 5432, dsn.user, dsn.password,
		dsn.path != NULL ? dsn.path + 1 : NULL, prefix, strlen(prefix), 0, &err);
	lkc_dsn_free(&dsn);
	CHECK(store != NULL);
	if (store == NULL) {
		return;
	}
	name_space(store);
	CHECK_RC(lkc_hold_init(&hold, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 300, 0, &err), LKC_OK, &err);
	CHECK(store->ops->twin != NULL);
	if (store->ops->twin != NULL) {
		CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	}
	if (twin == NULL) {
		lkc_hold_dispose(&hold);
		lkc_store_release(store);
		return;
	}
	copy = hold;
	copy.session = NULL;
	CHECK_RC(refresh_aside(store, &hold, twin, &copy, 3000, 5, &err), LKC_OK, &err);
	/* Past the first TTL: still ours, with the longer one. */
	usleep(500000);
	CHECK_RC(lkc_check(store, &hold, &err), LKC_OK, &err);
	memset(&seen, 0, sizeof(seen));
	CHECK_RC(lkc_inspect_resource(store, "orders/1", 8, &seen, &err), LKC_OK, &err);
	CHECK(seen.mode == LKC_SEEN_WRITE && seen.ttl_ms > 1000 && seen.ttl_ms <= 3000);
	lkc_inspect_free(&seen);
	CHECK_RC(store->ops->force_release(store, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(refresh_aside(NULL, NULL, twin, &copy, 3000, 1, &err), LKC_EXPIRED, &err);
	CHECK_RC(store->ops->is_locked(store, "orders/1", 8, &locked, &err), LKC_OK, &err);
	CHECK(!locked);
	CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&hold);
	lkc_store_release(twin);
	lkc_store_release(store);
}

TEST_MAIN(
	T(twin_copies_settings),
	T(twin_refreshes_from_a_thread),
	T(pool_keys_keep_identities_apart),
	T(key_matches_documented_hash),
	T(prefix_boundary_changes_the_key),
	T(long_and_binary_resources),
	T(table_names)
)

#else

static void not_built(void)
{
	/* Without libpq the store is not built, and there is nothing to test. */
}

TEST_MAIN(T(not_built))

#endif
