--TEST--
max_execution_time ends a blocked acquire() or run() on every store with PHP's fatal error, at the script's line, and leaves nothing behind
--DESCRIPTION--
On Linux, max_execution_time counts the CPU time of the request (ITIMER_PROF), which a
sleeping wait does not use. So the test delivers the timer's signal itself, SIGPROF,
to a waiter blocked with a time limit set: that is what the kernel does when the limit
runs out while the wait runs.
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
// Under valgrind the children are checked too: what they do is this test's subject.
lock_test_check_children();
lock_test_hang_guard(100);

$dir = lock_test_tmpdir();
foreach (LOCK_WAIT_KINDS as $kind) {
    foreach (['acquire', 'run'] as $via) {
        echo "-- $kind, $via\n";
        $prefix = lock_test_prefix();
        $resource = lock_test_resource('time-limit');
        $storeCode = lock_wait_store_code($kind, $dir, $prefix);
        $redis = lock_wait_is_redis($kind) ? new LockWaitRedis($prefix, $resource) : null;
        $store = lock_wait_store($kind, $dir, $prefix);
        $holder = new Lock\Lock($resource, $store);
        var_dump($holder->acquire());

        $wait = $via === 'run' ? '$lock->run(function () { echo "callback ran\n"; });' : 'var_dump($lock->acquire(true));';
        $waiter = new LockTestChild('$store = ' . $storeCode . ";\n"
            . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store);' . "\n"
            . <<<'PHP'
register_shutdown_function(function () use ($lock) {
    echo 'at shutdown the waiter holds it: ', var_export($lock->isAcquired(), true), "\n";
});
set_time_limit(60);
echo "waiting\n";

PHP
            . $wait . "\n"
            . 'echo "wait returned\n";' . "\n");
        $waiter->waitFor('waiting');
        if ($redis !== null) {
            $redis->awaitQueued(1);
        } else {
            lock_wait_await_blocked($waiter->pid);
            usleep(50000);
        }
        $waiter->signal(SIGPROF);
        $waiter->wait();
        echo 'fatal error: ', var_export(str_contains($waiter->output(), 'Maximum execution time of 60 seconds exceeded'), true), "\n";
        // It names where the script was, as for any other time limit (not "Unknown on line 0").
        echo 'at a line of the script: ', var_export(preg_match('/exceeded in (?!Unknown).+ on line [1-9]/', $waiter->output()) === 1, true), "\n";
        echo 'wait returned: ', var_export(str_contains($waiter->output(), 'wait returned') || str_contains($waiter->output(), 'callback ran'), true), "\n";
        echo trim(substr($waiter->output(), strpos($waiter->output(), 'at shutdown'))), "\n";
        if ($redis !== null) {
            echo 'Redis keys besides the lock: ', $redis->describeLeftovers(), "\n";
        }
        $holder->release();
        // Nobody may hold it now: not the dead waiter, not a hand-off to its stale queue entry.
        var_dump($store->isLocked($resource));
        var_dump($holder->acquire());
        $holder->release();
        if ($redis !== null) {
            echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
        }
    }
}
?>
--EXPECT--
-- flock, acquire
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
bool(false)
bool(true)
-- flock, run
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
bool(false)
bool(true)
-- semaphore, acquire
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
bool(false)
bool(true)
-- semaphore, run
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
bool(false)
bool(true)
-- redis, acquire
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
Redis keys besides the lock: none
bool(false)
bool(true)
Redis keys that stay: none
-- redis, run
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
Redis keys besides the lock: none
bool(false)
bool(true)
Redis keys that stay: none
-- redis-unfair, acquire
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
Redis keys besides the lock: none
bool(false)
bool(true)
Redis keys that stay: none
-- redis-unfair, run
bool(true)
fatal error: true
at a line of the script: true
wait returned: false
at shutdown the waiter holds it: false
Redis keys besides the lock: none
bool(false)
bool(true)
Redis keys that stay: none
