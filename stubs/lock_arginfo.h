/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: 0c7050e098dad466cb0ffad484dfdc5dab9f9799 */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Lock_stats, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Store_supports, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, capability, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Store_isLocked, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Store_forceRelease, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Store_waitUntilFree, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Store_inspect, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Lock___construct, 0, 0, 2)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
	ZEND_ARG_OBJ_INFO(0, store, Lock\\Store, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 1, "300.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, autoRelease, _IS_BOOL, 0, "true")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, owner, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_MASK(0, autoRefresh, MAY_BE_BOOL|MAY_BE_DOUBLE, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_acquire, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, blocking, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Lock_acquireRead arginfo_class_Lock_Lock_acquire

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_run, 0, 1, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO(0, callback, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_refresh, 0, 0, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_release, 0, 0, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, delay, IS_DOUBLE, 0, "0.0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_isAcquired, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Lock_isExpired arginfo_class_Lock_Lock_isAcquired

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_getRemainingLifetime, 0, 0, IS_DOUBLE, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_getResource, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Lock_getOwner arginfo_class_Lock_Lock_getResource

#define arginfo_class_Lock_Lock_getTtl arginfo_class_Lock_Lock_getRemainingLifetime

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Lock_Lock_getFencingToken, 0, 0, IS_LONG, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Factory___construct, 0, 0, 1)
	ZEND_ARG_OBJ_INFO(0, store, Lock\\Store, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, defaultTtl, IS_DOUBLE, 1, "300.0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Lock_Factory_fromDsn, 0, 1, Lock\\Factory, 0)
	ZEND_ARG_TYPE_INFO(0, dsn, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Lock_Factory_createLock, 0, 1, Lock\\Lock, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
	ZEND_ARG_TYPE_MASK(0, ttl, MAY_BE_DOUBLE|MAY_BE_NULL|MAY_BE_FALSE, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, autoRelease, _IS_BOOL, 0, "true")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, owner, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_MASK(0, autoRefresh, MAY_BE_BOOL|MAY_BE_DOUBLE, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Lock_Factory_restoreLock, 0, 2, Lock\\Lock, 0)
	ZEND_ARG_TYPE_INFO(0, resource, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, owner, IS_STRING, 0)
	ZEND_ARG_TYPE_MASK(0, ttl, MAY_BE_DOUBLE|MAY_BE_NULL|MAY_BE_FALSE, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, autoRelease, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_MASK(0, autoRefresh, MAY_BE_BOOL|MAY_BE_DOUBLE, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Lock_Factory_getStore, 0, 0, Lock\\Store, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_FlockStore___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, directory, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_FlockStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_FlockStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_FlockStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_FlockStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_FlockStore_inspect arginfo_class_Lock_Store_inspect

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_SemaphoreStore___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_SemaphoreStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_SemaphoreStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_SemaphoreStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_SemaphoreStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_SemaphoreStore_inspect arginfo_class_Lock_Store_inspect

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_CombinedStore___construct, 0, 0, 1)
	ZEND_ARG_TYPE_INFO(0, stores, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, strategy, IS_STRING, 0, "\'consensus\'")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_CombinedStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_CombinedStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_CombinedStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_CombinedStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_CombinedStore_inspect arginfo_class_Lock_Store_inspect

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_RedisStore___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, dsn, IS_STRING, 0, "\'redis://127.0.0.1:6379\'")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_RedisStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_RedisStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_RedisStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_RedisStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_RedisStore_inspect arginfo_class_Lock_Store_inspect

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_PostgresStore___construct, 0, 0, 1)
	ZEND_ARG_TYPE_INFO(0, dsn, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_PostgresStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_PostgresStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_PostgresStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_PostgresStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_PostgresStore_inspect arginfo_class_Lock_Store_inspect

#define arginfo_class_Lock_Store_MysqlStore___construct arginfo_class_Lock_Store_PostgresStore___construct

#define arginfo_class_Lock_Store_MysqlStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_MysqlStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_MysqlStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_MysqlStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_MysqlStore_inspect arginfo_class_Lock_Store_inspect

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Lock_Store_MemcachedStore___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, dsn, IS_STRING, 0, "\'memcached://127.0.0.1:11211\'")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_Lock_Store_MemcachedStore_supports arginfo_class_Lock_Store_supports

#define arginfo_class_Lock_Store_MemcachedStore_isLocked arginfo_class_Lock_Store_isLocked

#define arginfo_class_Lock_Store_MemcachedStore_forceRelease arginfo_class_Lock_Store_forceRelease

#define arginfo_class_Lock_Store_MemcachedStore_waitUntilFree arginfo_class_Lock_Store_waitUntilFree

#define arginfo_class_Lock_Store_MemcachedStore_inspect arginfo_class_Lock_Store_inspect


ZEND_FUNCTION(Lock_stats);
ZEND_METHOD(Lock_Lock, __construct);
ZEND_METHOD(Lock_Lock, acquire);
ZEND_METHOD(Lock_Lock, acquireRead);
ZEND_METHOD(Lock_Lock, run);
ZEND_METHOD(Lock_Lock, refresh);
ZEND_METHOD(Lock_Lock, release);
ZEND_METHOD(Lock_Lock, isAcquired);
ZEND_METHOD(Lock_Lock, isExpired);
ZEND_METHOD(Lock_Lock, getRemainingLifetime);
ZEND_METHOD(Lock_Lock, getResource);
ZEND_METHOD(Lock_Lock, getOwner);
ZEND_METHOD(Lock_Lock, getTtl);
ZEND_METHOD(Lock_Lock, getFencingToken);
ZEND_METHOD(Lock_Factory, __construct);
ZEND_METHOD(Lock_Factory, fromDsn);
ZEND_METHOD(Lock_Factory, createLock);
ZEND_METHOD(Lock_Factory, restoreLock);
ZEND_METHOD(Lock_Factory, getStore);
ZEND_METHOD(Lock_Store_FlockStore, __construct);
ZEND_METHOD(Lock_Store_FlockStore, supports);
ZEND_METHOD(Lock_Store_FlockStore, isLocked);
ZEND_METHOD(Lock_Store_FlockStore, forceRelease);
ZEND_METHOD(Lock_Store_FlockStore, waitUntilFree);
ZEND_METHOD(Lock_Store_FlockStore, inspect);
ZEND_METHOD(Lock_Store_SemaphoreStore, __construct);
ZEND_METHOD(Lock_Store_SemaphoreStore, supports);
ZEND_METHOD(Lock_Store_SemaphoreStore, isLocked);
ZEND_METHOD(Lock_Store_SemaphoreStore, forceRelease);
ZEND_METHOD(Lock_Store_SemaphoreStore, waitUntilFree);
ZEND_METHOD(Lock_Store_SemaphoreStore, inspect);
ZEND_METHOD(Lock_Store_CombinedStore, __construct);
ZEND_METHOD(Lock_Store_CombinedStore, supports);
ZEND_METHOD(Lock_Store_CombinedStore, isLocked);
ZEND_METHOD(Lock_Store_CombinedStore, forceRelease);
ZEND_METHOD(Lock_Store_CombinedStore, waitUntilFree);
ZEND_METHOD(Lock_Store_CombinedStore, inspect);
ZEND_METHOD(Lock_Store_RedisStore, __construct);
ZEND_METHOD(Lock_Store_RedisStore, supports);
ZEND_METHOD(Lock_Store_RedisStore, isLocked);
ZEND_METHOD(Lock_Store_RedisStore, forceRelease);
ZEND_METHOD(Lock_Store_RedisStore, waitUntilFree);
ZEND_METHOD(Lock_Store_RedisStore, inspect);
ZEND_METHOD(Lock_Store_PostgresStore, __construct);
ZEND_METHOD(Lock_Store_PostgresStore, supports);
ZEND_METHOD(Lock_Store_PostgresStore, isLocked);
ZEND_METHOD(Lock_Store_PostgresStore, forceRelease);
ZEND_METHOD(Lock_Store_PostgresStore, waitUntilFree);
ZEND_METHOD(Lock_Store_PostgresStore, inspect);
ZEND_METHOD(Lock_Store_MysqlStore, __construct);
ZEND_METHOD(Lock_Store_MysqlStore, supports);
ZEND_METHOD(Lock_Store_MysqlStore, isLocked);
ZEND_METHOD(Lock_Store_MysqlStore, forceRelease);
ZEND_METHOD(Lock_Store_MysqlStore, waitUntilFree);
ZEND_METHOD(Lock_Store_MysqlStore, inspect);
ZEND_METHOD(Lock_Store_MemcachedStore, __construct);
ZEND_METHOD(Lock_Store_MemcachedStore, supports);
ZEND_METHOD(Lock_Store_MemcachedStore, isLocked);
ZEND_METHOD(Lock_Store_MemcachedStore, forceRelease);
ZEND_METHOD(Lock_Store_MemcachedStore, waitUntilFree);
ZEND_METHOD(Lock_Store_MemcachedStore, inspect);


static const zend_function_entry ext_functions[] = {
	ZEND_NS_FALIAS("Lock", stats, Lock_stats, arginfo_Lock_stats)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_LockException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Lock_TimeoutException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Lock_ExpiredException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Lock_LostException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Lock_StorageException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_methods[] = {
	ZEND_ABSTRACT_ME_WITH_FLAGS(Lock_Store, supports, arginfo_class_Lock_Store_supports, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(Lock_Store, isLocked, arginfo_class_Lock_Store_isLocked, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(Lock_Store, forceRelease, arginfo_class_Lock_Store_forceRelease, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(Lock_Store, waitUntilFree, arginfo_class_Lock_Store_waitUntilFree, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(Lock_Store, inspect, arginfo_class_Lock_Store_inspect, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Lock_methods[] = {
	ZEND_ME(Lock_Lock, __construct, arginfo_class_Lock_Lock___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, acquire, arginfo_class_Lock_Lock_acquire, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, acquireRead, arginfo_class_Lock_Lock_acquireRead, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, run, arginfo_class_Lock_Lock_run, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, refresh, arginfo_class_Lock_Lock_refresh, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, release, arginfo_class_Lock_Lock_release, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, isAcquired, arginfo_class_Lock_Lock_isAcquired, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, isExpired, arginfo_class_Lock_Lock_isExpired, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, getRemainingLifetime, arginfo_class_Lock_Lock_getRemainingLifetime, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, getResource, arginfo_class_Lock_Lock_getResource, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, getOwner, arginfo_class_Lock_Lock_getOwner, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, getTtl, arginfo_class_Lock_Lock_getTtl, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Lock, getFencingToken, arginfo_class_Lock_Lock_getFencingToken, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Factory_methods[] = {
	ZEND_ME(Lock_Factory, __construct, arginfo_class_Lock_Factory___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Factory, fromDsn, arginfo_class_Lock_Factory_fromDsn, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Lock_Factory, createLock, arginfo_class_Lock_Factory_createLock, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Factory, restoreLock, arginfo_class_Lock_Factory_restoreLock, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Factory, getStore, arginfo_class_Lock_Factory_getStore, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_FlockStore_methods[] = {
	ZEND_ME(Lock_Store_FlockStore, __construct, arginfo_class_Lock_Store_FlockStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_FlockStore, supports, arginfo_class_Lock_Store_FlockStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_FlockStore, isLocked, arginfo_class_Lock_Store_FlockStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_FlockStore, forceRelease, arginfo_class_Lock_Store_FlockStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_FlockStore, waitUntilFree, arginfo_class_Lock_Store_FlockStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_FlockStore, inspect, arginfo_class_Lock_Store_FlockStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_SemaphoreStore_methods[] = {
	ZEND_ME(Lock_Store_SemaphoreStore, __construct, arginfo_class_Lock_Store_SemaphoreStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_SemaphoreStore, supports, arginfo_class_Lock_Store_SemaphoreStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_SemaphoreStore, isLocked, arginfo_class_Lock_Store_SemaphoreStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_SemaphoreStore, forceRelease, arginfo_class_Lock_Store_SemaphoreStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_SemaphoreStore, waitUntilFree, arginfo_class_Lock_Store_SemaphoreStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_SemaphoreStore, inspect, arginfo_class_Lock_Store_SemaphoreStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_CombinedStore_methods[] = {
	ZEND_ME(Lock_Store_CombinedStore, __construct, arginfo_class_Lock_Store_CombinedStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_CombinedStore, supports, arginfo_class_Lock_Store_CombinedStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_CombinedStore, isLocked, arginfo_class_Lock_Store_CombinedStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_CombinedStore, forceRelease, arginfo_class_Lock_Store_CombinedStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_CombinedStore, waitUntilFree, arginfo_class_Lock_Store_CombinedStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_CombinedStore, inspect, arginfo_class_Lock_Store_CombinedStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_RedisStore_methods[] = {
	ZEND_ME(Lock_Store_RedisStore, __construct, arginfo_class_Lock_Store_RedisStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_RedisStore, supports, arginfo_class_Lock_Store_RedisStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_RedisStore, isLocked, arginfo_class_Lock_Store_RedisStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_RedisStore, forceRelease, arginfo_class_Lock_Store_RedisStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_RedisStore, waitUntilFree, arginfo_class_Lock_Store_RedisStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_RedisStore, inspect, arginfo_class_Lock_Store_RedisStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_PostgresStore_methods[] = {
	ZEND_ME(Lock_Store_PostgresStore, __construct, arginfo_class_Lock_Store_PostgresStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_PostgresStore, supports, arginfo_class_Lock_Store_PostgresStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_PostgresStore, isLocked, arginfo_class_Lock_Store_PostgresStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_PostgresStore, forceRelease, arginfo_class_Lock_Store_PostgresStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_PostgresStore, waitUntilFree, arginfo_class_Lock_Store_PostgresStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_PostgresStore, inspect, arginfo_class_Lock_Store_PostgresStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_MysqlStore_methods[] = {
	ZEND_ME(Lock_Store_MysqlStore, __construct, arginfo_class_Lock_Store_MysqlStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MysqlStore, supports, arginfo_class_Lock_Store_MysqlStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MysqlStore, isLocked, arginfo_class_Lock_Store_MysqlStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MysqlStore, forceRelease, arginfo_class_Lock_Store_MysqlStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MysqlStore, waitUntilFree, arginfo_class_Lock_Store_MysqlStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MysqlStore, inspect, arginfo_class_Lock_Store_MysqlStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Lock_Store_MemcachedStore_methods[] = {
	ZEND_ME(Lock_Store_MemcachedStore, __construct, arginfo_class_Lock_Store_MemcachedStore___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MemcachedStore, supports, arginfo_class_Lock_Store_MemcachedStore_supports, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MemcachedStore, isLocked, arginfo_class_Lock_Store_MemcachedStore_isLocked, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MemcachedStore, forceRelease, arginfo_class_Lock_Store_MemcachedStore_forceRelease, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MemcachedStore, waitUntilFree, arginfo_class_Lock_Store_MemcachedStore_waitUntilFree, ZEND_ACC_PUBLIC)
	ZEND_ME(Lock_Store_MemcachedStore, inspect, arginfo_class_Lock_Store_MemcachedStore_inspect, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

static zend_class_entry *register_class_Lock_LockException(zend_class_entry *class_entry_RuntimeException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "LockException", class_Lock_LockException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_RuntimeException);
	class_entry->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	return class_entry;
}

static zend_class_entry *register_class_Lock_TimeoutException(zend_class_entry *class_entry_Lock_LockException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "TimeoutException", class_Lock_TimeoutException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Lock_LockException);
	class_entry->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	return class_entry;
}

static zend_class_entry *register_class_Lock_ExpiredException(zend_class_entry *class_entry_Lock_LockException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "ExpiredException", class_Lock_ExpiredException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Lock_LockException);
	class_entry->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	return class_entry;
}

static zend_class_entry *register_class_Lock_LostException(zend_class_entry *class_entry_Lock_ExpiredException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "LostException", class_Lock_LostException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Lock_ExpiredException);
	class_entry->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	return class_entry;
}

static zend_class_entry *register_class_Lock_StorageException(zend_class_entry *class_entry_Lock_LockException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "StorageException", class_Lock_StorageException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Lock_LockException);
	class_entry->ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "Store", class_Lock_Store_methods);
	class_entry = zend_register_internal_interface(&ce);

	zval const_EXPIRING_value;
	ZVAL_LONG(&const_EXPIRING_value, LKC_CAP_EXPIRY);
	zend_string *const_EXPIRING_name = zend_string_init_interned("EXPIRING", sizeof("EXPIRING") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_EXPIRING_name, &const_EXPIRING_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_EXPIRING_name);

	zval const_SHARED_value;
	ZVAL_LONG(&const_SHARED_value, LKC_CAP_SHARED);
	zend_string *const_SHARED_name = zend_string_init_interned("SHARED", sizeof("SHARED") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_SHARED_name, &const_SHARED_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_SHARED_name);

	zval const_FENCING_value;
	ZVAL_LONG(&const_FENCING_value, LKC_CAP_FENCING);
	zend_string *const_FENCING_name = zend_string_init_interned("FENCING", sizeof("FENCING") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_FENCING_name, &const_FENCING_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_FENCING_name);

	zval const_PROCESS_BOUND_value;
	ZVAL_LONG(&const_PROCESS_BOUND_value, LKC_CAP_PROCESS_BOUND);
	zend_string *const_PROCESS_BOUND_name = zend_string_init_interned("PROCESS_BOUND", sizeof("PROCESS_BOUND") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_PROCESS_BOUND_name, &const_PROCESS_BOUND_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_PROCESS_BOUND_name);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Lock(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "Lock", class_Lock_Lock_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 4, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Factory(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock", "Factory", class_Lock_Factory_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "fromdsn", sizeof("fromdsn") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "createlock", sizeof("createlock") - 1), 3, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "restorelock", sizeof("restorelock") - 1), 1, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_FlockStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "FlockStore", class_Lock_Store_FlockStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_SemaphoreStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "SemaphoreStore", class_Lock_Store_SemaphoreStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_CombinedStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "CombinedStore", class_Lock_Store_CombinedStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_RedisStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "RedisStore", class_Lock_Store_RedisStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 1, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_PostgresStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "PostgresStore", class_Lock_Store_PostgresStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 1, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_MysqlStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "MysqlStore", class_Lock_Store_MysqlStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 1, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}

static zend_class_entry *register_class_Lock_Store_MemcachedStore(zend_class_entry *class_entry_Lock_Store)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Lock\\Store", "MemcachedStore", class_Lock_Store_MemcachedStore_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;
	zend_class_implements(class_entry, 1, class_entry_Lock_Store);


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	return class_entry;
}
