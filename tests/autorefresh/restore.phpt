--TEST--
$autoRefresh without autoRelease: the hold outlives its object and goes on being refreshed; restoreLock() adopts that refreshing, or stops it without $autoRefresh
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$ttl = lock_test_valgrind() ? 1.5 : 0.5;
lock_test_each_kind(['redis', 'combined', 'pgsql-table', 'mysql-table'], function (string $kind) use ($ttl): void {
    $store = lock_test_store($kind);
    $factory = new Lock\Factory($store, $ttl);
    $resource = lock_test_resource();
    $other = new Lock\Lock($resource, $store, 10.0);

    $lock = $factory->createLock($resource, false, false, null, true);
    var_dump($lock->acquire());
    $owner = $lock->getOwner();
    unset($lock);
    usleep((int) (3 * $ttl * 1e6));
    echo 'after three TTLs without its object: held ', var_export(!$other->acquire(), true), "\n";

    // Adopted: refreshed on, as this lock says.
    $lock = $factory->restoreLock($resource, $owner, false, false, true);
    usleep((int) (2 * $ttl * 1e6));
    var_dump($lock->isAcquired(), !$other->acquire(), $lock->getRemainingLifetime() > 0);
    unset($lock);

    // Adopted by a lock without $autoRefresh: the refreshing stops, the hold runs out its TTL.
    $lock = $factory->restoreLock($resource, $owner);
    var_dump($lock->isAcquired());
    var_dump($other->acquire(true, 5.0));
    var_dump($lock->isAcquired());
    $other->release();
});
?>
--EXPECT--
-- redis, combined, pgsql-table, mysql-table
bool(true)
after three TTLs without its object: held true
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
