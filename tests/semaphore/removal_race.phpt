--TEST--
semaphore: removing idle sets never costs a waiter its wait nor lets two holders in (processes racing, stores without a cache)
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();

$dir = lock_test_tmpdir();
$resource = lock_test_resource('race');

// A holder whose release would remove the set, and a waiter blocked on it.
$holder = new Lock\Lock($resource, new Lock\Store\SemaphoreStore(['cache' => 0]));
$holder->acquire();
$pid = lock_test_fork(static function () use ($resource): int {
    $lock = new Lock\Lock($resource, new Lock\Store\SemaphoreStore(['cache' => 0]));
    if (!$lock->acquire(true, 60.0)) {
        return 2;
    }
    usleep(300000);
    $lock->release();
    return 0;
});
usleep(200000);
$holder->release();
$store = new Lock\Store\SemaphoreStore(['cache' => 0]);
lock_test_wait_until(fn () => $store->isLocked($resource), 30.0, 'the waiter to hold the lock');
echo "waiter holds after the release: true\n";
echo 'waiter exited: ', lock_test_wait_pid($pid), "\n";
echo 'free afterwards: ', json_encode(!$store->isLocked($resource)), "\n";

// Processes cycling on one resource, so that its set is removed and made anew all the time.
$procs = lock_test_scale(4, 2);
$iters = lock_test_scale(300, 30);
$counter = "$dir/counter";
file_put_contents($counter, '0');
$pids = [];
for ($p = 0; $p < $procs; $p++) {
    $pids[] = lock_test_fork(static function () use ($resource, $counter, $iters, $p): int {
        $lock = new Lock\Lock($resource, new Lock\Store\SemaphoreStore(['cache' => $p % 2]));
        for ($i = 0; $i < $iters; $i++) {
            // Every other round a try that may find the lock busy; the others wait.
            $wait = ($i + $p) % 2 === 1;
            if (!$lock->acquire($wait, 60.0)) {
                if ($wait) {
                    return 2;
                }
                $i--;
                continue;
            }
            $n = (int) file_get_contents($counter);
            file_put_contents($counter, (string) ($n + 1));
            $lock->release();
        }
        return 0;
    });
}
$codes = array_map(fn ($pid) => lock_test_wait_pid($pid), $pids);
echo 'children: ', $codes === array_fill(0, $procs, 0) ? 'all exited 0' : json_encode($codes), "\n";
$final = (int) file_get_contents($counter);
echo 'count: ', $final === $procs * $iters ? 'exact' : "$final instead of " . $procs * $iters, "\n";
echo 'free afterwards: ', json_encode(!$store->isLocked($resource)), "\n";
lock_test_rmdir($dir);
?>
--EXPECT--
waiter holds after the release: true
waiter exited: 0
free afterwards: true
children: all exited 0
count: exact
free afterwards: true
