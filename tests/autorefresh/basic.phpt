--TEST--
$autoRefresh: a hold outlives many TTLs while its owner sleeps, on every expiring store; elsewhere accepted and nothing to do
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// The thread refreshes every third of the TTL; under valgrind, which runs one thread at a time, more room.
$ttl = lock_test_valgrind() ? 3.0 : 0.3;

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind) use ($ttl): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store, $ttl, true, null, true);
    var_dump($lock->acquire());
    if (!$store->supports(Lock\Store::EXPIRING)) {
        // Nothing expires, so there is nothing to refresh: the lock works as without it.
        usleep(50000);
        var_dump($lock->isAcquired(), $lock->getRemainingLifetime());
        $lock->release();
        return;
    }
    // Fencing tokens do not change on a refresh.
    $token = $store->supports(Lock\Store::FENCING) ? $lock->getFencingToken() : null;
    $other = new Lock\Lock($resource, $store, $ttl);
    $refused = 0;
    $lifetimes = true;
    // Four TTLs (two under valgrind, whose TTL is longer).
    $rounds = lock_test_valgrind() ? 4 : 8;
    for ($i = 0; $i < $rounds; $i++) {
        usleep((int) ($ttl * 1e6 / 2));
        $refused += $other->acquire() ? 0 : 1;
        $left = $lock->getRemainingLifetime();
        $lifetimes = $lifetimes && $left > 0 && $left <= $ttl && !$lock->isExpired();
    }
    echo 'TTLs later: refused every time: ', var_export($refused === $rounds, true), ', lifetime within the TTL: ', var_export($lifetimes, true), "\n";
    var_dump($lock->isAcquired());
    echo 'fencing token kept: ', var_export($token === null || $lock->getFencingToken() === $token, true), "\n";
    // An explicit refresh still works beside the thread's.
    $lock->refresh();
    $lock->release();
    var_dump($other->acquire());
    $other->release();
    $stats = Lock\stats()[get_class($store)];
    echo 'auto_refreshed counted: ', var_export($stats['auto_refreshed'] >= 3, true), "\n";
});
?>
--EXPECT--
-- flock, semaphore, pgsql, mysql
bool(true)
bool(true)
NULL
-- redis, combined, pgsql-table, mysql-table, memcached
bool(true)
TTLs later: refused every time: true, lifetime within the TTL: true
bool(true)
fencing token kept: true
bool(true)
auto_refreshed counted: true
