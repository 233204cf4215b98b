/* Unit tests of the PostgreSQL store's parts that need no server: the advisory key of a resource, table names. */
#include "t.h"

#ifdef HAVE_LOCK_PGSQL
#include "../../ext/core/lkc_pgsql_int.h"

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

TEST_MAIN(
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
