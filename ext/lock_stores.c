/* Lock\Store\FlockStore, SemaphoreStore, RedisStore, PostgresStore and MysqlStore: PHP handles on core stores. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "ext/standard/file.h"
#include "main/php_open_temporary_file.h"
#include "zend_exceptions.h"
#include "zend_smart_str.h"

#include <fcntl.h>
#include <sys/stat.h>

zend_class_entry *php_lock_ce_flock_store;
zend_class_entry *php_lock_ce_semaphore_store;
zend_class_entry *php_lock_ce_redis_store;
zend_class_entry *php_lock_ce_postgres_store;
zend_class_entry *php_lock_ce_mysql_store; /* MySQL store */

static zend_object_handlers php_lock_store_handlers;

#define THIS_STORE() php_lock_store_from_obj(Z_OBJ_P(ZEND_THIS))

/* Permissions of what a store creates: owner-only unless asked. */
#define PHP_LOCK_DEFAULT_MODE 0600

static zend_object *php_lock_store_create(zend_class_entry *ce)
{
	php_lock_store_obj *obj = zend_object_alloc(sizeof(php_lock_store_obj), ce);

	zend_object_std_init(&obj->std, ce);
	object_properties_init(&obj->std, ce);
	obj->std.handlers = &php_lock_store_handlers;
	return &obj->std;
}

static void php_lock_store_free(zend_object *object)
{
	php_lock_store_obj *obj = php_lock_store_from_obj(object);

	if (obj->store) {
		/* Lock objects may still use the core store: the last of them destroys it. */
		lkc_store_release(obj->store);
		obj->store = NULL;
	}
	zend_object_std_dtor(&obj->std);
}

/* Refuses a store whose constructor did not run, or ran twice. */
static bool php_lock_store_ready(php_lock_store_obj *obj)
{
	if (obj->store == NULL) {
		zend_throw_error(NULL, "%s object is not initialized", ZSTR_VAL(obj->std.ce->name));
		return false;
	}
	return true;
}

/*
 * Gives the open store its namespace (lkc_store_same): what tells the servers, databases
 * and prefixes of two stores of one kind apart. Out of memory it has none, as a
 * semaphore store has none.
 */
static void php_lock_store_set_ns(php_lock_store_obj *obj, const char *ns, size_t len, size_t server_len)
{
	obj->store->ns = malloc(len);
	if (obj->store->ns != NULL) {
		memcpy(obj->store->ns, ns, len);
		obj->store->ns_len = len;
		obj->store->ns_server_len = server_len;
	}
}

/* An option of a store constructor: name and accepted type. */
typedef enum { OPT_INT, OPT_FLOAT, OPT_BOOL, OPT_STRING, OPT_NULLABLE_STRING } php_lock_opt_type;

typedef struct {
	const char *name;
	php_lock_opt_type type;
} php_lock_opt;

static const char *php_lock_opt_type_name(php_lock_opt_type type)
{
	switch (type) {
		case OPT_INT: return "int";
		case OPT_FLOAT: return "float";
		case OPT_BOOL: return "bool";
		case OPT_STRING: return "string";
		default: return "?string";
	}
}

/*
 * Checks an options array against the known keys and types; unknown keys are
 * a ValueError and wrong types a TypeError, naming the key.
 */
static bool php_lock_options_check(HashTable *options, const php_lock_opt *known, uint32_t arg_num)
{
	zend_string *key;
	zend_ulong index;
	zval *value;

	ZEND_HASH_FOREACH_KEY_VAL(options, index, key, value) {
		const php_lock_opt *opt = NULL;
		bool ok;

		if (key == NULL) {
			zend_argument_value_error(arg_num, "must contain only string keys, " ZEND_ULONG_FMT " given", index);
			return false;
		}
		for (const php_lock_opt *o = known; o->name; o++) {
			if (zend_string_equals_cstr(key, o->name, strlen(o->name))) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			zend_argument_value_error(arg_num, "contains unknown option \"%s\"", ZSTR_VAL(key));
			return false;
		}
		ZVAL_DEREF(value);
		switch (opt->type) {
			case OPT_INT: ok = Z_TYPE_P(value) == IS_LONG; break;
			case OPT_FLOAT: ok = Z_TYPE_P(value) == IS_DOUBLE || Z_TYPE_P(value) == IS_LONG; break;
			case OPT_BOOL: ok = Z_TYPE_P(value) == IS_TRUE || Z_TYPE_P(value) == IS_FALSE; break;
			case OPT_STRING: ok = Z_TYPE_P(value) == IS_STRING; break;
			default: ok = Z_TYPE_P(value) == IS_STRING || Z_TYPE_P(value) == IS_NULL; break;
		}
		if (!ok) {
			zend_argument_type_error(arg_num, "option \"%s\" must be of type %s, %s given",
				ZSTR_VAL(key), php_lock_opt_type_name(opt->type), zend_zval_type_name(value));
			return false;
		}
	} ZEND_HASH_FOREACH_END();
	return true;
}

/* The value of a checked option, or NULL when absent. */
static zval *php_lock_option(HashTable *options, const char *name)
{
	zval *value = options ? zend_hash_str_find(options, name, strlen(name)) : NULL;

	if (value) {
		ZVAL_DEREF(value);
	}
	return value;
}

/* Reads the "mode" option: permissions 0 to 0777. */
static bool php_lock_mode_option(HashTable *options, uint32_t arg_num, int *mode)
{
	zval *value = php_lock_option(options, "mode");

	*mode = PHP_LOCK_DEFAULT_MODE;
	if (value == NULL) {
		return true;
	}
	if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > 0777) {
		zend_argument_value_error(arg_num, "option \"mode\" must be between 0 and 0777");
		return false;
	}
	*mode = (int) Z_LVAL_P(value);
	return true;
}

/* The options of the stores on one machine: permissions of what they create, idle files or sets kept. */
static const php_lock_opt php_lock_local_options[] = {
	{"mode", OPT_INT},
	{"cache", OPT_INT},
	{NULL, OPT_INT},
};

/* Reads the "cache" option (at most max idle lock files or semaphore sets kept) into *cache, or def; false when it threw. */
static bool php_lock_cache_option(HashTable *options, uint32_t arg_num, zend_long max, zend_long def, zend_long *cache)
{
	zval *value = php_lock_option(options, "cache");

	*cache = def;
	if (value == NULL) {
		return true;
	}
	if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > max) {
		zend_argument_value_error(arg_num, "option \"cache\" must be between 0 and " ZEND_LONG_FMT, max);
		return false;
	}
	*cache = Z_LVAL_P(value);
	return true;
}

/* Opens a flock store on directory (NULL: the system temp dir) into obj; false when it threw. */
static bool php_lock_flock_init(php_lock_store_obj *obj, const char *directory, HashTable *options, uint32_t options_arg)
{
	zend_long cache;
	lkc_err err;
	int mode;

	if (options && !php_lock_options_check(options, php_lock_local_options, options_arg)) {
		return false;
	}
	/* Idle lock files kept open, so that a repeated cycle on one name needs no open(). */
	if (!php_lock_mode_option(options, options_arg, &mode)
		|| !php_lock_cache_option(options, options_arg, 65536, -1, &cache)) {
		return false;
	}
	if (directory == NULL || directory[0] == '\0') {
		directory = php_get_temporary_directory();
	}
	lkc_err_clear(&err);
	if (lkc_flock_open(&obj->store, directory, mode, &err) != LKC_OK) {
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	if (cache >= 0 && lkc_flock_set_cache(obj->store, (long) cache, &err) != LKC_OK) {
		lkc_store_release(obj->store);
		obj->store = NULL;
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	/* Two FlockStores share their locks when they name one directory, however they spell it. */
	obj->store->ns = realpath(directory, NULL);
	if (obj->store->ns == NULL) {
		obj->store->ns = strdup(directory);
	}
	obj->store->ns_len = obj->store->ns != NULL ? strlen(obj->store->ns) : 0;
	return true;
}

/* Opens a semaphore store into obj; false when it threw. */
static bool php_lock_sem_init(php_lock_store_obj *obj, HashTable *options, uint32_t options_arg)
{
	zend_long cache;
	lkc_err err;
	int mode;

	if (options && !php_lock_options_check(options, php_lock_local_options, options_arg)) {
		return false;
	}
	if (!php_lock_mode_option(options, options_arg, &mode)
		|| !php_lock_cache_option(options, options_arg, LKC_SEM_CACHE_MAX, LKC_SEM_CACHE_DEFAULT, &cache)) {
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_sem_open_cache(&obj->store, mode, (int) cache, &err) != LKC_OK) {
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	return true;
}

static const php_lock_opt php_lock_redis_options[] = {
	{"prefix", OPT_STRING},
	{"timeout", OPT_FLOAT},
	{"persistent", OPT_BOOL},
	{"username", OPT_NULLABLE_STRING},
	{"password", OPT_NULLABLE_STRING},
	{"database", OPT_INT},
	{"fair", OPT_BOOL},
	{"tls_ca_file", OPT_STRING},
	{"tls_ca_dir", OPT_STRING},
	{"tls_cert", OPT_STRING},
	{"tls_key", OPT_STRING},
	{"tls_server_name", OPT_STRING},
	{"tls_verify", OPT_BOOL},
	{"sentinel_username", OPT_NULLABLE_STRING},
	{"sentinel_password", OPT_NULLABLE_STRING},
	{"replicas", OPT_INT},
	{"replicas_timeout", OPT_FLOAT},
	{NULL, OPT_INT},
};

/* Replaces a config string with a copy of value (NULL clears it). */
static void php_lock_set_str(char **slot, const char *value, size_t len)
{
	if (*slot != NULL) {
		/* It may be a password that an option overrides. */
		memset(*slot, 0, strlen(*slot));
	}
	free(*slot);
	*slot = NULL;
	if (value) {
		*slot = malloc(len + 1);
		if (*slot) {
			memcpy(*slot, value, len);
			(*slot)[len] = '\0';
		}
	}
}

/* The config string a tls_* option sets, or NULL for another option. */
static char **php_lock_redis_tls_slot(lkc_redis_config *cfg, const char *name)
{
	if (strcmp(name, "tls_ca_file") == 0) {
		return &cfg->tls_ca_file;
	} else if (strcmp(name, "tls_ca_dir") == 0) {
		return &cfg->tls_ca_dir;
	} else if (strcmp(name, "tls_cert") == 0) {
		return &cfg->tls_cert;
	} else if (strcmp(name, "tls_key") == 0) {
		return &cfg->tls_key;
	} else if (strcmp(name, "tls_server_name") == 0) {
		return &cfg->tls_server_name;
	}
	return NULL;
}

/* Sets a credential (NULL clears it) that must hold no NUL byte; false when it threw. */
static bool php_lock_redis_credential(char **slot, zval *value, uint32_t arg_num, const char *what)
{
	if (Z_TYPE_P(value) == IS_NULL) {
		php_lock_set_str(slot, NULL, 0);
	} else if (memchr(Z_STRVAL_P(value), '\0', Z_STRLEN_P(value)) != NULL) {
		zend_argument_value_error(arg_num, "%s must not contain NUL bytes", what);
		return false;
	} else {
		php_lock_set_str(slot, Z_STRVAL_P(value), Z_STRLEN_P(value));
	}
	return true;
}

/*
 * Applies one redis setting (from the DSN query or the options array) to cfg;
 * false when it threw. The DSN's scheme is read before any setting, so that a
 * TLS or Sentinel setting can tell whether the DSN asks for TLS or sentinels.
 */
static bool php_lock_redis_setting(lkc_redis_config *cfg, const char *name, zval *value, uint32_t arg_num,
	const char *kind)
{
	char what[64];
	char **tls_slot = php_lock_redis_tls_slot(cfg, name);

	snprintf(what, sizeof(what), "%s \"%s\"", kind, name);
	if ((tls_slot != NULL || strcmp(name, "tls_verify") == 0) && !cfg->tls) {
		zend_argument_value_error(arg_num, "%s needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)", what);
		return false;
	}
	if (strncmp(name, "sentinel_", 9) == 0 && cfg->topology != LKC_REDIS_SENTINEL) {
		zend_argument_value_error(arg_num, "%s needs a redis+sentinel: or rediss+sentinel: DSN", what);
		return false;
	}
	if (strcmp(name, "prefix") == 0) {
		php_lock_set_str(&cfg->prefix, Z_STRVAL_P(value), Z_STRLEN_P(value));
		cfg->prefix_len = Z_STRLEN_P(value);
	} else if (strcmp(name, "timeout") == 0 || strcmp(name, "replicas_timeout") == 0) {
		int64_t ms;
		if (!php_lock_duration_to_ms(zval_get_double(value), arg_num, what, false, &ms)) {
			return false;
		}
		if (strcmp(name, "timeout") == 0) {
			cfg->timeout_ms = ms;
		} else {
			cfg->replicas_timeout_ms = ms;
		}
	} else if (strcmp(name, "persistent") == 0) {
		cfg->persistent = zend_is_true(value);
	} else if (strcmp(name, "fair") == 0) {
		cfg->fair = zend_is_true(value);
	} else if (strcmp(name, "tls_verify") == 0) {
		cfg->tls_verify = zend_is_true(value);
	} else if (strcmp(name, "username") == 0 || strcmp(name, "password") == 0) {
		return php_lock_redis_credential(name[0] == 'u' ? &cfg->username : &cfg->password, value, arg_num, what);
	} else if (strcmp(name, "sentinel_username") == 0 || strcmp(name, "sentinel_password") == 0) {
		return php_lock_redis_credential(name[9] == 'u' ? &cfg->sentinel_username : &cfg->sentinel_password,
			value, arg_num, what);
	} else if (tls_slot != NULL) {
		if (Z_STRLEN_P(value) == 0) {
			zend_argument_value_error(arg_num, "%s must not be empty", what);
			return false;
		}
		if (memchr(Z_STRVAL_P(value), '\0', Z_STRLEN_P(value)) != NULL) {
			zend_argument_value_error(arg_num, "%s must not contain NUL bytes", what);
			return false;
		}
		php_lock_set_str(tls_slot, Z_STRVAL_P(value), Z_STRLEN_P(value));
	} else if (strcmp(name, "database") == 0) {
		if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > INT_MAX) {
			zend_argument_value_error(arg_num, "%s must be a non-negative integer", what);
			return false;
		}
		if (cfg->topology == LKC_REDIS_CLUSTER && Z_LVAL_P(value) != 0) {
			zend_argument_value_error(arg_num, "%s must be 0: Redis Cluster has database 0 only", what);
			return false;
		}
		cfg->database = (int) Z_LVAL_P(value);
	} else if (strcmp(name, "replicas") == 0) {
		if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > INT_MAX) {
			zend_argument_value_error(arg_num, "%s must be a non-negative integer", what);
			return false;
		}
		cfg->replicas = (int) Z_LVAL_P(value);
	}
	return true;
}

/* Converts a DSN query value to the type its option takes; false when it threw. */
static bool php_lock_query_value(const php_lock_opt *opt, const char *text, zval *out, uint32_t arg_num)
{
	zend_long lval;
	double dval;
	size_t len = strlen(text);

	switch (opt->type) {
		case OPT_INT:
			if (len == 0 || strspn(text, "0123456789") != len || len > 9) {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be a non-negative integer", opt->name);
				return false;
			}
			lval = ZEND_STRTOL(text, NULL, 10);
			ZVAL_LONG(out, lval);
			return true;
		case OPT_FLOAT:
			if (is_numeric_string(text, len, NULL, &dval, false) == 0) {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be a number", opt->name);
				return false;
			}
			ZVAL_DOUBLE(out, zend_strtod(text, NULL));
			return true;
		case OPT_BOOL:
			if (strcmp(text, "1") == 0 || strcmp(text, "true") == 0) {
				ZVAL_TRUE(out);
			} else if (strcmp(text, "0") == 0 || strcmp(text, "false") == 0 || len == 0) {
				ZVAL_FALSE(out);
			} else {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be 0, 1, true or false", opt->name);
				return false;
			}
			return true;
		default:
			ZVAL_STRINGL(out, text, len);
			return true;
	}
}

/*
 * Options that arrive as strings (Symfony's %env()%, a .env file) are taken where PHP would
 * take them: a numeric string for an int (not one with a leading zero, which reads as octal
 * to people) or float option, "1", "0", "true", "false" or "" for a bool one. Other strings
 * are left to the type check (a TypeError, as from PHP).
 * *options then points at a copy, *coerced too, for the caller to release.
 */
static void php_lock_options_coerce(HashTable **options, HashTable **coerced, const php_lock_opt *known)
{
	zend_string *key;
	zval *value;

	*coerced = NULL;
	if (*options == NULL || known == NULL) {
		return;
	}
	ZEND_HASH_FOREACH_STR_KEY_VAL(*options, key, value) {
		const php_lock_opt *opt = NULL;
		zend_long lval;
		double dval;
		zend_uchar type;
		zval typed;

		ZVAL_DEREF(value);
		if (key == NULL || Z_TYPE_P(value) != IS_STRING) {
			continue;
		}
		for (const php_lock_opt *o = known; o->name; o++) {
			if (zend_string_equals_cstr(key, o->name, strlen(o->name))) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			continue;
		}
		type = is_numeric_string(Z_STRVAL_P(value), Z_STRLEN_P(value), &lval, &dval, false);
		if (opt->type == OPT_INT && type == IS_LONG && (Z_STRVAL_P(value)[0] != '0' || Z_STRLEN_P(value) == 1)) {
			/* "0600" is left alone: octal to whoever wrote it, 600 to PHP. */
			ZVAL_LONG(&typed, lval);
		} else if (opt->type == OPT_FLOAT && type != 0) {
			ZVAL_DOUBLE(&typed, type == IS_LONG ? (double) lval : dval);
		} else if (opt->type == OPT_BOOL && (zend_string_equals_literal(Z_STR_P(value), "1")
			|| zend_string_equals_literal(Z_STR_P(value), "true"))) {
			ZVAL_TRUE(&typed);
		} else if (opt->type == OPT_BOOL && (Z_STRLEN_P(value) == 0 || zend_string_equals_literal(Z_STR_P(value), "0")
			|| zend_string_equals_literal(Z_STR_P(value), "false"))) {
			ZVAL_FALSE(&typed);
		} else {
			continue;
		}
		if (*coerced == NULL) {
			*coerced = zend_array_dup(*options);
		}
		zend_hash_update(*coerced, key, &typed);
	} ZEND_HASH_FOREACH_END();
	if (*coerced != NULL) {
		*options = *coerced;
	}
}

/* Releases what php_lock_options_coerce copied, if anything. */
static void php_lock_options_release(HashTable *coerced)
{
	if (coerced != NULL) {
		zend_array_release(coerced);
	}
}

/*
 * Throws the ValueError of the unknown DSN query parameter i, naming it and the known ones.
 * Not named when the query may hold a password: an unencoded '?' in one puts the rest of
 * the DSN, '@' and host included, into the query.
 */
static void php_lock_unknown_query(uint32_t arg_num, const lkc_dsn *parsed, size_t i, const php_lock_opt *known_opts)
{
	const char *key = parsed->param_keys[i];
	size_t len = strlen(key);
	bool name = len > 0 && len <= 64 && strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == len;
	smart_str known = {0};

	for (size_t j = 0; j < parsed->nparams && name; j++) {
		name = strchr(parsed->param_keys[j], '@') == NULL && strchr(parsed->param_values[j], '@') == NULL;
	}
	for (const php_lock_opt *o = known_opts; o->name; o++) {
		if (o != known_opts) {
			smart_str_appends(&known, ", ");
		}
		smart_str_appends(&known, o->name);
	}
	smart_str_0(&known);
	if (name) {
		zend_argument_value_error(arg_num, "has unknown query parameter \"%s\" (known: %s)", key, ZSTR_VAL(known.s));
	} else {
		zend_argument_value_error(arg_num, "has an unknown query parameter (known: %s)", ZSTR_VAL(known.s));
	}
	smart_str_free(&known);
}

/* Fills cfg from a Redis DSN (redis:, rediss:, redis+sentinel:, ...); false when it threw. */
static bool php_lock_redis_dsn(lkc_redis_config *cfg, const char *dsn, size_t dsn_len, uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(dsn, dsn_len, &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (lkc_redis_config_dsn(cfg, &parsed, &err) != LKC_OK) {
		if (err.code == LKC_ERR_INVALID) {
			zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		} else {
			php_lock_throw(err.code, &err, NULL);
		}
		goto done;
	}
	for (size_t i = 0; i < parsed.nparams; i++) {
		const php_lock_opt *opt = NULL;
		zval value;
		bool applied;

		for (const php_lock_opt *o = php_lock_redis_options; o->name; o++) {
			if (strcmp(parsed.param_keys[i], o->name) == 0) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			php_lock_unknown_query(arg_num, &parsed, i, php_lock_redis_options);
			goto done;
		}
		if (!php_lock_query_value(opt, parsed.param_values[i], &value, arg_num)) {
			goto done;
		}
		applied = php_lock_redis_setting(cfg, opt->name, &value, arg_num, "query parameter");
		zval_ptr_dtor(&value);
		if (!applied) {
			goto done;
		}
	}
	ok = true;
done:
	lkc_dsn_free(&parsed);
	return ok;
}

/*
 * Makes a TLS file option's path absolute (a reconnect in a later request may
 * run in another directory) and checks that it can be read now: a file for
 * tls_ca_file, tls_cert and tls_key, a directory for tls_ca_dir. A path that
 * open_basedir forbids or that cannot be opened is a StorageException naming
 * the option, the path and the cause; false when it threw.
 */
static bool php_lock_redis_tls_file(char **slot, const char *name, bool directory)
{
	char resolved[MAXPATHLEN];
	struct stat st;
	lkc_err err;
	int fd;

	if (*slot == NULL) {
		return true;
	}
	lkc_err_clear(&err);
	if (expand_filepath(*slot, resolved) == NULL) {
		lkc_err_set(&err, LKC_ERR_SYSTEM, "Redis: %s \"%s\" cannot be resolved to a full path", name, *slot);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	if (php_check_open_basedir_ex(resolved, 0) != 0) {
		lkc_err_set(&err, LKC_ERR_PERM, "Redis: %s \"%s\" is outside open_basedir", name, resolved);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	fd = open(resolved, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (directory ? O_DIRECTORY : 0));
	if (fd < 0 || fstat(fd, &st) != 0) {
		int errnum = errno;

		if (fd >= 0) {
			close(fd);
		}
		lkc_err_errno(&err, errnum == EACCES || errnum == EPERM ? LKC_ERR_PERM : LKC_ERR_SYSTEM, errnum,
			"Redis: %s \"%s\" cannot be read", name, resolved);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	close(fd);
	if (!directory && !S_ISREG(st.st_mode)) {
		lkc_err_set(&err, LKC_ERR_SYSTEM, "Redis: %s \"%s\" is not a regular file", name, resolved);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	php_lock_set_str(slot, resolved, strlen(resolved));
	return true;
}

/*
 * The checks of settings that go together, once the DSN and the options are
 * read: a client certificate and its key, and TLS files that can be read.
 * options_arg is blamed when the options array has a key at fault; false when it threw.
 */
static bool php_lock_redis_finish(lkc_redis_config *cfg, HashTable *options, uint32_t options_arg)
{
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		bool in_options = php_lock_option(options, "tls_cert") != NULL || php_lock_option(options, "tls_key") != NULL;

		zend_argument_value_error(in_options ? options_arg : 1, "%s \"%s\" needs \"%s\" too: mutual TLS takes a certificate and its key",
			in_options ? "option" : "query parameter",
			cfg->tls_cert != NULL ? "tls_cert" : "tls_key", cfg->tls_cert != NULL ? "tls_key" : "tls_cert");
		return false;
	}
	return php_lock_redis_tls_file(&cfg->tls_ca_file, "tls_ca_file", false)
		&& php_lock_redis_tls_file(&cfg->tls_ca_dir, "tls_ca_dir", true)
		&& php_lock_redis_tls_file(&cfg->tls_cert, "tls_cert", false)
		&& php_lock_redis_tls_file(&cfg->tls_key, "tls_key", false);
}

/*
 * What tells two RedisStores apart: the server (or the sentinels and master
 * name, or the cluster's seeds), the database and the prefix. Stores that
 * reach one Redis under one prefix share their locks.
 */
static zend_string *php_lock_redis_ns(const lkc_redis_config *cfg, size_t *server_len)
{
	smart_str ns = {0};

	if (cfg->topology == LKC_REDIS_SINGLE) {
		smart_str_append_printf(&ns, "%s:%d", cfg->host != NULL ? cfg->host : cfg->socket_path, cfg->port);
	} else {
		smart_str_appends(&ns, cfg->topology == LKC_REDIS_SENTINEL ? "sentinel:" : "cluster:");
		if (cfg->master_name != NULL) {
			smart_str_appends(&ns, cfg->master_name);
			smart_str_appendc(&ns, '@');
		}
		for (size_t i = 0; i < cfg->nseeds; i++) {
			smart_str_append_printf(&ns, "%s%s:%d", i > 0 ? "," : "", cfg->seeds[i].host, cfg->seeds[i].port);
		}
	}
	*server_len = ns.s != NULL ? ZSTR_LEN(ns.s) : 0;
	smart_str_append_printf(&ns, "/%d ", cfg->database);
	if (cfg->prefix != NULL) {
		smart_str_appendl(&ns, cfg->prefix, cfg->prefix_len);
	}
	smart_str_0(&ns);
	return ns.s;
}

/* Opens a redis store from a DSN and an options array into obj; false when it threw. */
static bool php_lock_redis_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
	lkc_redis_config cfg;
	zend_string *ns;
	size_t server_len;
	lkc_err err;
	zend_string *key;
	zval *value;

	if (options && !php_lock_options_check(options, php_lock_redis_options, options_arg)) {
		return false;
	}
	lkc_redis_config_init(&cfg);
	cfg.fair = 1;
	cfg.timeout_ms = (int64_t) ceil(LOCK_G(redis_timeout) * 1000.0);
	if (!php_lock_redis_dsn(&cfg, ZSTR_VAL(dsn), ZSTR_LEN(dsn), 1)) {
		lkc_redis_config_free(&cfg);
		return false;
	}
	if (options) {
		ZEND_HASH_FOREACH_STR_KEY_VAL(options, key, value) {
			ZVAL_DEREF(value);
			if (!php_lock_redis_setting(&cfg, ZSTR_VAL(key), value, options_arg, "option")) {
				lkc_redis_config_free(&cfg);
				return false;
			}
		} ZEND_HASH_FOREACH_END();
	}
	if (!php_lock_redis_finish(&cfg, options, options_arg)) {
		lkc_redis_config_free(&cfg);
		return false;
	}
	ns = php_lock_redis_ns(&cfg, &server_len);
	lkc_err_clear(&err);
	if (lkc_redis_open(&obj->store, &cfg, &err) != LKC_OK) {
		zend_string_release(ns);
		lkc_redis_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	lkc_redis_config_free(&cfg);
	php_lock_store_set_ns(obj, ZSTR_VAL(ns), ZSTR_LEN(ns), server_len);
	zend_string_release(ns);
	return true;
}

/* Whether a scheme is RedisStore's: redis, rediss, and either with a "+topology" (RedisStore judges which). */
static bool php_lock_redis_scheme(const char *scheme)
{
	size_t base = strncmp(scheme, "rediss", 6) == 0 ? 6 : strncmp(scheme, "redis", 5) == 0 ? 5 : 0;

	return base > 0 && (scheme[base] == '\0' || scheme[base] == '+');
}

/* Whether scheme names the PostgreSQL store. */
static bool php_lock_pg_scheme(const char *scheme)
{
	return strcmp(scheme, "pgsql") == 0 || strcmp(scheme, "postgres") == 0 || strcmp(scheme, "postgresql") == 0;
}

#if defined(HAVE_LOCK_PGSQL) || defined(HAVE_LOCK_MYSQL)
/* The options of PostgresStore and MysqlStore, and their DSN query keys. */
static const php_lock_opt php_lock_sql_options[] = {
	{"prefix", OPT_STRING},
	{"timeout", OPT_FLOAT},
	{"persistent", OPT_BOOL},
	{"username", OPT_NULLABLE_STRING},
	{"password", OPT_NULLABLE_STRING},
	{"database", OPT_NULLABLE_STRING},
	{"holds", OPT_STRING},
	{"table", OPT_STRING},
	{NULL, OPT_INT},
};

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

/* Applies one setting (from the DSN query or the options array) to cfg; false when it threw. */
static bool php_lock_sql_setting(const php_lock_sql_kind *k, lkc_sql_config *cfg, const char *name, zval *value,
	uint32_t arg_num, const char *kind)
{
	char what[64];

	snprintf(what, sizeof(what), "%s \"%s\"", kind, name);
	if (strcmp(name, "prefix") == 0) {
		php_lock_set_str(&cfg->prefix, Z_STRVAL_P(value), Z_STRLEN_P(value));
		cfg->prefix_len = Z_STRLEN_P(value);
	} else if (strcmp(name, "timeout") == 0) {
		int64_t ms;
		if (!php_lock_duration_to_ms(zval_get_double(value), arg_num, what, false, &ms)) {
			return false;
		}
		cfg->timeout_ms = ms;
	} else if (strcmp(name, "persistent") == 0) {
		cfg->persistent = zend_is_true(value);
	} else if (strcmp(name, "holds") == 0) {
		if (zend_string_equals_literal(Z_STR_P(value), "session")) {
			cfg->table_holds = 0;
		} else if (zend_string_equals_literal(Z_STR_P(value), "table")) {
			cfg->table_holds = 1;
		} else {
			zend_argument_value_error(arg_num, "%s must be \"session\" or \"table\"", what);
			return false;
		}
	} else if (strcmp(name, "table") == 0) {
		if (!k->table_ok(Z_STRVAL_P(value), Z_STRLEN_P(value))) {
			zend_argument_value_error(arg_num, "%s must be %s", what, k->table_rule);
			return false;
		}
		php_lock_set_str(&cfg->table, Z_STRVAL_P(value), Z_STRLEN_P(value));
	} else {
		char **slot = name[0] == 'u' ? &cfg->user : name[0] == 'p' ? &cfg->password : &cfg->dbname;
		if (Z_TYPE_P(value) == IS_NULL) {
			php_lock_set_str(slot, NULL, 0);
		} else if (Z_STRLEN_P(value) == 0 || memchr(Z_STRVAL_P(value), '\0', Z_STRLEN_P(value)) != NULL) {
			zend_argument_value_error(arg_num, "%s must be a non-empty string without NUL bytes", what);
			return false;
		} else {
			php_lock_set_str(slot, Z_STRVAL_P(value), Z_STRLEN_P(value));
		}
	}
	return true;
}

/* The value of a hex digit, -1 for anything else. */
static int php_lock_hex(char c)
{
	if (!isxdigit((unsigned char) c)) {
		return -1;
	}
	return isdigit((unsigned char) c) ? c - '0' : tolower((unsigned char) c) - 'a' + 10;
}

/* Percent-decodes a DSN host in place (a socket is written %2F...); false when malformed. */
static bool php_lock_decode_host(char *host)
{
	char *out = host;

	for (const char *in = host; *in != '\0'; in++) {
		if (*in == '%') {
			int hi = php_lock_hex(in[1]);
			int lo = hi >= 0 ? php_lock_hex(in[2]) : -1;
			if (lo < 0 || (hi == 0 && lo == 0)) {
				return false;
			}
			*out++ = (char) (hi * 16 + lo);
			in += 2;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
	return true;
}

/* Fills cfg from the DSN; false when it threw. */
static bool php_lock_sql_dsn(const php_lock_sql_kind *k, lkc_sql_config *cfg, const char *dsn, size_t dsn_len,
	uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(dsn, dsn_len, &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (!k->scheme_ok(parsed.scheme)) {
		zend_argument_value_error(arg_num, "must use the %s: scheme, \"%s\" given", k->scheme, parsed.scheme);
		goto done;
	}
	if (parsed.host == NULL || parsed.host[0] == '\0') {
		zend_argument_value_error(arg_num, "must name a host, or a %s written as %%2F... (%s)", k->socket, k->socket_dsn);
		goto done;
	}
	if (strchr(parsed.host, ',') != NULL) {
		zend_argument_value_error(arg_num, "must name one host");
		goto done;
	}
	if (!php_lock_decode_host(parsed.host)) {
		zend_argument_value_error(arg_num, "has a bad percent escape in the host ('%%' must be followed by two hex digits, not %%00)");
		goto done;
	}
	if (strchr(parsed.host, '/') != NULL && parsed.host[0] != '/') {
		zend_argument_value_error(arg_num, "has an invalid host: a %s must be an absolute path, written as %%2F...", k->socket);
		goto done;
	}
	if (parsed.host[0] == '/' && parsed.port && !k->socket_port) {
		zend_argument_value_error(arg_num, "must not have a port with a %s", k->socket);
		goto done;
	}
	php_lock_set_str(&cfg->host, parsed.host, strlen(parsed.host));
	if (parsed.port) {
		cfg->port = parsed.port;
	}
	if (parsed.path != NULL && parsed.path[0] != '\0' && strcmp(parsed.path, "/") != 0) {
		const char *db = parsed.path + 1;
		if (strchr(db, '/') != NULL) {
			/* The path is not quoted: an unencoded '/' in a password lands there. */
			zend_argument_value_error(arg_num, "must have a database name as its path, with no '/' in it");
			goto done;
		}
		php_lock_set_str(&cfg->dbname, db, strlen(db));
	}
	if (parsed.user != NULL && parsed.user[0] != '\0') {
		php_lock_set_str(&cfg->user, parsed.user, strlen(parsed.user));
	}
	if (parsed.password != NULL) {
		php_lock_set_str(&cfg->password, parsed.password, strlen(parsed.password));
	}
	for (size_t i = 0; i < parsed.nparams; i++) {
		const php_lock_opt *opt = NULL;
		zval value;
		bool applied;

		for (const php_lock_opt *o = php_lock_sql_options; o->name; o++) {
			if (strcmp(parsed.param_keys[i], o->name) == 0) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			php_lock_unknown_query(arg_num, &parsed, i, php_lock_sql_options);
			goto done;
		}
		if (!php_lock_query_value(opt, parsed.param_values[i], &value, arg_num)) {
			goto done;
		}
		applied = php_lock_sql_setting(k, cfg, opt->name, &value, arg_num, "query parameter");
		zval_ptr_dtor(&value);
		if (!applied) {
			goto done;
		}
	}
	ok = true;
done:
	lkc_dsn_free(&parsed);
	return ok;
}

/* Reads the DSN, then the options over it, into cfg (set up here); false when it threw, cfg then freed. */
static bool php_lock_sql_config(const php_lock_sql_kind *k, lkc_sql_config *cfg, zend_string *dsn, HashTable *options,
	uint32_t options_arg)
{
	zend_string *key;
	zval *value;

	k->init(cfg);
	if (options && !php_lock_options_check(options, php_lock_sql_options, options_arg)) {
		return false;
	}
	if (!php_lock_sql_dsn(k, cfg, ZSTR_VAL(dsn), ZSTR_LEN(dsn), 1)) {
		k->free(cfg);
		return false;
	}
	if (options) {
		ZEND_HASH_FOREACH_STR_KEY_VAL(options, key, value) {
			ZVAL_DEREF(value);
			if (!php_lock_sql_setting(k, cfg, ZSTR_VAL(key), value, options_arg, "option")) {
				k->free(cfg);
				return false;
			}
		} ZEND_HASH_FOREACH_END();
	}
	return true;
}
#endif

#ifdef HAVE_LOCK_PGSQL
static const php_lock_sql_kind php_lock_pg_kind = {
	php_lock_pg_scheme, "pgsql", "socket directory", "pgsql://user@%2Fvar%2Frun%2Fpostgresql/db", true,
	lkc_pg_table_name_check, "a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes",
	lkc_pg_config_init, lkc_pg_config_free,
};
#endif

/* Opens a PostgreSQL store from a DSN and an options array into obj; false when it threw. */
static bool php_lock_pg_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
#ifdef HAVE_LOCK_PGSQL
	lkc_pg_config cfg;
	zend_string *ns;
	lkc_err err;

	if (!php_lock_sql_config(&php_lock_pg_kind, &cfg, dsn, options, options_arg)) {
		return false;
	}
	if (cfg.table != NULL && !cfg.table_holds) {
		/* A table named for session holds would be silently unused: the caller meant table mode. */
		zend_argument_value_error(options && php_lock_option(options, "table") != NULL ? options_arg : 1,
			"%s \"table\" needs holds \"table\" (session holds use no table)",
			options && php_lock_option(options, "table") != NULL ? "option" : "query parameter");
		lkc_pg_config_free(&cfg);
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_pg_open(&obj->store, &cfg, &err) != LKC_OK) {
		lkc_pg_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	/* Two PostgresStores share their locks when they reach one server's database under one prefix. */
	ns = strpprintf(0, "%s/%s ", lkc_pg_endpoint(obj->store), cfg.dbname != NULL ? cfg.dbname : (cfg.user != NULL ? cfg.user : ""));
	if (cfg.table_holds) {
		/* Table mode: the table is part of the namespace too. */
		zend_string *server = ns;

		ns = strpprintf(0, "%stable %s ", ZSTR_VAL(server), cfg.table != NULL ? cfg.table : LKC_PG_TABLE_DEFAULT);
		zend_string_release(server);
	}
	if (cfg.prefix != NULL) {
		zend_string *server = ns;

		ns = zend_string_concat2(ZSTR_VAL(server), ZSTR_LEN(server), cfg.prefix, cfg.prefix_len);
		zend_string_release(server);
	}
	lkc_pg_config_free(&cfg);
	php_lock_store_set_ns(obj, ZSTR_VAL(ns), ZSTR_LEN(ns), strlen(lkc_pg_endpoint(obj->store)));
	zend_string_release(ns);
	return true;
#else
	(void) obj;
	(void) dsn;
	(void) options;
	(void) options_arg;
	zend_throw_exception(php_lock_ce_lock_exception,
		"The PostgresStore was not built: this lock extension was compiled without libpq (install libpq-dev and rebuild)", 0);
	return false;
#endif
}

/* --- MySQL store --- */
/* Whether scheme names the MySQL store. */
static bool php_lock_my_scheme(const char *scheme)
{
	return strcmp(scheme, "mysql") == 0 || strcmp(scheme, "mariadb") == 0;
}

#ifdef HAVE_LOCK_MYSQL
static const php_lock_sql_kind php_lock_my_kind = {
	php_lock_my_scheme, "mysql", "socket path", "mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db", false,
	lkc_my_table_name_ok, "a table name of 1 to 64 characters from [A-Za-z0-9_$]",
	lkc_my_config_init, lkc_my_config_free,
};
#endif

/* Opens a MySQL store from a DSN and an options array into obj; false when it threw. */
static bool php_lock_my_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
#ifdef HAVE_LOCK_MYSQL
	lkc_my_config cfg;
	zend_string *ns;
	lkc_err err;

	if (!php_lock_sql_config(&php_lock_my_kind, &cfg, dsn, options, options_arg)) {
		return false;
	}
	if (cfg.table_holds && cfg.dbname == NULL) {
		lkc_my_config_free(&cfg);
		zend_argument_value_error(1, "must name a database (its path, or the \"database\" option) for holds => \"table\": "
			"the table of holds lives there");
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_my_open(&obj->store, &cfg, &err) != LKC_OK) {
		lkc_my_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	/*
	 * GET_LOCK names are server-wide: two MysqlStores share their locks when they reach one server under one prefix.
	 * Table holds are the rows of one table: the database and the table tell them apart too.
	 */
	if (cfg.table_holds) {
		ns = strpprintf(0, "%s %s.%s ", lkc_my_endpoint(obj->store), cfg.dbname,
			cfg.table != NULL ? cfg.table : LKC_MY_TABLE_DEFAULT);
	} else {
		ns = strpprintf(0, "%s ", lkc_my_endpoint(obj->store));
	}
	if (cfg.prefix != NULL) {
		zend_string *server = ns;

		ns = zend_string_concat2(ZSTR_VAL(server), ZSTR_LEN(server), cfg.prefix, cfg.prefix_len);
		zend_string_release(server);
	}
	lkc_my_config_free(&cfg);
	php_lock_store_set_ns(obj, ZSTR_VAL(ns), ZSTR_LEN(ns), strlen(lkc_my_endpoint(obj->store)));
	zend_string_release(ns);
	return true;
#else
	(void) obj;
	(void) dsn;
	(void) options;
	(void) options_arg;
	zend_throw_exception(php_lock_ce_lock_exception,
		"The MysqlStore was not built: this lock extension was compiled without libmariadb (install libmariadb-dev and rebuild)", 0);
	return false;
#endif
}
/* --- end MySQL store --- */

/* The options of PostgresStore and MysqlStore, NULL when neither was built. */
static const php_lock_opt *php_lock_sql_known(void)
{
#if defined(HAVE_LOCK_PGSQL) || defined(HAVE_LOCK_MYSQL)
	return php_lock_sql_options;
#else
	return NULL;
#endif
}

/* --- MemcachedStore --- */
zend_class_entry *php_lock_ce_memcached_store;

#ifdef LKC_HAVE_MEMCACHED
static const php_lock_opt php_lock_memcached_options[] = {
	{"prefix", OPT_STRING},
	{"timeout", OPT_FLOAT},
	{"persistent", OPT_BOOL},
	{NULL, OPT_INT},
};

/* Applies one memcached setting (from the DSN query or the options array) to cfg; false when it threw. */
static bool php_lock_memcached_setting(lkc_memcached_config *cfg, const char *name, zval *value, uint32_t arg_num,
	const char *kind)
{
	char what[64];

	snprintf(what, sizeof(what), "%s \"%s\"", kind, name);
	if (strcmp(name, "prefix") == 0) {
		const char *p = Z_STRVAL_P(value);

		if (Z_STRLEN_P(value) > LKC_MC_PREFIX_MAX) {
			zend_argument_value_error(arg_num, "%s must be at most %d bytes long", what, LKC_MC_PREFIX_MAX);
			return false;
		}
		for (size_t i = 0; i < Z_STRLEN_P(value); i++) {
			if ((unsigned char) p[i] <= 0x20 || (unsigned char) p[i] >= 0x7f) {
				zend_argument_value_error(arg_num, "%s must be printable ASCII without spaces (a memcached key)", what);
				return false;
			}
		}
		php_lock_set_str(&cfg->prefix, p, Z_STRLEN_P(value));
		cfg->prefix_len = Z_STRLEN_P(value);
	} else if (strcmp(name, "timeout") == 0) {
		int64_t ms;
		if (!php_lock_duration_to_ms(zval_get_double(value), arg_num, what, false, &ms)) {
			return false;
		}
		cfg->timeout_ms = ms;
	} else if (strcmp(name, "persistent") == 0) {
		cfg->persistent = zend_is_true(value);
	}
	return true;
}

/* Fills cfg from a memcached:// DSN; false when it threw. */
static bool php_lock_memcached_dsn(lkc_memcached_config *cfg, const char *dsn, size_t dsn_len, uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(dsn, dsn_len, &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (strcmp(parsed.scheme, "memcached") != 0) {
		zend_argument_value_error(arg_num, "must use the memcached: scheme, \"%s\" given", parsed.scheme);
		goto done;
	}
	if (parsed.user != NULL || parsed.password != NULL) {
		/* Not quoted: memcached's text protocol has no authentication, and a password must not reach a message. */
		zend_argument_value_error(arg_num, "must not carry credentials: memcached's text protocol has no authentication");
		goto done;
	}
	if (parsed.host == NULL || parsed.host[0] == '\0') {
		zend_argument_value_error(arg_num, "must name at least one server, as memcached://host:11211");
		goto done;
	}
	if (parsed.path != NULL && strcmp(parsed.path, "/") != 0) {
		zend_argument_value_error(arg_num, "must not have a path (memcached has no databases)");
		goto done;
	}
	if (strchr(parsed.host, ',') != NULL || strchr(parsed.host, ':') == NULL) {
		if (lkc_memcached_add_servers(cfg, parsed.host, parsed.port ? parsed.port : 11211, &err) != LKC_OK) {
			zend_argument_value_error(arg_num, "%s", err.msg);
			goto done;
		}
	} else {
		/* One IPv6 address, which the DSN parser took out of its brackets. */
		char *bracketed = NULL;

		zend_spprintf(&bracketed, 0, "[%s]:%d", parsed.host, parsed.port ? parsed.port : 11211);
		if (lkc_memcached_add_servers(cfg, bracketed, 11211, &err) != LKC_OK) {
			efree(bracketed);
			zend_argument_value_error(arg_num, "%s", err.msg);
			goto done;
		}
		efree(bracketed);
	}
	for (size_t i = 0; i < parsed.nparams; i++) {
		const php_lock_opt *opt = NULL;
		zval value;
		bool applied;

		for (const php_lock_opt *o = php_lock_memcached_options; o->name; o++) {
			if (strcmp(parsed.param_keys[i], o->name) == 0) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			php_lock_unknown_query(arg_num, &parsed, i, php_lock_memcached_options);
			goto done;
		}
		if (!php_lock_query_value(opt, parsed.param_values[i], &value, arg_num)) {
			goto done;
		}
		applied = php_lock_memcached_setting(cfg, opt->name, &value, arg_num, "query parameter");
		zval_ptr_dtor(&value);
		if (!applied) {
			goto done;
		}
	}
	ok = true;
done:
	lkc_dsn_free(&parsed);
	return ok;
}

/* Orders server names for the store's namespace (qsort). */
static int php_lock_memcached_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Opens a memcached store from a DSN and an options array into obj; false when it threw. */
static bool php_lock_memcached_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
	lkc_memcached_config cfg;
	smart_str ns = {0};
	size_t server_len;
	lkc_err err;
	zend_string *key;
	zval *value;

	if (options && !php_lock_options_check(options, php_lock_memcached_options, options_arg)) {
		return false;
	}
	lkc_memcached_config_init(&cfg);
	cfg.timeout_ms = (int64_t) ceil(LOCK_G(redis_timeout) * 1000.0);
	php_lock_set_str(&cfg.prefix, "lock:", 5);
	cfg.prefix_len = 5;
	if (!php_lock_memcached_dsn(&cfg, ZSTR_VAL(dsn), ZSTR_LEN(dsn), 1)) {
		lkc_memcached_config_free(&cfg);
		return false;
	}
	if (options) {
		ZEND_HASH_FOREACH_STR_KEY_VAL(options, key, value) {
			ZVAL_DEREF(value);
			if (!php_lock_memcached_setting(&cfg, ZSTR_VAL(key), value, options_arg, "option")) {
				lkc_memcached_config_free(&cfg);
				return false;
			}
		} ZEND_HASH_FOREACH_END();
	}
	/* Two MemcachedStores share their locks when they list the same servers, in any order, under one prefix. */
	{
		char **names = ecalloc(cfg.nservers, sizeof(char *));

		for (size_t i = 0; i < cfg.nservers; i++) {
			zend_spprintf(&names[i], 0, "%s:%d", cfg.servers[i].host, cfg.servers[i].port);
		}
		qsort(names, cfg.nservers, sizeof(char *), php_lock_memcached_cmp);
		for (size_t i = 0; i < cfg.nservers; i++) {
			smart_str_appends(&ns, names[i]);
			smart_str_appendc(&ns, ',');
			efree(names[i]);
		}
		efree(names);
	}
	server_len = ns.s != NULL ? ZSTR_LEN(ns.s) : 0;
	smart_str_appendc(&ns, ' ');
	smart_str_appendl(&ns, cfg.prefix != NULL ? cfg.prefix : "", cfg.prefix_len);
	smart_str_0(&ns);
	lkc_err_clear(&err);
	if (lkc_memcached_open(&obj->store, &cfg, &err) != LKC_OK) {
		smart_str_free(&ns);
		lkc_memcached_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	php_lock_store_set_ns(obj, ZSTR_VAL(ns.s), ZSTR_LEN(ns.s), server_len);
	smart_str_free(&ns);
	return true;
}
#else
/* Built without libmemcached: the class is there, and says why it cannot work. */
static bool php_lock_memcached_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
	(void) obj;
	(void) dsn;
	(void) options;
	(void) options_arg;
	zend_throw_exception(php_lock_ce_lock_exception,
		"Lock\\Store\\MemcachedStore was not built: this lock extension was compiled without libmemcached "
		"(install libmemcached-dev and rebuild; phpinfo() lists the stores built)", 0);
	return false;
}
#endif

ZEND_METHOD(Lock_Store_MemcachedStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *dsn = NULL;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	zend_string *fallback;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(dsn)
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
#ifdef LKC_HAVE_MEMCACHED
	php_lock_options_coerce(&options, &coerced, php_lock_memcached_options);
#endif
	fallback = dsn ? zend_string_copy(dsn) : zend_string_init("memcached://127.0.0.1:11211", sizeof("memcached://127.0.0.1:11211") - 1, 0);
	ok = php_lock_memcached_init(obj, fallback, options, 2);
	zend_string_release(fallback);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}
/* --- end MemcachedStore --- */

bool php_lock_store_from_dsn(zval *return_value, zend_string *dsn, uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	php_lock_store_obj *obj;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(ZSTR_VAL(dsn), ZSTR_LEN(dsn), &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (php_lock_redis_scheme(parsed.scheme)) {
		object_init_ex(return_value, php_lock_ce_redis_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_redis_init(obj, dsn, NULL, arg_num);
	} else if (strcmp(parsed.scheme, "flock") == 0 || strcmp(parsed.scheme, "semaphore") == 0) {
		bool flock = parsed.scheme[0] == 'f';
		if (parsed.nparams > 0) {
			zend_argument_value_error(arg_num, "has unknown query parameter \"%s\"", parsed.param_keys[0]);
		} else if (parsed.host != NULL && parsed.host[0] != '\0') {
			zend_argument_value_error(arg_num, "must not name a host for the %s: scheme", parsed.scheme);
		} else if (!flock && parsed.path != NULL && parsed.path[0] != '\0') {
			zend_argument_value_error(arg_num, "must not have a path for the semaphore: scheme");
		} else {
			object_init_ex(return_value, flock ? php_lock_ce_flock_store : php_lock_ce_semaphore_store);
			obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
			ok = flock ? php_lock_flock_init(obj, parsed.path, NULL, arg_num) : php_lock_sem_init(obj, NULL, arg_num);
		}
	} else if (php_lock_pg_scheme(parsed.scheme)) {
		object_init_ex(return_value, php_lock_ce_postgres_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_pg_init(obj, dsn, NULL, arg_num);
	} else if (php_lock_my_scheme(parsed.scheme)) {
		/* MySQL store */
		object_init_ex(return_value, php_lock_ce_mysql_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_my_init(obj, dsn, NULL, arg_num);
	/* --- MemcachedStore --- */
	} else if (strcmp(parsed.scheme, "memcached") == 0) {
		object_init_ex(return_value, php_lock_ce_memcached_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_memcached_init(obj, dsn, NULL, arg_num);
	/* --- end MemcachedStore --- */
	} else if (strcmp(parsed.scheme, "redlock") == 0) {
		zend_argument_value_error(arg_num, "uses the %s: scheme, which this version does not support yet", parsed.scheme);
	} else {
		zend_argument_value_error(arg_num, "has unknown scheme \"%s\" (expected flock:, semaphore:, redis:, rediss:, "
			"redis+sentinel:, rediss+sentinel:, redis+cluster:, rediss+cluster:, pgsql:, mysql: or memcached:)", parsed.scheme);
	}
	if (!ok && Z_TYPE_P(return_value) == IS_OBJECT) {
		zval_ptr_dtor(return_value);
		ZVAL_UNDEF(return_value);
	}
	lkc_dsn_free(&parsed);
	return ok;
}

ZEND_METHOD(Lock_Store_FlockStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *directory = NULL;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_PATH_STR_OR_NULL(directory)
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_local_options);
	ok = php_lock_flock_init(obj, directory ? ZSTR_VAL(directory) : NULL, options, 2);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Store_SemaphoreStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_local_options);
	ok = php_lock_sem_init(obj, options, 1);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Store_RedisStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *dsn = NULL;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	zend_string *fallback;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(dsn)
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_redis_options);
	fallback = dsn ? zend_string_copy(dsn) : zend_string_init("redis://127.0.0.1:6379", sizeof("redis://127.0.0.1:6379") - 1, 0);
	ok = php_lock_redis_init(obj, fallback, options, 2);
	zend_string_release(fallback);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Store_PostgresStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *dsn;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(dsn)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_sql_known());
	ok = php_lock_pg_init(obj, dsn, options, 2);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

/* --- MySQL store --- */
ZEND_METHOD(Lock_Store_MysqlStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *dsn;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(dsn)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_sql_known());
	ok = php_lock_my_init(obj, dsn, options, 2);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}
/* --- end MySQL store --- */

/* isLocked() (force == false) and forceRelease() (force == true) of every store. */
static void php_lock_store_resource_op(INTERNAL_FUNCTION_PARAMETERS, bool force)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *resource;
	lkc_err err;
	int locked = 0;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(resource)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_store_ready(obj) || !php_lock_resource_arg(resource, 1)) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	rc = force
		? obj->store->ops->force_release(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), &err)
		: obj->store->ops->is_locked(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), &locked, &err);
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, NULL);
		RETURN_THROWS();
	}
	if (!force) {
		RETURN_BOOL(locked);
	}
}

/* waitUntilFree() of every store: waits, taking nothing, until nobody holds the resource. */
static void php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAMETERS)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *resource;
	double timeout = 0;
	bool timeout_null = true;
	int64_t wait_ms = LKC_WAIT_FOREVER;
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(resource)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(timeout, timeout_null)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_store_ready(obj) || !php_lock_resource_arg(resource, 1)
		|| (!timeout_null && !php_lock_seconds_to_ms(timeout, 2, true, &wait_ms))) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	rc = lkc_wait_free(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), wait_ms, &err);
	switch (rc) {
		case LKC_OK:
			RETURN_TRUE;
		case LKC_BUSY:
		case LKC_INTERRUPTED:
			/* As a blocking acquire: a wait that the host ended (a signal handler, a time limit) did not see it free. */
			RETURN_FALSE;
		default:
			php_lock_throw(rc, &err, NULL);
			RETURN_THROWS();
	}
}

/* supports() of every store: whether the store has a capability (Lock\\Store::EXPIRING, ...). */
static void php_lock_store_supports(INTERNAL_FUNCTION_PARAMETERS)
{
	php_lock_store_obj *obj = THIS_STORE();
	const unsigned known = LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND;
	zend_long capability;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(capability)
	ZEND_PARSE_PARAMETERS_END();

	/* One capability at a time: a mask of several would leave "all or any" to guesswork. */
	if (capability <= 0 || (capability & (capability - 1)) != 0 || ((zend_ulong) capability & ~(zend_ulong) known) != 0) {
		zend_argument_value_error(1, "must be one of the Lock\\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants");
		RETURN_THROWS();
	}
	if (!php_lock_store_ready(obj)) {
		RETURN_THROWS();
	}
	RETURN_BOOL((obj->store->ops->caps & (unsigned) capability) != 0);
}

ZEND_METHOD(Lock_Store_FlockStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_FlockStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_RedisStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_RedisStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_PostgresStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_PostgresStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_PostgresStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_PostgresStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

/* --- MySQL store --- */
ZEND_METHOD(Lock_Store_MysqlStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MysqlStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MysqlStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_MysqlStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}
/* --- end MySQL store --- */

/* --- MemcachedStore --- */
ZEND_METHOD(Lock_Store_MemcachedStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MemcachedStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MemcachedStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_MemcachedStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}
/* --- end MemcachedStore --- */

ZEND_METHOD(Lock_Store_FlockStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_FlockStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_RedisStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_RedisStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

void php_lock_setup_store_classes(void)
{
	memcpy(&php_lock_store_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	php_lock_store_handlers.offset = XtOffsetOf(php_lock_store_obj, std);
	php_lock_store_handlers.free_obj = php_lock_store_free;
	php_lock_store_handlers.clone_obj = NULL;
	php_lock_store_handlers.compare = zend_objects_not_comparable;
	php_lock_ce_flock_store->create_object = php_lock_store_create;
	php_lock_ce_semaphore_store->create_object = php_lock_store_create;
	php_lock_ce_redis_store->create_object = php_lock_store_create;
	php_lock_ce_postgres_store->create_object = php_lock_store_create;
	php_lock_ce_mysql_store->create_object = php_lock_store_create; /* MySQL store */
	/* --- MemcachedStore --- */
	php_lock_ce_memcached_store->create_object = php_lock_store_create;
	/* --- end MemcachedStore --- */
}
