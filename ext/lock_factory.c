/* Lock\Factory: makes locks on one store with a default TTL. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "zend_exceptions.h"

zend_class_entry *php_lock_ce_factory;

typedef struct {
	zend_object *store;
	int64_t default_ttl_ms;
	zend_object std;
} php_lock_factory_obj;

static zend_object_handlers php_lock_factory_handlers;

static inline php_lock_factory_obj *php_lock_factory_from_obj(zend_object *obj)
{
	return (php_lock_factory_obj *) ((char *) obj - XtOffsetOf(php_lock_factory_obj, std));
}

#define THIS_FACTORY() php_lock_factory_from_obj(Z_OBJ_P(ZEND_THIS))

static zend_object *php_lock_factory_create(zend_class_entry *ce)
{
	php_lock_factory_obj *factory = zend_object_alloc(sizeof(php_lock_factory_obj), ce);

	zend_object_std_init(&factory->std, ce);
	object_properties_init(&factory->std, ce);
	factory->std.handlers = &php_lock_factory_handlers;
	return &factory->std;
}

static void php_lock_factory_free(zend_object *obj)
{
	php_lock_factory_obj *factory = php_lock_factory_from_obj(obj);

	if (factory->store) {
		OBJ_RELEASE(factory->store);
	}
	zend_object_std_dtor(&factory->std);
}

/* Lets the cycle collector see the store a factory references. */
static HashTable *php_lock_factory_get_gc(zend_object *obj, zval **table, int *n)
{
	php_lock_factory_obj *factory = php_lock_factory_from_obj(obj);
	zend_get_gc_buffer *buffer = zend_get_gc_buffer_create();

	if (factory->store) {
		zend_get_gc_buffer_add_obj(buffer, factory->store);
	}
	zend_get_gc_buffer_use(buffer, table, n);
	return zend_std_get_properties(obj);
}

/* Binds a new factory to store; false when it threw. */
static bool php_lock_factory_bind(php_lock_factory_obj *factory, zend_object *store, double ttl, bool ttl_null, uint32_t arg_num)
{
	if (php_lock_store_from_obj(store)->store == NULL) {
		zend_argument_type_error(1, "must be an initialized store");
		return false;
	}
	if (!php_lock_ttl_arg(ttl, ttl_null, arg_num, &factory->default_ttl_ms)) {
		return false;
	}
	GC_ADDREF(store);
	factory->store = store;
	return true;
}

ZEND_METHOD(Lock_Factory, __construct)
{
	php_lock_factory_obj *factory = THIS_FACTORY();
	zend_object *store;
	double ttl = 300.0;
	bool ttl_null = false;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_OBJ_OF_CLASS(store, php_lock_ce_store)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_null)
	ZEND_PARSE_PARAMETERS_END();

	if (factory->store) {
		zend_throw_error(NULL, "Lock\\Factory object is already constructed");
		RETURN_THROWS();
	}
	if (!php_lock_factory_bind(factory, store, ttl, ttl_null, 2)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Factory, fromDsn)
{
	zend_string *dsn;
	zval store;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(dsn)
	ZEND_PARSE_PARAMETERS_END();

	ZVAL_UNDEF(&store);
	if (!php_lock_store_from_dsn(&store, dsn, 1)) {
		RETURN_THROWS();
	}
	object_init_ex(return_value, php_lock_ce_factory);
	/* The INI default TTL is for factories made from configuration. */
	ok = php_lock_factory_bind(php_lock_factory_from_obj(Z_OBJ_P(return_value)), Z_OBJ(store),
		LOCK_G(default_ttl), false, 1);
	zval_ptr_dtor(&store);
	if (!ok) {
		RETURN_THROWS();
	}
}

/*
 * Reads a TTL argument of type float|false|null: false is the factory's default
 * TTL, null no expiry. False when it threw.
 */
static bool php_lock_factory_ttl_arg(const php_lock_factory_obj *factory, zval *ttl, uint32_t arg_num, int64_t *ttl_ms)
{
	double seconds;

	if (ttl == NULL || Z_TYPE_P(ttl) == IS_FALSE) {
		*ttl_ms = factory->default_ttl_ms;
		return true;
	}
	if (Z_TYPE_P(ttl) == IS_NULL) {
		*ttl_ms = LKC_TTL_NONE;
		return true;
	}
	if (Z_TYPE_P(ttl) == IS_DOUBLE) {
		seconds = Z_DVAL_P(ttl);
	} else if (Z_TYPE_P(ttl) == IS_TRUE || !zend_parse_arg_double_slow(ttl, &seconds, arg_num)) {
		/* The slow parser keeps PHP's own coercion rules, strict_types included. */
		if (!EG(exception)) {
			zend_argument_type_error(arg_num, "must be of type float|false|null, %s given", zend_zval_type_name(ttl));
		}
		return false;
	}
	return php_lock_seconds_to_ms(seconds, arg_num, false, ttl_ms);
}

/*
 * Makes the lock of createLock() and restoreLock() in return_value; ttl is the
 * TTL argument (NULL when not passed) and ttl_arg its number. owner, when not
 * NULL, is argument owner_arg: the hold to adopt with restore, else the new
 * lock's owner. False when it threw.
 */
static bool php_lock_factory_make(php_lock_factory_obj *factory, zval *return_value, zend_string *resource,
	uint32_t ttl_arg, zval *ttl, bool auto_release, zend_string *owner, uint32_t owner_arg, bool restore,
	zval *auto_refresh, uint32_t auto_arg)
{
	php_lock_obj *lock;
	int64_t ttl_ms, auto_ms;

	if (factory->store == NULL) {
		zend_throw_error(NULL, "Lock\\Factory object is not initialized");
		return false;
	}
	if (!php_lock_resource_arg(resource, 1) || !php_lock_factory_ttl_arg(factory, ttl, ttl_arg, &ttl_ms)
		|| !php_lock_auto_refresh_arg(auto_refresh, auto_arg, &auto_ms)) {
		return false;
	}
	object_init_ex(return_value, php_lock_ce_lock);
	lock = php_lock_from_obj(Z_OBJ_P(return_value));
	lock->auto_ms = auto_ms;
	if (!php_lock_init(lock, resource, php_lock_store_from_obj(factory->store)->store, ttl_ms, auto_release,
			restore ? NULL : owner, owner_arg)
		|| (restore && !php_lock_restore(lock, owner, owner_arg))) {
		zval_ptr_dtor(return_value);
		ZVAL_UNDEF(return_value);
		return false;
	}
	return true;
}

ZEND_METHOD(Lock_Factory, createLock)
{
	zend_string *resource;
	zval *ttl = NULL;
	bool auto_release = true;
	zend_string *owner = NULL;
	zval *auto_refresh = NULL;

	ZEND_PARSE_PARAMETERS_START(1, 5)
		Z_PARAM_STR(resource)
		Z_PARAM_OPTIONAL
		Z_PARAM_ZVAL(ttl)
		Z_PARAM_BOOL(auto_release)
		Z_PARAM_STR_OR_NULL(owner)
		Z_PARAM_ZVAL(auto_refresh)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_factory_make(THIS_FACTORY(), return_value, resource, 2, ttl, auto_release, owner, 4, false,
			auto_refresh, 5)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Factory, restoreLock)
{
	zend_string *resource, *owner;
	zval *ttl = NULL;
	bool auto_release = false;
	zval *auto_refresh = NULL;

	ZEND_PARSE_PARAMETERS_START(2, 5)
		Z_PARAM_STR(resource)
		Z_PARAM_STR(owner)
		Z_PARAM_OPTIONAL
		Z_PARAM_ZVAL(ttl)
		Z_PARAM_BOOL(auto_release)
		Z_PARAM_ZVAL(auto_refresh)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_factory_make(THIS_FACTORY(), return_value, resource, 3, ttl, auto_release, owner, 2, true,
			auto_refresh, 5)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Factory, getStore)
{
	php_lock_factory_obj *factory = THIS_FACTORY();

	ZEND_PARSE_PARAMETERS_NONE();

	if (factory->store == NULL) {
		zend_throw_error(NULL, "Lock\\Factory object is not initialized");
		RETURN_THROWS();
	}
	RETURN_OBJ_COPY(factory->store);
}

void php_lock_setup_factory_class(void)
{
	php_lock_ce_factory->create_object = php_lock_factory_create;
	memcpy(&php_lock_factory_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	php_lock_factory_handlers.offset = XtOffsetOf(php_lock_factory_obj, std);
	php_lock_factory_handlers.free_obj = php_lock_factory_free;
	php_lock_factory_handlers.get_gc = php_lock_factory_get_gc;
	php_lock_factory_handlers.clone_obj = NULL;
	php_lock_factory_handlers.compare = zend_objects_not_comparable;
}
