--TEST--
refresh(): not held is a Lock\LockException; a bad TTL is a ValueError naming the argument
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $lock = new Lock\Lock(lock_test_resource(), lock_test_store($kind));
    $e = lock_test_expect_throw(fn () => $lock->refresh());
    var_dump($e instanceof Lock\LockException);
    $lock->acquire();
    $lock->release();
    $e = lock_test_expect_throw(fn () => $lock->refresh(10.0));
    var_dump($e instanceof Lock\LockException);
    $lock->acquire();
    lock_test_expect_throw(fn () => $lock->refresh(0.0));
    lock_test_expect_throw(fn () => $lock->refresh(-1.0));
    lock_test_expect_throw(fn () => $lock->refresh(NAN));
    lock_test_expect_throw(fn () => $lock->refresh(INF));
    var_dump($lock->isAcquired());
    $lock->release();
}
?>
--EXPECTF--
-- flock
Lock\LockException: %s
bool(true)
Lock\LockException: %s
bool(true)
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
bool(true)
-- semaphore
Lock\LockException: %s
bool(true)
Lock\LockException: %s
bool(true)
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
bool(true)
-- redis
Lock\LockException: %s
bool(true)
Lock\LockException: %s
bool(true)
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
ValueError: Lock\Lock::refresh(): Argument #1 ($ttl) must %s
bool(true)
