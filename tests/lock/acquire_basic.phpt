--TEST--
Lock::acquire() takes the hold; acquiring again while held refreshes it and returns true
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    var_dump($lock->isAcquired());
    var_dump($store->isLocked($resource));
    var_dump($lock->acquire());
    var_dump($lock->isAcquired());
    var_dump($store->isLocked($resource));
    // Again while held: still ours, no self-deadlock.
    var_dump($lock->acquire());
    var_dump($lock->acquire(true));
    var_dump($lock->acquire(true, 0.1));
    var_dump($lock->isAcquired());
    $lock->release();
    var_dump($lock->isAcquired());
    var_dump($store->isLocked($resource));
    // Released, it can be taken again.
    var_dump($lock->acquire());
    $lock->release();
    // release() of a lock that is not held is a no-op.
    $lock->release();
    var_dump($store->isLocked($resource));
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
bool(false)
