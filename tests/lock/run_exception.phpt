--TEST--
An exception thrown in run()'s callback releases the lock and propagates
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

final class MyException extends Exception {}

foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    try {
        $lock->run(function () use ($store, $resource) {
            var_dump($store->isLocked($resource));
            throw new MyException('from the callback');
        });
        echo "not reached\n";
    } catch (MyException $e) {
        lock_test_print_exception($e);
    }
    var_dump($lock->isAcquired());
    var_dump($store->isLocked($resource));
    // An Error (not an Exception) too.
    try {
        $lock->run(fn () => intdiv(1, 0));
    } catch (DivisionByZeroError $e) {
        lock_test_print_exception($e);
    }
    var_dump($store->isLocked($resource));
    // The lock is usable again.
    var_dump($lock->run(fn () => 'again'));
}
?>
--EXPECT--
-- flock
bool(true)
MyException: from the callback
bool(false)
bool(false)
DivisionByZeroError: Division by zero
bool(false)
string(5) "again"
-- semaphore
bool(true)
MyException: from the callback
bool(false)
bool(false)
DivisionByZeroError: Division by zero
bool(false)
string(5) "again"
-- redis
bool(true)
MyException: from the callback
bool(false)
bool(false)
DivisionByZeroError: Division by zero
bool(false)
string(5) "again"
