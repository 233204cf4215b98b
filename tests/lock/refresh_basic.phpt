--TEST--
Lock::refresh() extends the hold in the store
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

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

echo "-- process-bound stores\n";
foreach (['flock', 'semaphore'] as $kind) {
    $lock = new Lock\Lock(lock_test_resource(), lock_test_store($kind));
    $lock->acquire();
    $lock->refresh();
    $lock->refresh(10.0);
    var_dump($lock->isAcquired());
    $lock->release();
}
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
-- process-bound stores
bool(true)
bool(true)
