--TEST--
Two Lock objects on the same resource conflict, even in one process, on every store
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $a = new Lock\Lock($resource, $store);
    $b = new Lock\Lock($resource, $store);
    $other = new Lock\Lock(lock_test_resource(), $store);
    var_dump($a->acquire());
    var_dump($b->acquire());
    var_dump($b->acquire(true, 0.05));
    var_dump($b->isAcquired());
    // A different resource is independent.
    var_dump($other->acquire());
    // Releasing b (not held) does not release a.
    $b->release();
    var_dump($a->isAcquired());
    $a->release();
    var_dump($b->acquire());
    var_dump($a->acquire());
    $b->release();
    $other->release();
});

// Two store objects on the same backend conflict too.
echo "-- two flock stores\n";
$dir = lock_test_tmpdir();
$a = new Lock\Lock('r', new Lock\Store\FlockStore($dir));
$b = new Lock\Lock('r', new Lock\Store\FlockStore($dir));
var_dump($a->acquire(), $b->acquire());
echo "-- two semaphore stores\n";
$r = lock_test_resource();
$a = new Lock\Lock($r, new Lock\Store\SemaphoreStore());
$b = new Lock\Lock($r, new Lock\Store\SemaphoreStore());
var_dump($a->acquire(), $b->acquire());
echo "-- two redis stores\n";
$prefix = lock_test_prefix();
$a = new Lock\Lock('r', lock_test_store('redis', null, $prefix));
$b = new Lock\Lock('r', lock_test_store('redis', null, $prefix));
var_dump($a->acquire(), $b->acquire());
// Another prefix is another namespace.
$c = new Lock\Lock('r', lock_test_store('redis'));
var_dump($c->acquire());
?>
--EXPECT--
-- flock, semaphore, redis, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
-- two flock stores
bool(true)
bool(false)
-- two semaphore stores
bool(true)
bool(false)
-- two redis stores
bool(true)
bool(false)
bool(true)
