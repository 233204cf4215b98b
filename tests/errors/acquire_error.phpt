--TEST--
acquire() and run(): negative, NaN or infinite timeouts are a ValueError naming the argument
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $lock = new Lock\Lock(lock_test_resource(), lock_test_store($kind));
    foreach ([-1.0, -0.001, NAN, INF, -INF] as $timeout) {
        lock_test_expect_throw(fn () => $lock->acquire(true, $timeout));
    }
    lock_test_expect_throw(fn () => $lock->acquire(timeout: -5));
    lock_test_expect_throw(fn () => $lock->run(fn () => 1, -1.0));
    lock_test_expect_throw(fn () => $lock->run(fn () => 1, NAN));
    lock_test_expect_throw(fn () => $lock->run('no_such_function'));
    // None of these took the lock.
    var_dump($lock->isAcquired());
}
?>
--EXPECTF--
-- flock
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must %s
TypeError: Lock\Lock::run(): Argument #1 ($callback) must be a valid callback, %s
bool(false)
-- semaphore
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must %s
TypeError: Lock\Lock::run(): Argument #1 ($callback) must be a valid callback, %s
bool(false)
-- redis
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must %s
ValueError: Lock\Lock::acquire(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::run(): Argument #2 ($timeout) must %s
TypeError: Lock\Lock::run(): Argument #1 ($callback) must be a valid callback, %s
bool(false)
