--TEST--
Store::waitUntilFree(): true at once when free, woken by the release, false after its timeout, takes nothing and passes no waiter; argument errors
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['semaphore', 'redis', 'flock'] as $kind) {
    echo "-- $kind\n";
    $dir = $kind === 'flock' ? lock_test_tmpdir('flock') : null;
    $prefix = lock_test_prefix();
    $store = lock_test_store($kind, $dir, $prefix);
    $code = lock_test_store_code($kind, $dir, $prefix);
    $resource = lock_test_resource('free');

    var_dump($store->waitUntilFree($resource), $store->waitUntilFree($resource, 0.0));

    // Woken by the release of a write hold, then of a read hold.
    foreach (['write', 'read'] as $mode) {
        if ($mode === 'write') {
            $holder = lock_test_holder($code, $resource, null);
        } else {
            $holder = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $code . ", null);\n"
                . 'var_dump($lock->acquireRead()); echo "held\n"; fgets(STDIN); usleep(300000); $lock->release();');
            $holder->waitFor('held');
        }
        $holder->send('sleep-release 0.3');
        echo "$mode hold: ", var_export($store->waitUntilFree($resource, 30.0), true),
            ', locked after: ', var_export($store->isLocked($resource), true), "\n";
        $holder->wait();
    }

    // A timeout passes with the hold untouched.
    $holder = lock_test_holder($code, $resource, null);
    echo 'timeout: ', var_export($store->waitUntilFree($resource, 0.2), true),
        ', the holder still holds: ', var_export($store->isLocked($resource), true), "\n";

    // A waiter queued before it gets the resource first: waitUntilFree() returns once that waiter is done too.
    $waiter = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $code . ", null);\n"
        . 'echo "waiting\n"; var_dump($lock->acquire(true, 60.0)); usleep(300000); $lock->release(); echo "done\n";');
    $waiter->waitFor('waiting');
    usleep(300000);
    $holder->send('sleep-release 0.2');
    echo 'behind a waiter: ', var_export($store->waitUntilFree($resource, 30.0), true),
        ', locked after: ', var_export($store->isLocked($resource), true), "\n";
    echo 'the waiter: ', str_replace("\n", ' ', trim($waiter->wait())), "\n";
    $holder->wait();
    // It took nothing: the resource is there for anybody.
    var_dump((new Lock\Lock($resource, $store, null))->acquire());

    echo "errors:\n";
    lock_test_expect_throw(fn () => $store->waitUntilFree(''));
    lock_test_expect_throw(fn () => $store->waitUntilFree($resource, -1.0));
    lock_test_expect_throw(fn () => $store->waitUntilFree($resource, NAN));
    lock_test_expect_throw(fn () => $store->waitUntilFree($resource, INF));
}
?>
--EXPECTF--
-- semaphore
bool(true)
bool(true)
write hold: true, locked after: false
read hold: true, locked after: false
timeout: false, the holder still holds: true
behind a waiter: true, locked after: false
the waiter: bool(true) done
bool(true)
errors:
ValueError: Lock\Store\SemaphoreStore::waitUntilFree(): Argument #1 ($resource) must %s
ValueError: Lock\Store\SemaphoreStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\SemaphoreStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\SemaphoreStore::waitUntilFree(): Argument #2 ($timeout) must %s
-- redis
bool(true)
bool(true)
write hold: true, locked after: false
read hold: true, locked after: false
timeout: false, the holder still holds: true
behind a waiter: true, locked after: false
the waiter: bool(true) done
bool(true)
errors:
ValueError: Lock\Store\RedisStore::waitUntilFree(): Argument #1 ($resource) must %s
ValueError: Lock\Store\RedisStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\RedisStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\RedisStore::waitUntilFree(): Argument #2 ($timeout) must %s
-- flock
bool(true)
bool(true)
write hold: true, locked after: false
read hold: true, locked after: false
timeout: false, the holder still holds: true
behind a waiter: true, locked after: false
the waiter: bool(true) done
bool(true)
errors:
ValueError: Lock\Store\FlockStore::waitUntilFree(): Argument #1 ($resource) must %s
ValueError: Lock\Store\FlockStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\FlockStore::waitUntilFree(): Argument #2 ($timeout) must %s
ValueError: Lock\Store\FlockStore::waitUntilFree(): Argument #2 ($timeout) must %s
