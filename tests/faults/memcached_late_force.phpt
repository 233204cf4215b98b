--TEST--
faults: memcached: a forceRelease() whose answer was lost never breaks a hold taken after it: run late (the server frozen with SIGSTOP), it breaks at most the hold it was meant for, so a waiter that got the lock meanwhile keeps it alone
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

$timeout = lock_test_valgrind() ? 1.0 : 0.3;
$bound = $timeout + (lock_test_valgrind() ? 1.0 : LOCK_FAULT_SLACK);
// One worker thread: the frozen server runs what it queued in the order it came.
$server = new LockTestMemcachedServer(['-t', '1']);
$dsn = $server->dsn('prefix=' . urlencode(lock_test_prefix()));
$store = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout]);
$holder = new Lock\Lock('x', $store, 30.0);
var_dump($holder->acquire());
$said = tempnam(sys_get_temp_dir(), 'lock-test-');

$server->pause();
$force = function () use ($dsn, $timeout, $bound): void {
    $admin = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout]);
    lock_fault_call('forceRelease on the frozen server', fn () => $admin->forceRelease('x'), $bound, ['StorageException']);
};
$force();
// A waiter asks while the server is frozen, after the first forceRelease and before a second one.
$pid = lock_test_fork(static function () use ($dsn, $said): int {
    $waiter = new Lock\Lock('x', new Lock\Store\MemcachedStore($dsn, ['timeout' => 5.0]), 30.0);
    $got = $waiter->acquire(true, 1.5);
    file_put_contents($said, $got ? 'held' : 'not held');
    // Holds a while: the parent looks for a second holder meanwhile.
    usleep(1500000);
    return 0;
});
usleep(300000);
$force();
$server->resume();
lock_test_wait_until(function () use ($said): bool {
    clearstatcache();
    return filesize($said) > 0;
}, 10, 'the waiter to answer');
$waiter = file_get_contents($said);
$other = new Lock\Lock('x', $store, 30.0);
$second = $other->acquire();
echo 'two holders at once: ', var_export($waiter === 'held' && $second, true), "\n";
lock_test_wait_pid($pid);
unlink($said);
?>
--EXPECT--
bool(true)
forceRelease on the frozen server: StorageException
forceRelease on the frozen server: StorageException
two holders at once: false
