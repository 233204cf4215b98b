--TEST--
faults: memcached: signals arriving while a call waits for a frozen server neither end it early with a false timeout nor stretch it: StorageException after the timeout (+ 100 ms)
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(60);

$server = new LockTestMemcachedServer();
$store = new Lock\Store\MemcachedStore($server->dsn(), ['timeout' => 1.0]);
var_dump($store->isLocked('x'));
pcntl_async_signals(true);
$n = 0;
pcntl_signal(SIGUSR1, function () use (&$n) {
    $n++;
});
$server->pause();
$me = getmypid();
// Eight signals, 100 ms apart, while the call waits: libmemcached alone gives up after four.
$pid = lock_test_fork(static function () use ($me): int {
    for ($i = 0; $i < 8; $i++) {
        usleep(100000);
        posix_kill($me, SIGUSR1);
    }
    return 0;
});
lock_fault_call('isLocked on the frozen server', function () use ($store) {
    $t = hrtime(true);
    try {
        return $store->isLocked('x');
    } finally {
        $took = lock_fault_since($t);
        echo 'not before the timeout: ', var_export($took >= 0.99, true), "\n";
    }
}, 1.0 + LOCK_FAULT_SLACK, ['StorageException']);
lock_test_wait_pid($pid);
$server->resume();
var_dump($store->isLocked('x'));
pcntl_signal(SIGUSR1, SIG_DFL);
?>
--EXPECT--
bool(false)
not before the timeout: true
isLocked on the frozen server: StorageException
bool(false)
