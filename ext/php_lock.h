/* The Zend layer of the lock extension: shared declarations of its files. */
#ifndef PHP_LOCK_H
#define PHP_LOCK_H

#include "php.h"
#include "core/lkc.h"

extern zend_module_entry lock_module_entry;
#define phpext_lock_ptr &lock_module_entry

#define PHP_LOCK_VERSION LKC_VERSION

/* A Lock\Lock object. */
typedef struct php_lock_obj {
	lkc_hold hold;
	/*
	 * The core store, retained: at request end the engine may free the Lock\Store
	 * object first, and a lock must still be able to drop its hold.
	 */
	lkc_store *store;
	int64_t ttl_ms;              /* LKC_TTL_NONE for no expiry */
	bool auto_release;
	int64_t auto_ms;             /* $autoRefresh: 0 off, -1 for as long as the hold lasts, else the most ms of refreshing */
	uint64_t auto_until_ns;      /* the current hold's bound (auto_ms > 0), 0 none */
	lkc_auto *refresher;         /* the core's record while the thread refreshes the hold, else NULL */
	int64_t auto_ttl_ms;         /* the TTL the thread refreshes with (that of the last refresh) */
	bool ready;                  /* the constructor ran */
	/* The registry of held locks that request shutdown releases. */
	struct php_lock_obj *prev;
	struct php_lock_obj *next;
	bool registered;
	zend_object std;
} php_lock_obj;

/* A Lock\Store\* object. */
typedef struct {
	lkc_store *store;
	zend_object std;
} php_lock_store_obj;

static inline php_lock_obj *php_lock_from_obj(zend_object *obj)
{
	return (php_lock_obj *) ((char *) obj - XtOffsetOf(php_lock_obj, std));
}

static inline php_lock_store_obj *php_lock_store_from_obj(zend_object *obj)
{
	return (php_lock_store_obj *) ((char *) obj - XtOffsetOf(php_lock_store_obj, std));
}

ZEND_BEGIN_MODULE_GLOBALS(lock)
	double redis_timeout;
	double default_ttl;
	php_lock_obj *held;          /* locks holding something, newest first */
	struct php_lock_parked *parked; /* process-bound holds that outlived their lock object */
ZEND_END_MODULE_GLOBALS(lock)

ZEND_EXTERN_MODULE_GLOBALS(lock)
#define LOCK_G(v) ZEND_MODULE_GLOBALS_ACCESSOR(lock, v)

extern zend_class_entry *php_lock_ce_lock_exception;
extern zend_class_entry *php_lock_ce_timeout_exception;
extern zend_class_entry *php_lock_ce_expired_exception;
extern zend_class_entry *php_lock_ce_lost_exception;
extern zend_class_entry *php_lock_ce_storage_exception;
extern zend_class_entry *php_lock_ce_store;
extern zend_class_entry *php_lock_ce_lock;
extern zend_class_entry *php_lock_ce_factory;
extern zend_class_entry *php_lock_ce_flock_store;
extern zend_class_entry *php_lock_ce_semaphore_store;
extern zend_class_entry *php_lock_ce_redis_store;
extern zend_class_entry *php_lock_ce_combined_store;
extern zend_class_entry *php_lock_ce_postgres_store;
extern zend_class_entry *php_lock_ce_mysql_store; /* MySQL store */
/* --- MemcachedStore --- */
extern zend_class_entry *php_lock_ce_memcached_store;
/* --- end MemcachedStore --- */

/* lock_util.c, below every class: the one place where core result codes become PHP exceptions. */
void php_lock_throw(lkc_rc rc, const lkc_err *err, const lkc_hold *hold);
/* Validates a duration argument (TTL, timeout, delay): finite and > 0 (or >= 0 when zero_ok). */
bool php_lock_seconds_to_ms(double seconds, uint32_t arg_num, bool zero_ok, int64_t *ms);
/* As php_lock_seconds_to_ms, with the message naming what (an option) inside the argument. */
bool php_lock_duration_to_ms(double seconds, uint32_t arg_num, const char *what, bool zero_ok, int64_t *ms);
/* Validates a TTL argument (null: no expiry); false when it threw. */
bool php_lock_ttl_arg(double ttl, bool is_null, uint32_t arg_num, int64_t *ttl_ms);
/* Checks a resource argument: 1 byte to 64 KiB; false when it threw. */
bool php_lock_resource_arg(zend_string *resource, uint32_t arg_num);

/* Set up handlers of the classes registered in MINIT. */
void php_lock_setup_lock_class(void);
void php_lock_setup_factory_class(void);
void php_lock_setup_store_classes(void);

/* Creates a store object from a DSN ("flock:", "semaphore:", "redis://..."); false when it threw. */
bool php_lock_store_from_dsn(zval *return_value, zend_string *dsn, uint32_t arg_num);
/* Initialises a new Lock\Lock object, with owner (argument owner_arg) or a random one when NULL; false when it threw. */
bool php_lock_init(php_lock_obj *lock, zend_string *resource, lkc_store *store,
	int64_t ttl_ms, bool auto_release, zend_string *owner, uint32_t owner_arg);
/* Reads an $autoRefresh argument (bool|float) into *auto_ms: 0 off, -1 on, else the bound; false when it threw. */
bool php_lock_auto_refresh_arg(zval *arg, uint32_t arg_num, int64_t *auto_ms);
/* Makes a new lock stand for the hold of owner taken elsewhere; false when it threw. */
bool php_lock_restore(php_lock_obj *lock, zend_string *owner, uint32_t arg_num);
/* Releases, silently, every hold the request still has (request end, fatal error included). */
void php_lock_release_all(void);
/* Gives up the holds that outlived their objects (module shutdown: the process ends). */
void php_lock_release_parked(void);

/* lock_stats.c: Lock\stats(); the counters' table of phpinfo(). */
void php_lock_stats_info(void);

#endif
