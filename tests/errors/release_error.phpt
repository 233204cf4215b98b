--TEST--
release(): a negative delay is a ValueError; any delay on flock and semaphore is a ValueError
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    $lock->acquire();
    lock_test_expect_throw(fn () => $lock->release(-1.0));
    lock_test_expect_throw(fn () => $lock->release(NAN));
    lock_test_expect_throw(fn () => $lock->release(INF));
    if ($kind !== 'redis') {
        // Holds that do not expire cannot be kept blocked for a while.
        lock_test_expect_throw(fn () => $lock->release(1.0));
    }
    // A refused release leaves the hold as it was.
    var_dump($lock->isAcquired());
    $lock->release(0.0);
    var_dump($store->isLocked($resource));
}
?>
--EXPECTF--
-- flock
ValueError: Lock\Lock::release(): Argument #1 ($delay) must be greater than or equal to 0
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
bool(true)
bool(false)
-- semaphore
ValueError: Lock\Lock::release(): Argument #1 ($delay) must be greater than or equal to 0
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
bool(true)
bool(false)
-- redis
ValueError: Lock\Lock::release(): Argument #1 ($delay) must be greater than or equal to 0
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
bool(true)
bool(false)
