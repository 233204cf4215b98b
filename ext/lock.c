/* The lock module: registration, INI, phpinfo and request shutdown. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "php_ini.h"
#include "ext/standard/info.h"
#include "zend_smart_str.h"
#include "zend_exceptions.h"
#include "zend_interfaces.h"
#include "zend_attributes.h"
#include "ext/spl/spl_exceptions.h"

#include "../stubs/lock_arginfo.h"

ZEND_DECLARE_MODULE_GLOBALS(lock)

zend_class_entry *php_lock_ce_store;

/* Rejects a positive, finite INI duration. */
static ZEND_INI_MH(php_lock_ini_seconds)
{
	double value = zend_strtod(ZSTR_VAL(new_value), NULL);

	if (!zend_finite(value) || value <= 0) {
		return FAILURE;
	}
	return OnUpdateReal(entry, new_value, mh_arg1, mh_arg2, mh_arg3, stage);
}

PHP_INI_BEGIN()
	STD_PHP_INI_ENTRY("lock.redis_timeout", "1.0", PHP_INI_ALL, php_lock_ini_seconds,
		redis_timeout, zend_lock_globals, lock_globals)
	STD_PHP_INI_ENTRY("lock.default_ttl", "300.0", PHP_INI_ALL, php_lock_ini_seconds,
		default_ttl, zend_lock_globals, lock_globals)
PHP_INI_END()

/*
 * Tells a waiting core call whether to give up: a time limit that ran out
 * ends the wait; pending PHP signal handlers run here, and the wait ends only
 * when one of them threw.
 */
static int php_lock_interrupted(void)
{
	if (!zend_atomic_bool_load_ex(&EG(vm_interrupt))) {
		return 0;
	}
	if (zend_atomic_bool_load_ex(&EG(timed_out))) {
		return 1;
	}
	zend_atomic_bool_store_ex(&EG(vm_interrupt), false);
	if (zend_interrupt_function) {
		zend_interrupt_function(EG(current_execute_data));
	}
	return EG(exception) != NULL;
}

/* Lock\Store is for the built-in stores only: their operations live in C. */
static int php_lock_store_implemented(zend_class_entry *iface, zend_class_entry *ce)
{
	if (ce->type != ZEND_INTERNAL_CLASS) {
		zend_error_noreturn(E_ERROR, "%s cannot implement %s: it is implemented by the built-in stores only",
			ZSTR_VAL(ce->name), ZSTR_VAL(iface->name));
	}
	return SUCCESS;
}

static PHP_GINIT_FUNCTION(lock)
{
#if defined(COMPILE_DL_LOCK) && defined(ZTS)
	ZEND_TSRMLS_CACHE_UPDATE();
#endif
	memset(lock_globals, 0, sizeof(*lock_globals));
}

static PHP_MINIT_FUNCTION(lock)
{
	REGISTER_INI_ENTRIES();

	php_lock_ce_lock_exception = register_class_Lock_LockException(spl_ce_RuntimeException);
	php_lock_ce_timeout_exception = register_class_Lock_TimeoutException(php_lock_ce_lock_exception);
	php_lock_ce_expired_exception = register_class_Lock_ExpiredException(php_lock_ce_lock_exception);
	php_lock_ce_lost_exception = register_class_Lock_LostException(php_lock_ce_expired_exception);
	php_lock_ce_storage_exception = register_class_Lock_StorageException(php_lock_ce_lock_exception);
	php_lock_ce_store = register_class_Lock_Store();
	php_lock_ce_store->interface_gets_implemented = php_lock_store_implemented;

	php_lock_ce_flock_store = register_class_Lock_Store_FlockStore(php_lock_ce_store);
	php_lock_ce_semaphore_store = register_class_Lock_Store_SemaphoreStore(php_lock_ce_store);
	php_lock_ce_redis_store = register_class_Lock_Store_RedisStore(php_lock_ce_store);
	php_lock_ce_combined_store = register_class_Lock_Store_CombinedStore(php_lock_ce_store);
	php_lock_ce_postgres_store = register_class_Lock_Store_PostgresStore(php_lock_ce_store);
	php_lock_ce_mysql_store = register_class_Lock_Store_MysqlStore(php_lock_ce_store); /* MySQL store */
	/* --- MemcachedStore --- */
	php_lock_ce_memcached_store = register_class_Lock_Store_MemcachedStore(php_lock_ce_store);
	/* --- end MemcachedStore --- */
	php_lock_ce_lock = register_class_Lock_Lock();
	php_lock_ce_factory = register_class_Lock_Factory();
	php_lock_setup_store_classes();
	php_lock_setup_lock_class();
	php_lock_setup_factory_class();

	lkc_set_interrupt_hook(php_lock_interrupted);
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(lock)
{
	UNREGISTER_INI_ENTRIES();
	/* The process ends: the holds left to the refresher run out their TTLs. */
	lkc_auto_shutdown();
	/* The process ends: the flock and semaphore holds kept for restoreLock() go now, as the kernel would free them. */
	php_lock_release_parked();
	lkc_redis_pool_shutdown();
#ifdef HAVE_LOCK_PGSQL
	lkc_pg_pool_shutdown();
#endif
#ifdef HAVE_LOCK_MYSQL /* MySQL store */
	lkc_my_pool_shutdown();
#endif
	/* --- MemcachedStore --- */
#ifdef LKC_HAVE_MEMCACHED
	lkc_memcached_pool_shutdown();
#endif
	/* --- end MemcachedStore --- */
	return SUCCESS;
}

static PHP_RSHUTDOWN_FUNCTION(lock)
{
#ifdef HAVE_LOCK_MYSQL /* MySQL store */
	/* First: a wait a bailout cut short must not be granted what the holds released below free. */
	lkc_my_request_end();
#endif
	php_lock_release_all();
	return SUCCESS;
}

/* Adds a store's class name to the built list, or to the missing one with the library it lacked. */
static void php_lock_info_store(smart_str *built, smart_str *missing, const char *name, bool is_built, const char *lib)
{
	smart_str *list = is_built ? built : missing;

	if (list->s != NULL) {
		smart_str_appends(list, ", ");
	}
	smart_str_appends(list, name);
	if (!is_built) {
		smart_str_append_printf(list, " (no %s at build time)", lib);
	}
}

static PHP_MINFO_FUNCTION(lock)
{
	/* Every store by its class name, the built ones and those not built (with why), then the libraries. */
	smart_str built = {0}, missing = {0};
	bool pgsql = false, mysql = false, memcached = false;

#ifdef HAVE_LOCK_PGSQL
	pgsql = true;
#endif
#ifdef HAVE_LOCK_MYSQL
	mysql = true;
#endif
#ifdef LKC_HAVE_MEMCACHED
	memcached = true;
#endif
	php_lock_info_store(&built, &missing, "FlockStore", true, NULL);
	php_lock_info_store(&built, &missing, "SemaphoreStore", true, NULL);
	php_lock_info_store(&built, &missing, "RedisStore", true, NULL);
	php_lock_info_store(&built, &missing, "PostgresStore", pgsql, "libpq");
	php_lock_info_store(&built, &missing, "MysqlStore", mysql, "libmariadb");
	php_lock_info_store(&built, &missing, "MemcachedStore", memcached, "libmemcached");
	smart_str_0(&built);
	smart_str_0(&missing);
	php_info_print_table_start();
	php_info_print_table_row(2, "lock support", "enabled");
	php_info_print_table_row(2, "Version", PHP_LOCK_VERSION);
	php_info_print_table_row(2, "Stores", ZSTR_VAL(built.s));
	php_info_print_table_row(2, "Stores not built", missing.s != NULL ? ZSTR_VAL(missing.s) : "none");
	php_info_print_table_row(2, "hiredis version", lkc_redis_hiredis_version());
#ifdef HAVE_LOCK_PGSQL
	php_info_print_table_row(2, "libpq version", lkc_pg_libpq_version());
#endif
#ifdef HAVE_LOCK_MYSQL
	php_info_print_table_row(2, "libmariadb version", lkc_my_client_version());
#endif
#ifdef LKC_HAVE_MEMCACHED
	php_info_print_table_row(2, "libmemcached version", lkc_memcached_version());
#endif
	{
		char refreshed[24];

		snprintf(refreshed, sizeof(refreshed), "%zu", lkc_auto_count());
		php_info_print_table_row(2, "Holds refreshed in the background", refreshed);
	}
	php_info_print_table_end();
	smart_str_free(&built);
	smart_str_free(&missing);
	php_lock_stats_info();
	DISPLAY_INI_ENTRIES();
}

zend_module_entry lock_module_entry = {
	STANDARD_MODULE_HEADER,
	"lock",
	ext_functions,
	PHP_MINIT(lock),
	PHP_MSHUTDOWN(lock),
	NULL,
	PHP_RSHUTDOWN(lock),
	PHP_MINFO(lock),
	PHP_LOCK_VERSION,
	PHP_MODULE_GLOBALS(lock),
	PHP_GINIT(lock),
	NULL,
	NULL,
	STANDARD_MODULE_PROPERTIES_EX
};

#ifdef COMPILE_DL_LOCK
# ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
# endif
ZEND_GET_MODULE(lock)
#endif
