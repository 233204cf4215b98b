--TEST--
Lock, Factory and store objects cannot be cloned or serialized
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());
$objects = [
    new Lock\Lock('r', $store),
    new Lock\Factory($store),
    $store,
    new Lock\Store\SemaphoreStore(),
    new Lock\Store\RedisStore(lock_test_redis_dsn()),
    lock_test_store('pgsql'),
    lock_test_store('pgsql-table'),
    lock_test_store('mysql'),
    lock_test_store('mysql-table'),
    lock_test_store('memcached'),
];
foreach ($objects as $object) {
    lock_test_expect_throw(fn () => clone $object);
    lock_test_expect_throw(fn () => serialize($object));
}
foreach (['Lock\Lock', 'Lock\Factory', 'Lock\Store\FlockStore', 'Lock\Store\PostgresStore', 'Lock\Store\MysqlStore', 'Lock\Store\MemcachedStore'] as $class) {
    $len = strlen($class);
    lock_test_expect_throw(fn () => unserialize("O:$len:\"$class\":0:{}"));
}
// A held lock is not duplicated by a failed clone.
$lock = $objects[0];
var_dump($lock->acquire());
lock_test_expect_throw(fn () => clone $lock);
var_dump($lock->isAcquired());
?>
--EXPECT--
Error: Trying to clone an uncloneable object of class Lock\Lock
Exception: Serialization of 'Lock\Lock' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Factory
Exception: Serialization of 'Lock\Factory' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\FlockStore
Exception: Serialization of 'Lock\Store\FlockStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\SemaphoreStore
Exception: Serialization of 'Lock\Store\SemaphoreStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\RedisStore
Exception: Serialization of 'Lock\Store\RedisStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\PostgresStore
Exception: Serialization of 'Lock\Store\PostgresStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\PostgresStore
Exception: Serialization of 'Lock\Store\PostgresStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\MysqlStore
Exception: Serialization of 'Lock\Store\MysqlStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\MysqlStore
Exception: Serialization of 'Lock\Store\MysqlStore' is not allowed
Error: Trying to clone an uncloneable object of class Lock\Store\MemcachedStore
Exception: Serialization of 'Lock\Store\MemcachedStore' is not allowed
Exception: Unserialization of 'Lock\Lock' is not allowed
Exception: Unserialization of 'Lock\Factory' is not allowed
Exception: Unserialization of 'Lock\Store\FlockStore' is not allowed
Exception: Unserialization of 'Lock\Store\PostgresStore' is not allowed
Exception: Unserialization of 'Lock\Store\MysqlStore' is not allowed
Exception: Unserialization of 'Lock\Store\MemcachedStore' is not allowed
bool(true)
Error: Trying to clone an uncloneable object of class Lock\Lock
bool(true)
