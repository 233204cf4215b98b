/*
 * Unit tests of the MySQL store's parts that need no server (the GET_LOCK name
 * of a resource, the table of table holds, a twin's settings), and of a twin's
 * refresh on the server of LOCK_TEST_MYSQL_DSN when it is set (scripts/test.sh).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"

#ifdef HAVE_LOCK_MYSQL
#include "../../ext/core/lkc_mysql_int.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* The names docs/mysql.md's SQL expression gives (checked against MariaDB 10.11's SHA2()). */
static void name_matches_documented_hash(void)
{
	char name[65];

	CHECK(lkc_my_name("p:", 2, "res", 3, name) == 0);
	CHECK(strcmp(name, "lock:0c17d3dd37f9285e7d4342d74016efb073f35896662ef3ad2f9529602ee") == 0);
	CHECK(lkc_my_name("", 0, "Res", 3, name) == 0);
	CHECK(strcmp(name, "lock:e98c0b76a0a1ecfd742c1fa005d8a05139109ec65948383ba6f8bb6e251") == 0);
	CHECK(strlen(name) == 64);
}

/* Names are 64 lowercase characters whatever the case of the resource, and case variants differ. */
static void names_fit_and_keep_case_apart(void)
{
	char a[65], b[65];

	CHECK(lkc_my_name("", 0, "Orders", 6, a) == 0);
	CHECK(lkc_my_name("", 0, "orders", 6, b) == 0);
	CHECK(strcmp(a, b) != 0);
	for (size_t i = 0; i < 64; i++) {
		CHECK(a[i] != '\0' && !(a[i] >= 'A' && a[i] <= 'Z'));
	}
}

/* The prefix's length is hashed too, and long or binary resources hash whole. */
static void prefix_boundary_and_binary(void)
{
	static char big[LKC_RESOURCE_MAX];
	char a[65], b[65];

	CHECK(lkc_my_name("ab", 2, "c", 1, a) == 0);
	CHECK(lkc_my_name("a", 1, "bc", 2, b) == 0);
	CHECK(strcmp(a, b) != 0);
	memset(big, 'x', sizeof(big));
	CHECK(lkc_my_name("p", 1, big, sizeof(big), a) == 0);
	big[100] = '\0';
	CHECK(lkc_my_name("p", 1, big, sizeof(big), b) == 0);
	CHECK(strcmp(a, b) != 0);
	CHECK(lkc_my_name("p", 1, "a\0b", 3, a) == 0);
	CHECK(lkc_my_name("p", 1, "a\0c", 3, b) == 0);
	CHECK(strcmp(a, b) != 0);
}

/* The table of table holds is an identifier that needs no quoting beyond backquotes: [A-Za-z0-9_$], 1 to 64. */
static void table_names(void)
{
	static const char *good[] = {"lock_holds", "T", "$x", "123", "Lock_$1"};
	static const char *bad[] = {"", "a b", "x`y", "db.t", "t'", "lock-holds", "\xc3\xa9"};
	char long_name[66];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(lkc_my_table_name_ok(good[i], strlen(good[i])));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!lkc_my_table_name_ok(bad[i], strlen(bad[i])));
	}
	CHECK(!lkc_my_table_name_ok("t\0u", 3));
	memset(long_name, 't', sizeof(long_name));
	CHECK(lkc_my_table_name_ok(long_name, 64));
	CHECK(!lkc_my_table_name_ok(long_name, 65));
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

/* A store with table holds needs a database and a good table name; it expires and fences, and is not process-bound. */
static void table_store_config(void)
{
	lkc_my_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_my_config_init(&cfg);
	cfg.host = copy("127.0.0.1");
	cfg.table_holds = 1;
	lkc_err_clear(&err);
	CHECK(lkc_my_open(&store, &cfg, &err) == LKC_ERR_INVALID);
	cfg.dbname = copy("app");
	cfg.table = copy("bad name");
	CHECK(lkc_my_open(&store, &cfg, &err) == LKC_ERR_INVALID);
	free(cfg.table);
	cfg.table = copy("holds_1");
	CHECK(lkc_my_open(&store, &cfg, &err) == LKC_OK);
	CHECK(store->ops->caps == (LKC_CAP_EXPIRY | LKC_CAP_FENCING));
	lkc_store_release(store);
	cfg.table_holds = 0;
	CHECK(lkc_my_open(&store, &cfg, &err) == LKC_OK);
	CHECK(store->ops->caps == (LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND));
	lkc_store_release(store);
	lkc_my_config_free(&cfg);
}

/* The pool key of a persistent store with these credentials (malloc'd), or NULL. */
static char *pool_key_of(const char *user, const char *password, const char *dbname, size_t *len)
{
	lkc_my_config cfg;
	lkc_store *store = NULL;
	lkc_err err;
	char *key = NULL;

	lkc_my_config_init(&cfg);
	cfg.host = copy("127.0.0.1");
	cfg.user = user ? copy(user) : NULL;
	cfg.password = password ? copy(password) : NULL;
	cfg.dbname = dbname ? copy(dbname) : NULL;
	cfg.persistent = 1;
	lkc_err_clear(&err);
	if (lkc_my_open(&store, &cfg, &err) == LKC_OK) {
		const lkc_my_store *s = (const lkc_my_store *) store;

		key = malloc(s->pool_key_len);
		if (key != NULL) {
			memcpy(key, s->pool_key, s->pool_key_len);
			*len = s->pool_key_len;
		}
		lkc_store_release(store);
	}
	lkc_my_config_free(&cfg);
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

/* A store of table holds with these settings (borrowed strings), or NULL with err set. */
static lkc_store *table_store(const char *host, int port, const char *user, const char *password, const char *dbname,
	const char *prefix, size_t prefix_len, int persistent, lkc_err *err)
{
	lkc_my_config cfg;
	lkc_store *store = NULL;

	lkc_my_config_init(&cfg);
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
	cfg.table = "lock_holds";
	lkc_err_clear(err);
	return lkc_my_open(&store, &cfg, err) == LKC_OK ? store : NULL;
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

/* A twin has the store's settings, namespace and table, sessions of its own (never pooled), and refreshes as a twin. */
static void twin_copies_settings(void)
{
	lkc_store *store, *twin = NULL;
	const lkc_my_store *s, *t;
	lkc_my_config cfg;
	lkc_err err;

	store = table_store("127.0.0.1", 3307, "u", "pw", "db", "p\0x", 3, 1, &err);
	CHECK(store != NULL);
	if (store == NULL) {
		return;
	}
	name_space(store);
	CHECK(store->ops->twin != NULL);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	CHECK(twin != NULL && twin != store && twin->ops == store->ops);
	if (twin != NULL) {
		s = (const lkc_my_store *) store;
		t = (const lkc_my_store *) twin;
		CHECK(t->twin == 1 && s->twin == 0 && t->persistent == 0 && t->pool_key == NULL && s->pool_key != NULL);
		CHECK(t->host != NULL && strcmp(t->host, "127.0.0.1") == 0 && t->socket == NULL && t->port == 3307);
		CHECK(strcmp(t->user, "u") == 0 && strcmp(t->password, "pw") == 0 && strcmp(t->dbname, "db") == 0);
		CHECK(strcmp(t->table, "lock_holds") == 0 && t->timeout_ms == 4000 && t->kind == s->kind);
		CHECK(t->prefix_len == 3 && memcmp(t->prefix, "p\0x", 3) == 0);
		CHECK(twin->ns != NULL && twin->ns != store->ns && twin->ns_len == 14 && twin->ns_server_len == 9
			&& memcmp(twin->ns, store->ns, 14) == 0);
		lkc_store_release(twin);
	}
	lkc_store_release(store);
	/* A socket stays a socket. */
	store = table_store("/run/mysqld/x.sock", 3306, NULL, NULL, "db", "", 0, 0, &err);
	CHECK(store != NULL);
	if (store != NULL) {
		twin = NULL;
		CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
		t = (const lkc_my_store *) twin;
		CHECK(t != NULL && t->host == NULL && t->socket != NULL && strcmp(t->socket, "/run/mysqld/x.sock") == 0);
		CHECK(t != NULL && t->user == NULL && t->password == NULL && twin->ns == NULL);
		if (twin != NULL) {
			lkc_store_release(twin);
		}
		lkc_store_release(store);
	}
	/* Session holds do not expire: no twin. */
	lkc_my_config_init(&cfg);
	cfg.host = "127.0.0.1";
	CHECK_RC(lkc_my_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(store->ops->twin == NULL);
	lkc_store_release(store);
	lkc_my_pool_shutdown();
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

/* The store of table holds on LOCK_TEST_MYSQL_DSN's server, with a prefix of this process; NULL when unset. */
static lkc_store *server_store(const char *test)
{
	const char *env = getenv("LOCK_TEST_MYSQL_DSN");
	lkc_store *store;
	char prefix[64];
	lkc_dsn dsn;
	lkc_err err;

	if (env == NULL || env[0] == '\0') {
		fprintf(stderr, "%s: skipped, LOCK_TEST_MYSQL_DSN is not set\n", test);
		return NULL;
	}
	CHECK_RC(lkc_dsn_parse(env, strlen(env), &dsn, &err), LKC_OK, &err);
	snprintf(prefix, sizeof(prefix), "twin-%ld:", (long) getpid());
	store = table_store(dsn.host, dsn.port != 0 ? dsn.port : 3306, dsn.user, dsn.password,
		dsn.path != NULL ? dsn.path + 1 : NULL, prefix, strlen(prefix), 0, &err);
	lkc_dsn_free(&dsn);
	CHECK(store != NULL && store->ops->twin != NULL);
	if (store != NULL && store->ops->twin == NULL) {
		lkc_store_release(store);
		store = NULL;
	}
	if (store != NULL) {
		name_space(store);
	}
	return store;
}

/*
 * A twin's refresh from another thread extends the hold the store took (it is
 * still ours past its first TTL) while the store is in use, and leaves the
 * hold's session marking it; once the hold is broken it answers EXPIRED and
 * takes nothing.
 */
static void twin_refreshes_from_a_thread(void)
{
	lkc_store *store = server_store(__func__), *twin = NULL;
	lkc_hold hold, copy;
	lkc_inspect seen;
	lkc_err err;
	int locked = 1;

	if (store == NULL) {
		return;
	}
	CHECK_RC(lkc_hold_init(&hold, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 300, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	if (twin == NULL || hold.session == NULL) {
		lkc_hold_dispose(&hold);
		lkc_store_release(store);
		return;
	}
	copy = hold;
	copy.session = NULL;
	CHECK_RC(refresh_aside(store, &hold, twin, &copy, 3000, 5, &err), LKC_OK, &err);
	/* The twin kept no session in the copy: the hold's stays the one session of it. */
	CHECK(copy.session == NULL);
	/* Past the first TTL: still ours, with the longer one, and marked by the hold's own session. */
	usleep(500000);
	CHECK_RC(lkc_check(store, &hold, &err), LKC_OK, &err);
	memset(&seen, 0, sizeof(seen));
	CHECK_RC(lkc_inspect_resource(store, "orders/1", 8, &seen, &err), LKC_OK, &err);
	CHECK(seen.mode == LKC_SEEN_WRITE && seen.ttl_ms > 1000 && seen.ttl_ms <= 3000);
	CHECK(hold.session != NULL && seen.holders_known && seen.nholders == 1
		&& seen.holders[0] == (int64_t) mysql_thread_id(((lkc_my_conn *) hold.session)->my));
	lkc_inspect_free(&seen);
	CHECK_RC(store->ops->force_release(store, "orders/1", 8, &err), LKC_OK, &err);
	CHECK_RC(refresh_aside(NULL, NULL, twin, &copy, 3000, 1, &err), LKC_EXPIRED, &err);
	CHECK(copy.session == NULL);
	CHECK_RC(store->ops->is_locked(store, "orders/1", 8, &locked, &err), LKC_OK, &err);
	CHECK(!locked);
	CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&hold);
	lkc_store_release(twin);
	lkc_store_release(store);
}

/*
 * A hold that no session marks any more (its session ended, the row stays) is
 * extended by a twin's refresh without being marked by the twin's session: the
 * GET_LOCK name stays free and the row's conn as it was.
 */
static void twin_refresh_leaves_the_name_alone(void)
{
	lkc_store *store = server_store(__func__), *twin = NULL;
	lkc_hold hold, copy;
	lkc_inspect seen;
	lkc_err err;
	int marked = 1;

	if (store == NULL) {
		return;
	}
	CHECK_RC(lkc_hold_init(&hold, "orders/2", 8, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 2000, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->twin(store, &twin, &err), LKC_OK, &err);
	if (twin == NULL) {
		lkc_hold_dispose(&hold);
		lkc_store_release(store);
		return;
	}
	copy = hold;
	copy.session = NULL;
	/* The hold's session ends; its row stays, until its TTL. */
	lkc_abandon(store, &hold);
	for (int i = 0; i < 200 && marked; i++) {
		memset(&seen, 0, sizeof(seen));
		CHECK_RC(lkc_inspect_resource(store, "orders/2", 8, &seen, &err), LKC_OK, &err);
		marked = seen.holders_known;
		lkc_inspect_free(&seen);
		if (marked) {
			usleep(10000);
		}
	}
	CHECK(!marked);
	CHECK_RC(refresh_aside(NULL, NULL, twin, &copy, 5000, 1, &err), LKC_OK, &err);
	CHECK(copy.session == NULL);
	memset(&seen, 0, sizeof(seen));
	CHECK_RC(lkc_inspect_resource(store, "orders/2", 8, &seen, &err), LKC_OK, &err);
	CHECK(seen.mode == LKC_SEEN_WRITE && seen.ttl_ms > 2000 && !seen.holders_known);
	lkc_inspect_free(&seen);
	CHECK_RC(store->ops->force_release(store, "orders/2", 8, &err), LKC_OK, &err);
	lkc_hold_dispose(&hold);
	lkc_store_release(twin);
	lkc_store_release(store);
}

TEST_MAIN(
	T(twin_copies_settings),
	T(twin_refreshes_from_a_thread),
	T(twin_refresh_leaves_the_name_alone),
	T(pool_keys_keep_identities_apart),
	T(name_matches_documented_hash),
	T(names_fit_and_keep_case_apart),
	T(prefix_boundary_and_binary),
	T(table_names),
	T(table_store_config)
)

#else

static void not_built(void)
{
	/* Without libmariadb the store is not built, and there is nothing to test. */
}

TEST_MAIN(T(not_built))

#endif
