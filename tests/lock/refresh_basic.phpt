--TEST--
Lock::refresh() extends the hold in the store; on a hold that expired it throws ExpiredException, or LostException when another holds the resource
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

echo "-- redis: the keys' PTTL follows refresh()\n";
$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$redis = new LockTestResp(lock_test_redis_port());
$resource = lock_test_resource();
$lock = new Lock\Lock($resource, $store, 5.0);
$lock->acquire();
$keys = $redis->keys($prefix);
var_dump(count($keys) >= 1);
// The hold's keys; the fencing counter outlives the hold by design.
$pttl = fn () => max(array_map(fn ($k) => $redis->ok('PTTL', $k),
    array_filter($redis->keys($prefix), fn ($k) => !str_ends_with($k, '}:f'))));
var_dump($pttl() > 0 && $pttl() <= 5000);
$lock->refresh(1000.0);
var_dump($pttl() > 5000 && $pttl() <= 1000000);
$lock->refresh(2.0);
var_dump($pttl() > 0 && $pttl() <= 2000);
var_dump($lock->isAcquired());
// acquire() while held extends to the lock's own TTL.
$lock->acquire();
var_dump($pttl() > 2000 && $pttl() <= 5000);
$lock->release();
var_dump(!$store->isLocked($resource));

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $expiring = $store->supports(Lock\Store::EXPIRING);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store, 300.0);
    $lock->acquire();
    // The local lifetime follows refresh(): the given TTL, then the lock's own; none without expiry.
    $lock->refresh(10.0);
    $left = $lock->getRemainingLifetime();
    var_dump($expiring ? $left > 0 && $left <= 10.0 : $left === null);
    var_dump($lock->isAcquired());
    $lock->refresh();
    $left = $lock->getRemainingLifetime();
    var_dump($expiring ? $left > 10.0 && $left <= 300.0 : $left === null);
    var_dump($lock->isAcquired());
    // refresh() of a lock that is not held (another object, or ours once released) is a LockException.
    $notHeld = static function (Lock\Lock $l): void {
        try {
            $l->refresh();
            echo "no exception\n";
        } catch (Lock\LockException $e) {
            echo get_class($e), str_contains($e->getMessage(), 'not held') ? ': not held' : ': ' . $e->getMessage(), "\n";
        }
    };
    $notHeld(new Lock\Lock($resource, $store, 300.0));
    $lock->release();
    $notHeld($lock);
    var_dump($store->isLocked($resource));
    if (!$expiring) {
        return;
    }

    // The server follows refresh() too: a hold refreshed to a short TTL runs out in the store.
    // Then refresh() says ExpiredException, or LostException once another holds the resource.
    $expired = new Lock\Lock(lock_test_resource(), $store, 300.0);
    $lost = new Lock\Lock(lock_test_resource(), $store, 300.0);
    $expired->acquire();
    $lost->acquire();
    $expired->refresh(0.5);
    $lost->refresh(0.5);
    lock_test_wait_until(fn () => !$store->isLocked($expired->getResource()) && !$store->isLocked($lost->getResource()),
        30, 'the holds to expire in the store');
    $thief = new Lock\Lock($lost->getResource(), $store, 300.0);
    var_dump($thief->acquire());
    try {
        $expired->refresh();
        echo "refresh of the expired hold: no exception\n";
    } catch (Lock\LockException $e) {
        echo 'refresh of the expired hold: ', get_class($e), "\n";
    }
    try {
        $lost->refresh();
        echo "refresh of the lost hold: no exception\n";
    } catch (Lock\LockException $e) {
        echo 'refresh of the lost hold: ', get_class($e), "\n";
    }
    var_dump($thief->isAcquired(), $expired->isAcquired(), $lost->isAcquired());
    $thief->release();
});
?>
--EXPECT--
-- redis: the keys' PTTL follows refresh()
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
-- flock, semaphore, pgsql, mysql
bool(true)
bool(true)
bool(true)
bool(true)
Lock\LockException: not held
Lock\LockException: not held
bool(false)
-- redis, combined, pgsql-table, mysql-table, memcached
bool(true)
bool(true)
bool(true)
bool(true)
Lock\LockException: not held
Lock\LockException: not held
bool(false)
bool(true)
refresh of the expired hold: Lock\ExpiredException
refresh of the lost hold: Lock\LostException
bool(true)
bool(false)
bool(false)
