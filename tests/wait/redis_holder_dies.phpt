--TEST--
Redis: a holder killed with SIGKILL is taken over by the queued waiters once its TTL runs out, not before
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard(100);

$dir = lock_test_tmpdir();
// Long enough for the holder's refreshes to keep up, also under valgrind.
$ttl = lock_test_patience(1.0);
foreach (['redis', 'redis-unfair'] as $kind) {
    echo "-- $kind\n";
    $prefix = lock_test_prefix();
    $resource = lock_test_resource('dead-holder');
    $storeCode = lock_wait_store_code($kind, $dir, $prefix);
    $redis = new LockWaitRedis($prefix, $resource);
    $order = $dir . "/order-$kind";
    touch($order);

    // The holder refreshes its short TTL while it lives, so the TTL only starts to run out at the kill.
    $holder = lock_test_holder($storeCode, $resource, $ttl, true);
    [$first] = lock_wait_start_waiter($kind, $storeCode, $resource, 'first', $redis, 0, ['order' => $order]);
    [$second] = lock_wait_start_waiter($kind, $storeCode, $resource, 'second', $redis, 1, ['order' => $order]);
    // Both stay queued while the holder lives, however long that is (several TTLs here).
    usleep((int) (2.5 * $ttl * 1e6));
    echo 'nobody got in while the holder lives: ', var_export(file_get_contents($order) === '', true), "\n";
    $killedAt = hrtime(true);
    $holder->signal(SIGKILL);
    $holder->wait();
    $first->wait(30.0);
    $second->wait(30.0);
    foreach (['first' => $first, 'second' => $second] as $name => $w) {
        echo "$name: ", $w->exitCode() === 0 && str_contains($w->output(), "released\n") ? 'acquired and released' : "failed:\n" . $w->output(), "\n";
    }
    // The holder's last refresh was at most a fifth of the TTL before the kill: the key lives at least 0.8 TTL on.
    $after = (lock_wait_acquired_at($first->output()) - $killedAt) / 1e9;
    echo 'taken over only after the TTL ran out: ', var_export($after >= 0.5 * $ttl, true), "\n";
    $got = file($order, FILE_IGNORE_NEW_LINES);
    if ($kind === 'redis') {
        echo 'served in arrival order: ', $got === ['first', 'second'] ? 'true' : 'false (' . implode(' ', $got) . ')', "\n";
    } else {
        sort($got);
        echo 'each served once: ', var_export($got === ['first', 'second'], true), "\n";
    }
    echo 'isLocked afterwards: ', var_export(lock_wait_store($kind, $dir, $prefix)->isLocked($resource), true), "\n";
    echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
}
?>
--EXPECT--
-- redis
nobody got in while the holder lives: true
first: acquired and released
second: acquired and released
taken over only after the TTL ran out: true
served in arrival order: true
isLocked afterwards: false
Redis keys that stay: none
-- redis-unfair
nobody got in while the holder lives: true
first: acquired and released
second: acquired and released
taken over only after the TTL ran out: true
each served once: true
isLocked afterwards: false
Redis keys that stay: none
