--TEST--
redis: release($delay) gives the hold up but keeps the resource blocked for that long
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');
$resource = lock_test_resource();
$lock = new Lock\Lock($resource, $store);
$other = new Lock\Lock($resource, $store);

$lock->acquire();
$lock->release(300.0);
// No longer ours...
var_dump($lock->isAcquired());
var_dump($lock->getRemainingLifetime());
$lock->release();
// ...but nobody gets in during the cooldown, not even us.
var_dump($store->isLocked($resource));
var_dump($other->acquire());
var_dump($lock->acquire());
$store->forceRelease($resource);
var_dump($other->acquire());
$other->release();

// A short cooldown runs out by itself.
$lock->acquire();
$lock->release(0.2);
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the cooldown to end');
var_dump($other->acquire());
$other->release();

// A delay on a lock that is not held does nothing.
$lock->release(300.0);
var_dump($store->isLocked($resource));
?>
--EXPECT--
bool(false)
NULL
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(false)
