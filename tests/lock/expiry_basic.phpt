--TEST--
Lock::isExpired() and getRemainingLifetime(): local view of the TTL, on every store (none on stores without expiry)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    if (!$store->supports(Lock\Store::EXPIRING)) {
        echo "no expiry\n";
        $lock = new Lock\Lock(lock_test_resource(), $store, 0.001);
        var_dump($lock->getRemainingLifetime());
        $lock->acquire();
        usleep(20000);
        // A TTL means nothing to a store without expiry: never expired, no lifetime.
        var_dump($lock->isExpired());
        var_dump($lock->getRemainingLifetime());
        var_dump($lock->isAcquired());
        $lock->release();
        return;
    }

    echo "expiring\n";
    $lock = new Lock\Lock(lock_test_resource(), $store, 300.0);
    var_dump($lock->isExpired());
    var_dump($lock->getRemainingLifetime());
    $lock->acquire();
    var_dump($lock->isExpired());
    $left = $lock->getRemainingLifetime();
    var_dump(is_float($left) && $left > 0 && $left <= 300.0);
    // refresh() with a shorter TTL shortens the lifetime; the lock's TTL stays.
    $lock->refresh(100.0);
    $left = $lock->getRemainingLifetime();
    var_dump($left > 0 && $left <= 100.0);
    var_dump($lock->getTtl());
    $lock->refresh();
    var_dump($lock->getRemainingLifetime() > 100.0);
    $lock->release();
    var_dump($lock->getRemainingLifetime());
    var_dump($lock->isExpired());

    // A hold whose TTL ran out is expired locally, and its lifetime is 0.
    $short = new Lock\Lock(lock_test_resource(), $store, 300.0);
    var_dump($short->acquire());
    $short->refresh(0.05);
    // The local view runs out first (it counts from before the request); then the server's.
    lock_test_wait_until(fn () => $short->isExpired(), 30, 'the TTL to run out');
    lock_test_wait_until(fn () => !$store->isLocked($short->getResource()), 30, 'the hold to expire in the store');
    var_dump($short->getRemainingLifetime());
    var_dump($short->isAcquired());
    // Acquiring again gives a fresh hold of the lock's own TTL.
    var_dump($short->acquire());
    var_dump($short->isExpired());
    var_dump($short->getRemainingLifetime() > 100.0);
    $short->release();

    // No TTL: no expiry on an expiring store either.
    $forever = new Lock\Lock(lock_test_resource(), $store, null);
    $forever->acquire();
    var_dump($forever->isExpired());
    var_dump($forever->getRemainingLifetime());
    $forever->release();
});
?>
--EXPECT--
-- flock, semaphore, pgsql, mysql
no expiry
NULL
bool(false)
NULL
bool(true)
-- redis, combined, pgsql-table, mysql-table, memcached
expiring
bool(false)
NULL
bool(false)
bool(true)
bool(true)
float(300)
bool(true)
NULL
bool(false)
bool(true)
float(0)
bool(false)
bool(true)
bool(false)
bool(true)
bool(false)
NULL
