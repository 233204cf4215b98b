/*
 * Lock\Store\RedisStore: the Redis store (ext/core/lkc_redis.c) as a PHP
 * class: its DSN (one server, Sentinel, Cluster; TLS) and its options.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_smart_str.h"

#include <fcntl.h>
#include <sys/stat.h>

zend_class_entry *php_lock_ce_redis_store;

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
bool php_lock_redis_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
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
bool php_lock_redis_scheme(const char *scheme)
{
	size_t base = strncmp(scheme, "rediss", 6) == 0 ? 6 : strncmp(scheme, "redis", 5) == 0 ? 5 : 0;

	return base > 0 && (scheme[base] == '\0' || scheme[base] == '+');
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

ZEND_METHOD(Lock_Store_RedisStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_RedisStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_RedisStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_RedisStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_RedisStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
