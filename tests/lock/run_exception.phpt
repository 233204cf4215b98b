--TEST--
An exception thrown in run()'s callback releases the lock and propagates
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

final class MyException extends Exception {}

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
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
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
MyException: from the callback
bool(false)
bool(false)
DivisionByZeroError: Division by zero
bool(false)
string(5) "again"
