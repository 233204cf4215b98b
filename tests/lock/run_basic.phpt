--TEST--
Lock::run() holds the lock around the callback, passes the lock, returns the callback's value
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

final class Helper
{
    public static function name(Lock\Lock $lock): string
    {
        return 'held ' . var_export($lock->isAcquired(), true);
    }
}

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    $result = $lock->run(function ($arg) use ($lock, $store, $resource) {
        var_dump($arg === $lock);
        var_dump($lock->isAcquired());
        var_dump($store->isLocked($resource));
        return ['answer' => 42];
    });
    var_dump($result);
    var_dump($lock->isAcquired());
    var_dump($store->isLocked($resource));
    // With a timeout on a free lock, and with callables of every kind.
    var_dump($lock->run(fn () => 'ok', 5.0));
    var_dump($lock->run([Helper::class, 'name']));
    var_dump($store->isLocked($resource));
    // A callback returning nothing gives null.
    var_dump($lock->run(function () {}));
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(true)
bool(true)
array(1) {
  ["answer"]=>
  int(42)
}
bool(false)
bool(false)
string(2) "ok"
string(9) "held true"
bool(false)
NULL
