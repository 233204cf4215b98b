--TEST--
A hold broken by forceRelease(): release() and refresh() say ExpiredException, or LostException once somebody else holds the resource, on every store; its destruction is silent and leaves the new holder alone
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

/** Calls $fn and prints the class of the exception it throws (messages name random resources). */
function outcome(string $what, callable $fn): void
{
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), "\n";
    }
}

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource('forced');
    $lock = new Lock\Lock($resource, $store, 60.0);
    $other = new Lock\Lock($resource, $store, 60.0);

    echo "- broken, nobody holds it\n";
    $lock->acquire();
    $store->forceRelease($resource);
    var_dump($lock->isAcquired(), $store->isLocked($resource));
    outcome('refresh', fn () => $lock->refresh());
    $lock->acquire();
    $store->forceRelease($resource);
    outcome('release', fn () => $lock->release());
    // The local state is cleared: a second release() is a no-op, the lock can be taken again.
    outcome('release again', fn () => $lock->release());
    var_dump($lock->acquire());
    $lock->release();

    echo "- broken, then taken by another\n";
    foreach (['refresh', 'release'] as $call) {
        var_dump($lock->acquire());
        $store->forceRelease($resource);
        var_dump($other->acquire());
        outcome($call, fn () => $lock->$call());
        var_dump($other->isAcquired(), $store->isLocked($resource));
        $other->release();
        // Whatever the failed call left of the local state, the lock is not held now.
        try {
            $lock->release();
        } catch (Lock\ExpiredException) {
        }
    }

    echo "- a read hold broken\n";
    $lock->acquireRead();
    $store->forceRelease($resource);
    var_dump($lock->isAcquired());
    outcome('release', fn () => $lock->release());

    echo "- destroyed after its hold was broken and taken by another\n";
    $doomed = new Lock\Lock($resource, $store, 60.0);
    $doomed->acquire();
    $store->forceRelease($resource);
    var_dump($other->acquire());
    outcome('destruction', function () use (&$doomed): void {
        $doomed = null;
    });
    var_dump($other->isAcquired(), $store->isLocked($resource));
    $other->release();
    var_dump($store->isLocked($resource));
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
- broken, nobody holds it
bool(false)
bool(false)
refresh: Lock\ExpiredException
release: Lock\ExpiredException
release again: no exception
bool(true)
- broken, then taken by another
bool(true)
bool(true)
refresh: Lock\LostException
bool(true)
bool(true)
bool(true)
bool(true)
release: Lock\LostException
bool(true)
bool(true)
- a read hold broken
bool(false)
release: Lock\ExpiredException
- destroyed after its hold was broken and taken by another
bool(true)
destruction: no exception
bool(true)
bool(true)
bool(false)
