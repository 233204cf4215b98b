--TEST--
release($delay): a ValueError on the stores without expiry (flock, semaphore), and for a negative, NaN or infinite delay on every store; a refused release leaves the hold alone
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['flock', 'semaphore'] as $kind) {
    echo "-- $kind\n";
    $store = lock_test_store($kind);
    $lock = new Lock\Lock(lock_test_resource('delay'), $store);
    var_dump($lock->acquire());
    lock_test_expect_throw(fn () => $lock->release(1.0));
    echo 'still held: ', var_export($lock->isAcquired(), true), "\n";
    lock_test_expect_throw(fn () => $lock->release(0.001));
    $lock->release(0.0);
    echo 'released with 0: ', var_export(!$lock->isAcquired() && !$store->isLocked($lock->getResource()), true), "\n";
    echo 'not held: ';
    lock_test_expect_throw(fn () => $lock->release(1.0));
    var_dump($lock->acquireRead());
    echo 'read hold: ';
    lock_test_expect_throw(fn () => $lock->release(1.0));
    echo 'still held: ', var_export($lock->isAcquired(), true), "\n";
    $lock->release();
}

foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $lock = new Lock\Lock(lock_test_resource('delay'), lock_test_store($kind));
    $lock->acquire();
    foreach ([-1.0, -0.001, NAN, INF, -INF] as $delay) {
        lock_test_expect_throw(fn () => $lock->release($delay));
    }
    echo 'still held: ', var_export($lock->isAcquired(), true), "\n";
    $lock->release();
}
?>
--EXPECTF--
-- flock
bool(true)
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
released with 0: true
not held: ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
bool(true)
read hold: ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
-- semaphore
bool(true)
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
released with 0: true
not held: ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
bool(true)
read hold: ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
-- flock
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
-- semaphore
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
-- redis
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
ValueError: Lock\Lock::release(): Argument #1 ($delay) must %s
still held: true
