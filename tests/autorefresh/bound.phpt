--TEST--
$autoRefresh as a float bounds the refreshing: a 1 s hold with a bound of 2.5 s is gone by 2.5 s + TTL, and holds until about then
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$ttl = 1.0;
$bound = 2.5;
lock_test_each_kind(['redis', 'combined', 'pgsql-table'], function (string $kind) use ($ttl, $bound): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store, $ttl, true, null, $bound);
    $start = microtime(true);
    var_dump($lock->acquire());
    $other = new Lock\Lock($resource, $store, 10.0);
    usleep((int) (2.0 * 1e6));
    echo 'held at 2 s: ', var_export(!$other->acquire(), true), "\n";
    var_dump($other->acquire(true, 5.0));
    $at = microtime(true) - $start;
    echo 'gone by bound + TTL: ', var_export($at <= $bound + $ttl + lock_test_patience(0.5), true), "\n";
    // The last refresh was made a third of the TTL or less before the bound.
    echo 'held until bound - TTL/3 + TTL: ', var_export($at >= $bound - $ttl / 3 + $ttl - 0.05, true), "\n";
    var_dump($lock->isAcquired());
    $other->release();
    // A restore starts a bound of its own.
    $lock = new Lock\Lock($resource, $store, $ttl, false);
    var_dump($lock->acquire());
    $owner = $lock->getOwner();
    unset($lock);
    $restored = (new Lock\Factory($store, $ttl))->restoreLock($resource, $owner, false, true, 1.5);
    $start = microtime(true);
    var_dump($other->acquire(true, 5.0));
    echo 'restored, gone by its bound + TTL: ', var_export(microtime(true) - $start <= 1.5 + $ttl + lock_test_patience(0.5), true), "\n";
    $other->release();
});
?>
--EXPECT--
-- redis, combined, pgsql-table
bool(true)
held at 2 s: true
bool(true)
gone by bound + TTL: true
held until bound - TTL/3 + TTL: true
bool(false)
bool(true)
bool(true)
restored, gone by its bound + TTL: true
