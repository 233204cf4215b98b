--TEST--
$autoRefresh: a hold broken meanwhile (forceRelease()) is found gone and never taken again; one taken by another is lost
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$ttl = lock_test_valgrind() ? 1.5 : 0.5;
lock_test_each_kind(['redis', 'combined', 'pgsql-table', 'mysql-table', 'memcached'], function (string $kind) use ($ttl): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store, $ttl, true, null, true);
    var_dump($lock->acquire());
    $store->forceRelease($resource);
    usleep((int) ($ttl * 1e6));
    // Nothing took it again: not the thread, not anybody.
    var_dump($store->isLocked($resource), $lock->isAcquired());
    foreach (['refresh' => fn () => $lock->refresh(), 'release' => fn () => $lock->release()] as $what => $call) {
        try {
            $call();
            echo "$what: no exception\n";
        } catch (Lock\LockException $e) {
            echo "$what: ", get_class($e), "\n";
        }
    }
    // Broken and taken by another: lost.
    $lock = new Lock\Lock($resource, $store, $ttl, true, null, true);
    var_dump($lock->acquire());
    $store->forceRelease($resource);
    $other = new Lock\Lock($resource, $store, 60.0);
    var_dump($other->acquire());
    usleep((int) ($ttl * 1e6));
    var_dump($lock->isAcquired(), $other->isAcquired());
    try {
        $lock->refresh();
    } catch (Lock\LockException $e) {
        echo 'refresh: ', get_class($e), "\n";
    }
    $other->release();
});
?>
--EXPECT--
-- redis, combined, pgsql-table, mysql-table, memcached
bool(true)
bool(false)
bool(false)
refresh: Lock\ExpiredException
release: no exception
bool(true)
bool(true)
bool(false)
bool(true)
refresh: Lock\LostException
