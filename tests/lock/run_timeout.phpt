--TEST--
run() with a timeout on a busy lock throws Lock\TimeoutException naming the resource
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource('busy-report');
    $holder = new Lock\Lock($resource, $store);
    $holder->acquire();
    $lock = new Lock\Lock($resource, $store);
    $called = false;
    try {
        $lock->run(function () use (&$called) { $called = true; }, 0.1);
        echo "not reached\n";
    } catch (Lock\TimeoutException $e) {
        echo get_class($e), "\n";
        var_dump(str_contains($e->getMessage(), $resource));
        var_dump($e instanceof Lock\LockException);
    }
    var_dump($called);
    var_dump($holder->isAcquired());
    var_dump($lock->isAcquired());
    $holder->release();
    var_dump($lock->run(fn () => 'free now', 0.1));
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
Lock\TimeoutException
bool(true)
bool(true)
bool(false)
bool(true)
bool(false)
string(8) "free now"
