--TEST--
Redis, fair (the default): waiters that queued one after another get the lock in arrival order
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard();

$dir = lock_test_tmpdir();
$prefix = lock_test_prefix();
$resource = lock_test_resource('fifo');
$storeCode = lock_wait_store_code('redis', $dir, $prefix);
$redis = new LockWaitRedis($prefix, $resource);
$order = $dir . '/order';
touch($order);
$n = lock_test_scale(6, 3);

$holder = new Lock\Lock($resource, lock_wait_store('redis', $dir, $prefix));
var_dump($holder->acquire());

// Waiter k starts only once waiter k-1 is in the queue, so arrival order is known.
$waiters = [];
$tokens = [];
for ($k = 0; $k < $n; $k++) {
    [$waiters[$k], $tokens[$k]] = lock_wait_start_waiter('redis', $storeCode, $resource, "w$k", $redis, $k, ['order' => $order]);
}
echo 'queue holds the waiters in arrival order: ', var_export($redis->queue() === $tokens, true), "\n";
echo 'nobody got in while we hold it: ', var_export(file_get_contents($order) === '', true), "\n";

$holder->release();
foreach ($waiters as $k => $w) {
    $w->wait();
    if ($w->exitCode() !== 0 || !str_contains($w->output(), "released\n")) {
        echo "waiter $k failed:\n", $w->output();
    }
}
$got = file($order, FILE_IGNORE_NEW_LINES);
$arrival = array_map(fn ($k) => "w$k", range(0, $n - 1));
echo 'served in arrival order: ', $got === $arrival ? 'true' : 'false (' . implode(' ', $got) . ')', "\n";
echo 'isLocked afterwards: ', var_export(lock_wait_store('redis', $dir, $prefix)->isLocked($resource), true), "\n";
echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
?>
--EXPECT--
bool(true)
queue holds the waiters in arrival order: true
nobody got in while we hold it: true
served in arrival order: true
isLocked afterwards: false
Redis keys that stay: none
