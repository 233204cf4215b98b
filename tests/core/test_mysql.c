/* Unit tests of the MySQL store's parts that need no server: the GET_LOCK name of a resource, the table of table holds. */
#include "t.h"

#ifdef HAVE_LOCK_MYSQL
#include "../../ext/core/lkc_mysql_int.h"

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

TEST_MAIN(
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
