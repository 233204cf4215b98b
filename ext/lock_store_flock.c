/*
 * Lock\Store\FlockStore: the flock store (ext/core/lkc_flock.c) as a PHP
 * class, and its options.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "main/php_open_temporary_file.h"

zend_class_entry *php_lock_ce_flock_store;

/* Opens a flock store on directory (NULL: the system temp dir) into obj; false when it threw. */
bool php_lock_flock_init(php_lock_store_obj *obj, const char *directory, HashTable *options, uint32_t options_arg)
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

ZEND_METHOD(Lock_Store_FlockStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_FlockStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_FlockStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_FlockStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_FlockStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
