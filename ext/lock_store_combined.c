/*
 * Lock\Store\CombinedStore: one lock over several independent Redis servers
 * (ext/core/lkc_combined.c) as a PHP class, and the redlock: DSN, which makes
 * one RedisStore per host.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_smart_str.h"

zend_class_entry *php_lock_ce_combined_store;

/* Opens the combined store of members (PHP objects, checked) into obj; false when it threw. */
static bool php_lock_combined_open(php_lock_store_obj *obj, lkc_store *const *members, size_t n,
	const char *strategy, uint32_t strategy_arg, uint32_t stores_arg)
{
	bool unanimous;
	lkc_err err;

	if (strategy == NULL || strcmp(strategy, "consensus") == 0) {
		unanimous = false;
	} else if (strcmp(strategy, "unanimous") == 0) {
		unanimous = true;
	} else {
		zend_argument_value_error(strategy_arg, "must be \"consensus\" or \"unanimous\"");
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_combined_open(&obj->store, members, n, unanimous, &err) != LKC_OK) {
		if (err.code == LKC_ERR_INVALID) {
			zend_argument_value_error(stores_arg, "%s", err.msg);
		} else {
			php_lock_throw(err.code, &err, NULL);
		}
		return false;
	}
	return true;
}

ZEND_METHOD(Lock_Store_CombinedStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	lkc_store *members[LKC_COMBINED_MAX];
	zend_string *strategy = NULL;
	HashTable *stores;
	size_t n = 0;
	zval *item;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_ARRAY_HT(stores)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(strategy)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	if (zend_hash_num_elements(stores) == 0) {
		zend_argument_value_error(1, "must not be empty");
		RETURN_THROWS();
	}
	if (zend_hash_num_elements(stores) > LKC_COMBINED_MAX) {
		zend_argument_value_error(1, "must hold at most %d stores", LKC_COMBINED_MAX);
		RETURN_THROWS();
	}
	ZEND_HASH_FOREACH_VAL(stores, item) {
		php_lock_store_obj *member;

		ZVAL_DEREF(item);
		if (Z_TYPE_P(item) != IS_OBJECT || !instanceof_function(Z_OBJCE_P(item), php_lock_ce_store)) {
			zend_argument_type_error(1, "must hold Lock\\Store objects, %s given", zend_zval_type_name(item));
			RETURN_THROWS();
		}
		member = php_lock_store_from_obj(Z_OBJ_P(item));
		if (member->store == NULL) {
			zend_argument_value_error(1, "must hold constructed stores");
			RETURN_THROWS();
		}
		members[n++] = member->store;
	} ZEND_HASH_FOREACH_END();
	if (strategy != NULL && strlen(ZSTR_VAL(strategy)) != ZSTR_LEN(strategy)) {
		zend_argument_value_error(2, "must be \"consensus\" or \"unanimous\"");
		RETURN_THROWS();
	}
	if (!php_lock_combined_open(obj, members, n, strategy != NULL ? ZSTR_VAL(strategy) : NULL, 2, 1)) {
		RETURN_THROWS();
	}
}

/*
 * Opens a combined store from a redlock: DSN into obj: redlock://[user:pass@]h1[:port],h2,...[/db][?query],
 * each host a RedisStore of redis://[user:pass@]host[:port][/db][?query], the query less "strategy".
 */
bool php_lock_redlock_init(php_lock_store_obj *obj, zend_string *dsn, const lkc_dsn *parsed, uint32_t arg_num)
{
	const char *s = ZSTR_VAL(dsn), *end = s + ZSTR_LEN(dsn), *auth, *hosts, *rest, *at;
	lkc_store *members[LKC_COMBINED_MAX];
	zval objs[LKC_COMBINED_MAX];
	const char *strategy = NULL;
	smart_str query = {0};
	size_t n = 0;
	bool ok = false;

	if (ZSTR_LEN(dsn) < sizeof("redlock://") - 1 || strncmp(s, "redlock://", sizeof("redlock://") - 1) != 0) {
		zend_argument_value_error(arg_num, "must be redlock://host1,host2,...");
		return false;
	}
	auth = s + sizeof("redlock://") - 1;
	rest = auth + strcspn(auth, "/?");
	at = memchr(auth, '@', (size_t) (rest - auth));
	hosts = at != NULL ? at + 1 : auth;
	if (hosts == rest) {
		zend_argument_value_error(arg_num, "must name the Redis servers: redlock://host1,host2,host3");
		return false;
	}
	/* The query, less the strategy, goes to every server's store. */
	for (size_t i = 0; i < parsed->nparams; i++) {
		if (strcmp(parsed->param_keys[i], "strategy") == 0) {
			strategy = parsed->param_values[i];
		}
	}
	{
		const char *q = memchr(rest, '?', (size_t) (end - rest));
		const char *path_end = q != NULL ? q : end;

		smart_str_appendl(&query, rest, (size_t) (path_end - rest));
		if (q != NULL) {
			const char *p = q + 1;
			bool first = true;

			while (p < end) {
				const char *amp = memchr(p, '&', (size_t) (end - p));
				const char *pair_end = amp != NULL ? amp : end;

				if (!((size_t) (pair_end - p) >= 9 && strncmp(p, "strategy=", 9) == 0)
					&& !((size_t) (pair_end - p) == 8 && strncmp(p, "strategy", 8) == 0)) {
					smart_str_appendc(&query, first ? '?' : '&');
					smart_str_appendl(&query, p, (size_t) (pair_end - p));
					first = false;
				}
				p = amp != NULL ? amp + 1 : end;
			}
		}
		smart_str_0(&query);
	}
	for (const char *h = hosts; h < rest && n <= LKC_COMBINED_MAX;) {
		const char *comma = memchr(h, ',', (size_t) (rest - h));
		const char *h_end = comma != NULL ? comma : rest;
		smart_str member = {0};
		php_lock_store_obj *m;

		if (h_end == h) {
			zend_argument_value_error(arg_num, "has an empty host in its list");
			goto done;
		}
		if (n == LKC_COMBINED_MAX) {
			zend_argument_value_error(arg_num, "names more than %d Redis servers", LKC_COMBINED_MAX);
			goto done;
		}
		smart_str_appends(&member, "redis://");
		if (at != NULL) {
			smart_str_appendl(&member, auth, (size_t) (at - auth) + 1);
		}
		smart_str_appendl(&member, h, (size_t) (h_end - h));
		if (query.s != NULL) {
			smart_str_append(&member, query.s);
		}
		smart_str_0(&member);
		object_init_ex(&objs[n], php_lock_ce_redis_store);
		m = php_lock_store_from_obj(Z_OBJ(objs[n]));
		n++;
		if (!php_lock_redis_init(m, member.s, NULL, arg_num)) {
			smart_str_free(&member);
			goto done;
		}
		smart_str_free(&member);
		members[n - 1] = m->store;
		h = comma != NULL ? comma + 1 : rest;
		if (comma != NULL && h == rest) {
			zend_argument_value_error(arg_num, "has an empty host in its list");
			goto done;
		}
	}
	ok = php_lock_combined_open(obj, members, n, strategy, arg_num, arg_num);
done:
	for (size_t i = 0; i < n; i++) {
		/* The combined store keeps its own reference to each member's core store. */
		zval_ptr_dtor(&objs[i]);
	}
	smart_str_free(&query);
	return ok;
}

ZEND_METHOD(Lock_Store_CombinedStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_CombinedStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_CombinedStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_CombinedStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_CombinedStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
