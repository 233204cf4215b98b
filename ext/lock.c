/* The lock module: registration, INI, phpinfo, request shutdown and the exception mapping. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "php_ini.h"
#include "ext/standard/info.h"
#include "zend_exceptions.h"
#include "zend_interfaces.h"
#include "zend_smart_str.h"
#include "zend_attributes.h"
#include "ext/spl/spl_exceptions.h"

#include "../stubs/lock_arginfo.h"

ZEND_DECLARE_MODULE_GLOBALS(lock)

zend_class_entry *php_lock_ce_lock_exception;
zend_class_entry *php_lock_ce_timeout_exception;
zend_class_entry *php_lock_ce_expired_exception;
zend_class_entry *php_lock_ce_lost_exception;
zend_class_entry *php_lock_ce_storage_exception;
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

/* Appends a resource name for a message: printable, escaped, cut at 64 bytes. */
static void php_lock_describe(smart_str *out, const lkc_hold *hold)
{
	size_t shown = MIN(hold->resource_len, 64);

	smart_str_appendc(out, '"');
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char) hold->resource[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			smart_str_appendc(out, (char) c);
		} else {
			smart_str_append_printf(out, "\\x%02x", c);
		}
	}
	if (shown < hold->resource_len) {
		smart_str_appends(out, "...");
	}
	smart_str_appendc(out, '"');
}

void php_lock_throw(lkc_rc rc, const lkc_err *err, const lkc_hold *hold)
{
	zend_class_entry *ce;
	smart_str msg = {0};

	switch (rc) {
		case LKC_BUSY:
		case LKC_INTERRUPTED:
			ce = php_lock_ce_timeout_exception;
			break;
		case LKC_EXPIRED:
			ce = php_lock_ce_expired_exception;
			break;
		case LKC_LOST:
			ce = php_lock_ce_lost_exception;
			break;
		case LKC_ERR_IO:
		case LKC_ERR_PROTOCOL:
		case LKC_ERR_REFUSED:
		case LKC_ERR_PERM:
		case LKC_ERR_SYSTEM:
			ce = php_lock_ce_storage_exception;
			break;
		case LKC_ERR_INVALID:
			zend_value_error("%s", err->msg);
			return;
		default:
			ce = php_lock_ce_lock_exception;
			break;
	}
	if (hold != NULL) {
		smart_str_appends(&msg, "Lock ");
		php_lock_describe(&msg, hold);
		smart_str_appends(&msg, ": ");
	}
	switch (rc) {
		case LKC_EXPIRED:
			smart_str_appends(&msg, "the hold expired (its TTL ran out) and nobody holds the resource");
			break;
		case LKC_LOST:
			smart_str_appends(&msg, "the hold was lost: somebody else holds the resource now");
			break;
		default:
			smart_str_appends(&msg, err->msg[0] ? err->msg : lkc_rc_name(rc));
			break;
	}
	smart_str_0(&msg);
	zend_throw_exception(ce, ZSTR_VAL(msg.s), 0);
	smart_str_free(&msg);
}

bool php_lock_seconds_to_ms(double seconds, uint32_t arg_num, bool zero_ok, int64_t *ms)
{
	return php_lock_duration_to_ms(seconds, arg_num, NULL, zero_ok, ms);
}

bool php_lock_duration_to_ms(double seconds, uint32_t arg_num, const char *what, bool zero_ok, int64_t *ms)
{
	const char *sep = what ? " " : "";
	double scaled;

	if (what == NULL) {
		what = "";
	}
	if (zend_isnan(seconds) || !zend_finite(seconds)) {
		zend_argument_value_error(arg_num, "%s%smust be a finite number", what, sep);
		return false;
	}
	if (seconds < 0 || (!zero_ok && seconds == 0)) {
		zend_argument_value_error(arg_num, "%s%smust be greater than %s0", what, sep, zero_ok ? "or equal to " : "");
		return false;
	}
	/* About 31 years: far beyond any sane hold, far below any overflow. */
	if (seconds > 1e9) {
		zend_argument_value_error(arg_num, "%s%smust be at most 1000000000 seconds", what, sep);
		return false;
	}
	/* Round up, so that a tiny positive duration is never zero milliseconds. */
	scaled = ceil(seconds * 1000.0);
	*ms = (int64_t) scaled;
	return true;
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
	lkc_redis_pool_shutdown();
	return SUCCESS;
}

static PHP_RSHUTDOWN_FUNCTION(lock)
{
	php_lock_release_all();
	return SUCCESS;
}

static PHP_MINFO_FUNCTION(lock)
{
	php_info_print_table_start();
	php_info_print_table_row(2, "lock support", "enabled");
	php_info_print_table_row(2, "Version", PHP_LOCK_VERSION);
	php_info_print_table_row(2, "hiredis version", lkc_redis_hiredis_version());
	php_info_print_table_row(2, "Stores", "flock, semaphore, redis");
	php_info_print_table_end();
	DISPLAY_INI_ENTRIES();
}

zend_module_entry lock_module_entry = {
	STANDARD_MODULE_HEADER,
	"lock",
	NULL,
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
