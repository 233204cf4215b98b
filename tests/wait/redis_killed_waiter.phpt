--TEST--
Redis: waiters killed with SIGKILL while queued (at the head and in the middle) do not block the others
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard(100);

$dir = lock_test_tmpdir();
foreach (['redis', 'redis-unfair'] as $kind) {
    echo "-- $kind\n";
    $prefix = lock_test_prefix();
    $resource = lock_test_resource('killed-waiter');
    $storeCode = lock_wait_store_code($kind, $dir, $prefix);
    $redis = new LockWaitRedis($prefix, $resource);
    $order = $dir . "/order-$kind";
    touch($order);

    $holder = new Lock\Lock($resource, lock_wait_store($kind, $dir, $prefix));
    var_dump($holder->acquire());
    $waiters = [];
    $tokens = [];
    for ($k = 0; $k < 5; $k++) {
        [$waiters[$k], $tokens[$k]] = lock_wait_start_waiter($kind, $storeCode, $resource, "w$k", $redis, $k, ['order' => $order]);
    }
    // The head, and one in the middle, die without a word.
    foreach ([0, 2] as $k) {
        $waiters[$k]->kill();
    }
    $holder->release();
    // A generous bound: a dead waiter costs the others a short grace (fair) or one capped sleep (unfair).
    foreach ([1, 3, 4] as $k) {
        $waiters[$k]->wait(30.0);
        echo "w$k: ", $waiters[$k]->exitCode() === 0 && str_contains($waiters[$k]->output(), "released\n") ? 'acquired and released' : "failed:\n" . $waiters[$k]->output(), "\n";
    }
    $got = file($order, FILE_IGNORE_NEW_LINES);
    if ($kind === 'redis') {
        echo 'served in arrival order: ', $got === ['w1', 'w3', 'w4'] ? 'true' : 'false (' . implode(' ', $got) . ')', "\n";
    } else {
        sort($got);
        echo 'each served once: ', var_export($got === ['w1', 'w3', 'w4'], true), "\n";
    }
    $store = lock_wait_store($kind, $dir, $prefix);
    // The lock may still be promised to a dead waiter for a short grace: it must end by itself.
    lock_test_wait_until(fn () => !$store->isLocked($resource), 10.0, 'the lock to be free');
    echo "lock free afterwards\n";
    // What the dead waiters leave behind (their queue entries, wake lists) must expire by itself, soon.
    echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
    $fresh = new Lock\Lock($resource, $store);
    var_dump($fresh->acquire());
    $fresh->release();
}
?>
--EXPECT--
-- redis
bool(true)
w1: acquired and released
w3: acquired and released
w4: acquired and released
served in arrival order: true
lock free afterwards
Redis keys that stay: none
bool(true)
-- redis-unfair
bool(true)
w1: acquired and released
w3: acquired and released
w4: acquired and released
each served once: true
lock free afterwards
Redis keys that stay: none
bool(true)
