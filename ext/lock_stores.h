/*
 * What the files of the Lock\Store\* classes share: lock_stores.c (the store
 * objects, the option checks and their coercion from strings, the DSN helpers,
 * the SQL stores' shared DSN and options, Factory's DSN dispatch, and the
 * methods every store has), and one file per class, lock_store_<kind>.c.
 */
#ifndef PHP_LOCK_STORES_H
#define PHP_LOCK_STORES_H

#include "php_lock.h"

#define THIS_STORE() php_lock_store_from_obj(Z_OBJ_P(ZEND_THIS))

/* An option of a store constructor: name and accepted type. */
typedef enum { OPT_INT, OPT_FLOAT, OPT_BOOL, OPT_STRING, OPT_NULLABLE_STRING } php_lock_opt_type;

typedef struct {
	const char *name;
	php_lock_opt_type type;
} php_lock_opt;

/* The options of the stores on one machine (FlockStore, SemaphoreStore): permissions of what they create, idle files or sets kept. */
extern const php_lock_opt php_lock_local_options[];

#if defined(HAVE_LOCK_PGSQL) || defined(HAVE_LOCK_MYSQL)
/* What tells the PostgreSQL store's DSN and options from the MySQL store's; the rest they share. */
typedef struct {
	bool (*scheme_ok)(const char *scheme);
	const char *scheme;          /* the scheme messages name */
	const char *socket;          /* what a host starting with '/' is */
	const char *socket_dsn;      /* a DSN with one, for the message of a DSN with no host */
	bool socket_port;            /* whether a socket may come with a port (PostgreSQL names its socket file by it) */
	int (*table_ok)(const char *name, size_t len);
	const char *table_rule;      /* what table_ok accepts, for its message */
	void (*init)(lkc_sql_config *cfg);
	void (*free)(lkc_sql_config *cfg);
} php_lock_sql_kind;

/* Reads the DSN, then the options over it, into cfg (set up here); false when it threw, cfg then freed. */
bool php_lock_sql_config(const php_lock_sql_kind *k, lkc_sql_config *cfg, zend_string *dsn, HashTable *options,
	uint32_t options_arg);
#endif

/* lock_stores.c */
/* Gives the open store its namespace (lkc_store_same); out of memory it has none. */
void php_lock_store_set_ns(php_lock_store_obj *obj, const char *ns, size_t len, size_t server_len);
/* Checks an options array against the known keys and types; false when it threw. */
bool php_lock_options_check(HashTable *options, const php_lock_opt *known, uint32_t arg_num);
/* The value of a checked option, or NULL when absent. */
zval *php_lock_option(HashTable *options, const char *name);
/* Reads the "mode" option: permissions 0 to 0777; false when it threw. */
bool php_lock_mode_option(HashTable *options, uint32_t arg_num, int *mode);
/* Reads the "cache" option (at most max), or def; false when it threw. */
bool php_lock_cache_option(HashTable *options, uint32_t arg_num, zend_long max, zend_long def, zend_long *cache);
/* Replaces a config string with a copy of value (NULL clears it). */
void php_lock_set_str(char **slot, const char *value, size_t len);
/* Converts a DSN query value to the type its option takes; false when it threw. */
bool php_lock_query_value(const php_lock_opt *opt, const char *text, zval *out, uint32_t arg_num);
/* Takes string options where PHP would (Symfony's %env()%); *options then points at a copy. */
void php_lock_options_coerce(HashTable **options, HashTable **coerced, const php_lock_opt *known);
/* Releases what php_lock_options_coerce copied, if anything. */
void php_lock_options_release(HashTable *coerced);
/* Throws the ValueError of the unknown DSN query parameter i. */
void php_lock_unknown_query(uint32_t arg_num, const lkc_dsn *parsed, size_t i, const php_lock_opt *known_opts);
/* The options of PostgresStore and MysqlStore, NULL when neither was built. */
const php_lock_opt *php_lock_sql_known(void);
/* isLocked() (force == false) and forceRelease() (force == true) of every store. */
void php_lock_store_resource_op(INTERNAL_FUNCTION_PARAMETERS, bool force);
/* waitUntilFree() of every store. */
void php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAMETERS);
/* inspect(): what the store knows of a resource now. */
void php_lock_store_inspect(INTERNAL_FUNCTION_PARAMETERS);
/* supports() of every store. */
void php_lock_store_supports(INTERNAL_FUNCTION_PARAMETERS);

/* lock_store_flock.c */
/* Opens a flock store on directory (NULL: the system temp dir) into obj; false when it threw. */
bool php_lock_flock_init(php_lock_store_obj *obj, const char *directory, HashTable *options, uint32_t options_arg);

/* lock_store_sem.c */
/* Opens a semaphore store into obj; false when it threw. */
bool php_lock_sem_init(php_lock_store_obj *obj, HashTable *options, uint32_t options_arg);

/* lock_store_redis.c */
/* Whether a scheme is RedisStore's: redis, rediss, and either with a "+topology". */
bool php_lock_redis_scheme(const char *scheme);
/* Opens a redis store from a DSN and an options array into obj; false when it threw. */
bool php_lock_redis_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg);

/* lock_store_combined.c */
/* Opens a combined store from a redlock: DSN (parsed) into obj, one RedisStore per host; false when it threw. */
bool php_lock_redlock_init(php_lock_store_obj *obj, zend_string *dsn, const lkc_dsn *parsed, uint32_t arg_num);

/* lock_store_pgsql.c */
/* Whether scheme names the PostgreSQL store. */
bool php_lock_pg_scheme(const char *scheme);
/* Opens a PostgreSQL store from a DSN and an options array into obj; false when it threw. */
bool php_lock_pg_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg);

/* lock_store_mysql.c */
/* Whether scheme names the MySQL store. */
bool php_lock_my_scheme(const char *scheme);
/* Opens a MySQL store from a DSN and an options array into obj; false when it threw. */
bool php_lock_my_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg);

/* lock_store_memcached.c */
/* Opens a memcached store from a DSN and an options array into obj (built without libmemcached: throws); false when it threw. */
bool php_lock_memcached_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg);

#endif
