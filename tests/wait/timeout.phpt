--TEST--
Timed waits on every store: acquire() returns false, run() throws TimeoutException naming the resource and the time; a waiter that gives up leaves the queue and stalls nobody
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard(100);

$dir = lock_test_tmpdir();
foreach (LOCK_WAIT_KINDS as $kind) {
    echo "-- $kind\n";
    $prefix = lock_test_prefix();
    $resource = lock_test_resource('timeout');
    $storeCode = lock_wait_store_code($kind, $dir, $prefix);
    $redis = lock_wait_is_redis($kind) ? new LockWaitRedis($prefix, $resource) : null;
    $holder = lock_test_holder($storeCode, $resource);
    $lock = new Lock\Lock($resource, lock_wait_store($kind, $dir, $prefix));

    var_dump($lock->acquire(true, 0.3));
    var_dump($lock->acquire(timeout: 0.3));
    $called = false;
    try {
        $lock->run(function () use (&$called) { $called = true; }, 0.25);
        echo "run returned\n";
    } catch (Lock\TimeoutException $e) {
        echo get_class($e), "\n";
        echo 'names the resource: ', var_export(str_contains($e->getMessage(), $resource), true), "\n";
        echo 'names the time: ', var_export((bool) preg_match('/\b0\.250* ?s\b/', $e->getMessage()), true), "\n";
    }
    var_dump($called, $lock->isAcquired());
    if ($redis !== null) {
        echo 'Redis keys besides the lock: ', $redis->describeLeftovers(), "\n";
    }

    // Two waiters queue; the first gives up, the second must still get the lock at the release.
    // Both are started first, so that the second queues well within the first one's timeout.
    [$quitter] = lock_wait_start_waiter($kind, $storeCode, $resource, 'quitter', $redis, 0,
        ['timeout' => lock_test_patience(1.0), 'go' => true]);
    [$stayer, $stayerToken] = lock_wait_start_waiter($kind, $storeCode, $resource, 'stayer', $redis, 1, ['go' => true]);
    lock_wait_go($kind, $quitter, $redis, 0);
    lock_wait_go($kind, $stayer, $redis, 1);
    $quitter->waitFor('timed out');
    $quitter->wait();
    if ($redis !== null) {
        echo 'queue after the first gave up: ', $redis->queue() === [$stayerToken] ? 'only the second' : json_encode($redis->queue()), "\n";
    }
    $holder->send('release');
    $stayer->waitFor('acquired');
    $stayer->wait();
    echo 'the second got it: ', var_export($stayer->exitCode() === 0, true), "\n";
    $holder->send('exit');
    $holder->wait();
    var_dump($lock->acquire());
    $lock->release();
    if ($redis !== null) {
        echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
    }
}
?>
--EXPECT--
-- flock
bool(false)
bool(false)
Lock\TimeoutException
names the resource: true
names the time: true
bool(false)
bool(false)
the second got it: true
bool(true)
-- semaphore
bool(false)
bool(false)
Lock\TimeoutException
names the resource: true
names the time: true
bool(false)
bool(false)
the second got it: true
bool(true)
-- redis
bool(false)
bool(false)
Lock\TimeoutException
names the resource: true
names the time: true
bool(false)
bool(false)
Redis keys besides the lock: none
queue after the first gave up: only the second
the second got it: true
bool(true)
Redis keys that stay: none
-- redis-unfair
bool(false)
bool(false)
Lock\TimeoutException
names the resource: true
names the time: true
bool(false)
bool(false)
Redis keys besides the lock: none
queue after the first gave up: only the second
the second got it: true
bool(true)
Redis keys that stay: none
