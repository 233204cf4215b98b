--TEST--
semaphore: at the system's limit on sets (SEMMNI lowered to 16 in an IPC namespace of our own) the store goes on, and names the limit when every set is held
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
exec('unshare --ipc sh -c "echo 250 32000 32 16 > /proc/sys/kernel/sem" 2>&1', $out, $rc);
if ($rc !== 0) {
    die('skip needs an IPC namespace with a writable kernel.sem (root): ' . implode(' ', $out));
}
?>
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$code = <<<'PHP'
<?php
$info = static fn () => count(file('/proc/sysvipc/sem')) - 1;
echo 'limit: ', preg_split('/\s+/', trim(file_get_contents('/proc/sys/kernel/sem')))[3], "\n";

// Sets left behind by a holder that died (a forked child that exits without its shutdown).
$pid = pcntl_fork();
if ($pid === 0) {
    $store = new Lock\Store\SemaphoreStore(['cache' => 0]);
    $locks = [];
    for ($i = 0; $i < 10; $i++) {
        $locks[$i] = new Lock\Lock("dead-$i", $store);
        $locks[$i]->acquire();
    }
    posix_kill(getmypid(), SIGKILL);
}
pcntl_waitpid($pid, $status);
echo 'sets left by the killed holder: ', $info(), "\n";

$store = new Lock\Store\SemaphoreStore();
$ok = 0;
for ($i = 0; $i < 1000; $i++) {
    $lock = new Lock\Lock("name-$i", $store);
    $ok += $lock->acquire() ? 1 : 0;
    $lock->release();
}
echo "distinct names acquired and released: $ok of 1000\n";
echo 'sets now at most 16: ', json_encode($info() <= 16), "\n";

$held = [];
for ($i = 0; $i < 17; $i++) {
    $held[$i] = new Lock\Lock("held-$i", $store);
    try {
        $held[$i]->acquire();
    } catch (Lock\LockException $e) {
        echo "hold $i: ", get_class($e), ': ', $e->getMessage(), "\n";
    }
}
echo 'holds: ', count(array_filter($held, fn ($l) => $l->isAcquired())), "\n";
foreach ($held as $lock) {
    if ($lock->isAcquired()) {
        $lock->release();
    }
}
unset($held, $lock, $store);
echo 'sets after the store: ', $info(), "\n";
PHP;
$file = lock_test_tmpdir() . '/limit.php';
file_put_contents($file, $code);
$cmd = array_merge(['unshare', '--ipc', 'sh', '-c', 'echo 250 32000 32 16 > /proc/sys/kernel/sem && exec "$@"', 'sh'],
    lock_test_php_cmd($file));
$proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
$out = stream_get_contents($pipes[1]);
echo $out;
echo 'exit: ', proc_close($proc), "\n";
lock_test_rmdir(dirname($file));
?>
--EXPECTF--
limit: 16
sets left by the killed holder: 10
distinct names acquired and released: 1000 of 1000
sets now at most 16: true
hold 16: Lock\StorageException: Lock "held-16": semaphore: cannot create the set with key 0x%x: the system limit of 16 semaphore sets (SEMMNI) or %d semaphores (SEMMNS) is reached (see sysctl kernel.sem), and no idle set of this store is left to remove
holds: 16
sets after the store: 0
exit: 0
