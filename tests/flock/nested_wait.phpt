--TEST--
flock: a wait nested in another on the same lock file (a signal handler's) leaves the outer wait's wake-up in place
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();
$dir = lock_test_tmpdir();
$resource = lock_test_resource('nested');
$store = lock_test_store('flock', $dir);
$holder = lock_test_holder(lock_test_store_code('flock', $dir), $resource);
$handled = "$dir/handled";

pcntl_async_signals(true);
pcntl_signal(SIGUSR1, function () use ($resource, $store, $holder, $handled): void {
    if (file_exists($handled)) {
        return;
    }
    touch($handled);
    // Waits on the same file as the outer wait, and gives up; then the holder lets go, later.
    $inner = new Lock\Lock($resource, $store);
    echo 'inner acquired: ', var_export($inner->acquire(true, 0.2), true), "\n";
    // Later, so that the outer wait goes back to sleep first and only the release can wake it.
    $holder->send('sleep-release 0.5');
});

// Signals us once our wait has marked itself (an OFD lock on the file), until the handler ran.
$inode = fileinode(glob("$dir/*.lock")[0]);
$parent = getmypid();
$sender = lock_test_fork(function () use ($inode, $parent, $handled): int {
    lock_test_wait_until(function () use ($inode): bool {
        foreach (file('/proc/locks') as $line) {
            if (str_contains($line, 'OFDLCK') && preg_match('/:(\d+) \d+ /', $line, $m) && (int) $m[1] === $inode) {
                return true;
            }
        }
        return false;
    }, 30.0, 'the outer wait');
    // A signal that lands just before the wait sleeps is seen only at the next wake-up: send again.
    while (!file_exists($handled)) {
        posix_kill($parent, SIGUSR1);
        usleep(200000);
    }
    return 0;
});
$outer = new Lock\Lock($resource, $store);
// Without bound: only the release can end it (or the hang guard, if the wake-up was lost).
$got = $outer->acquire(true);
echo 'outer acquired: ', var_export($got, true), "\n";
echo 'sender: ', lock_test_wait_pid($sender), "\n";
$outer->release();
?>
--EXPECT--
inner acquired: false
outer acquired: true
sender: 0
