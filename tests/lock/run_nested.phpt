--TEST--
run() on a lock already held leaves the hold as it found it: it releases only what it took
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);
    $rival = new Lock\Lock($resource, $store);

    // acquire() then run(): the hold outlives the callback.
    var_dump($lock->acquire());
    var_dump($lock->run(fn () => 'inner'));
    var_dump($lock->isAcquired(), $rival->acquire());

    // run() inside run(): the inner one gives nothing back, the outer one releases.
    $lock->release();
    $lock->run(function (Lock\Lock $l) use ($rival) {
        $l->run(fn () => null);
        echo 'after inner: ', var_export($l->isAcquired(), true), ' ', var_export($rival->acquire(), true), "\n";
    });
    var_dump($lock->isAcquired(), $rival->acquire());
    $rival->release();

    // An inner run() whose callback throws keeps the outer hold too.
    $lock->acquire();
    try {
        $lock->run(fn () => throw new RuntimeException('inner failed'));
    } catch (RuntimeException $e) {
        lock_test_print_exception($e);
    }
    var_dump($lock->isAcquired(), $rival->acquire());
    $lock->release();

    // A read hold: run() promotes it for the callback and demotes it again afterwards. On a
    // store without shared holds acquireRead() took an exclusive hold, which run() keeps: a
    // second reader gets in afterwards exactly when the store has shared holds.
    $reader = new Lock\Lock($resource, $store);
    var_dump($lock->acquireRead());
    $lock->run(function () use ($reader) {
        echo 'reader inside: ', var_export($reader->acquireRead(), true), "\n";
    });
    var_dump($lock->isAcquired(), $reader->acquireRead() === $store->supports(Lock\Store::SHARED), $rival->acquire());
    $reader->release();
    $lock->release();
    var_dump($store->isLocked($resource));
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
string(5) "inner"
bool(true)
bool(false)
after inner: true false
bool(false)
bool(true)
RuntimeException: inner failed
bool(true)
bool(false)
bool(true)
reader inside: false
bool(true)
bool(true)
bool(false)
bool(false)
