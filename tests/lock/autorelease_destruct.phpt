--TEST--
A held lock is released when the object is destroyed (autoRelease), on every store
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    var_dump($lock->acquire());
    var_dump($store->isLocked($resource));
    unset($lock);
    var_dump($store->isLocked($resource));

    // A lock that goes out of scope in a function is released too.
    (function () use ($resource, $store) {
        $l = new Lock\Lock($resource, $store);
        $l->acquire();
    })();
    var_dump($store->isLocked($resource));

    // Destroyed while another lock holds it: nothing of the other's hold is touched.
    $holder = new Lock\Lock($resource, $store);
    $holder->acquire();
    $loser = new Lock\Lock($resource, $store);
    var_dump($loser->acquire());
    unset($loser);
    var_dump($holder->isAcquired());
    $holder->release();

    // Lock objects in a reference cycle are released when the cycle collector frees them.
    $cycle = new stdClass();
    $cycle->self = $cycle;
    $cycle->lock = new Lock\Lock($resource, $store);
    $cycle->lock->acquire();
    unset($cycle);
    gc_collect_cycles();
    var_dump($store->isLocked($resource));
});

echo "== autoRelease=false keeps the hold after the object is gone, until restoreLock() releases it\n";
// In this process on every store (on process-bound ones, only here).
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store, 300.0, false);
    $lock->acquire();
    $owner = $lock->getOwner();
    unset($lock);
    var_dump($store->isLocked($resource));
    $other = new Lock\Lock($resource, $store);
    var_dump($other->acquire());
    (new Lock\Factory($store))->restoreLock($resource, $owner)->release();
    var_dump($store->isLocked($resource));
    var_dump($other->acquire());
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
bool(false)
== autoRelease=false keeps the hold after the object is gone, until restoreLock() releases it
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(false)
bool(false)
bool(true)
