--TEST--
When run()'s callback throws and the release then fails too, the callback's exception is the one thrown
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

final class JobFailed extends Exception {}

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $lock = new Lock\Lock($resource, $store);

    // The callback breaks its own hold, then throws: the release that follows fails.
    try {
        $lock->run(function () use ($store, $resource) {
            $store->forceRelease($resource);
            throw new JobFailed('the job failed');
        });
    } catch (Throwable $e) {
        lock_test_print_exception($e);
        var_dump($e->getPrevious());
    }
    // The hold is forgotten locally; the lock works again.
    var_dump($lock->isAcquired(), $store->isLocked($resource));
    var_dump($lock->run(fn () => 'again'));

    // Without an exception from the callback, the failed release is the exception.
    try {
        $lock->run(fn () => $store->forceRelease($resource));
    } catch (Lock\LockException $e) {
        echo get_class($e), "\n";
    }
    var_dump($lock->isAcquired());
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
JobFailed: the job failed
NULL
bool(false)
bool(false)
string(5) "again"
Lock\ExpiredException
bool(false)
