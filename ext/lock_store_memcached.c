/*
 * Lock\Store\MemcachedStore: the memcached store (ext/core/lkc_memcached.c) as
 * a PHP class: its memcached: DSN and its options; built without libmemcached,
 * the class says so.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_exceptions.h"
#include "zend_smart_str.h"

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
bool php_lock_memcached_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
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
bool php_lock_memcached_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
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

ZEND_METHOD(Lock_Store_MemcachedStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
