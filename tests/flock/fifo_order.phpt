--TEST--
flock: waiters get the lock in the order they began to wait
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();
$dir = lock_test_tmpdir();
$resource = lock_test_resource('fifo');
$storeCode = lock_test_store_code('flock', $dir);
$order = "$dir/order";
$holder = lock_test_holder($storeCode, $resource);
$inode = fileinode(glob("$dir/*.lock")[0]);
// Each waiter marks itself as waiting with one OFD lock from byte 1 (a writer asleep on the
// futex word: bytes 1 and 2) or 2 (a reader); byte 0 is a waitUntilFree() caller's.
$queued = function () use ($inode): int {
    $n = 0;
    foreach (file('/proc/locks') as $line) {
        if (str_contains($line, 'OFDLCK') && preg_match('/:(\d+) (\d+) /', $line, $m) && (int) $m[1] === $inode && \in_array((int) $m[2], [0, 1, 2], true)) {
            $n++;
        }
    }
    return $n;
};
$waiters = [];
for ($i = 1; $i <= 5; $i++) {
    $waiters[] = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $storeCode . ");\n"
        . 'if (!$lock->acquire(true, 60.0)) { exit(1); }' . "\n"
        . 'file_put_contents(' . var_export($order, true) . ', "' . $i . ' ", FILE_APPEND);' . "\n"
        . 'usleep(20000); $lock->release();');
    lock_test_wait_until(fn () => $queued() === $i, 30.0, "waiter $i to queue");
}
$holder->send('release');
foreach ($waiters as $w) {
    $w->wait();
}
echo 'order: ', trim(file_get_contents($order)), "\n";
?>
--EXPECT--
order: 1 2 3 4 5
