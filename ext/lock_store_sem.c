/*
 * Lock\Store\SemaphoreStore: the System V semaphore store (ext/core/lkc_sem.c)
 * as a PHP class, and its options.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

zend_class_entry *php_lock_ce_semaphore_store;

/* Opens a semaphore store into obj; false when it threw. */
bool php_lock_sem_init(php_lock_store_obj *obj, HashTable *options, uint32_t options_arg)
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

ZEND_METHOD(Lock_Store_SemaphoreStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_SemaphoreStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
