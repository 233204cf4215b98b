--TEST--
faults: memcached: a server killed (SIGKILL) during holds and during a wait, or frozen (SIGSTOP): every call throws Lock\StorageException within the timeout + 100 ms, a blocking acquire does not wait for its own timeout, the hold stays ours locally; after a restart the holds are gone (ExpiredException) and the next acquire works
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
lock_test_hang_guard(100);

$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$storage = ['StorageException'];
$server = new LockTestMemcachedServer();
$dsn = $server->dsn('prefix=' . urlencode(lock_test_prefix()));
$store = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout]);
$pstore = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout, 'persistent' => true]);
$a = new Lock\Lock('a', $store, 30.0);
$b = new Lock\Lock('b', $store, 30.0);
$p = new Lock\Lock('p', $pstore, 30.0);
var_dump($a->acquire(), $b->acquire(), $p->acquire());

echo "-- killed during holds\n";
$server->kill();
lock_fault_call('a: release', fn () => $a->release(), $bound, $storage);
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, $storage);
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, $storage);
lock_fault_call('p: release', fn () => $p->release(), $bound, $storage);
lock_fault_call('isLocked', fn () => $store->isLocked('a'), $bound, $storage);
lock_fault_call('forceRelease', fn () => $store->forceRelease('a'), $bound, $storage);
lock_fault_call('waitUntilFree(3.0)', fn () => $store->waitUntilFree('a', 3.0), $bound, $storage);
lock_fault_call('new lock: acquire', fn () => (new Lock\Lock('n', $store, 30.0))->acquire(), $bound, $storage);
lock_fault_call('new lock: acquire(true, 3.0)', fn () => (new Lock\Lock('n', $store, 30.0))->acquire(true, 3.0), $bound, $storage);
lock_fault_call('new lock: run', fn () => (new Lock\Lock('n', $store, 30.0))->run(fn () => 1, 3.0), $bound, $storage);
try {
    $store->isLocked('a');
} catch (Lock\StorageException $e) {
    echo 'the message names the server: ', var_export(str_starts_with($e->getMessage(), 'Memcached at 127.0.0.1:' . $server->port . ': '), true), "\n";
}
echo 'a and p still held as far as they know: ', var_export($a->getRemainingLifetime() > 0 && $p->getRemainingLifetime() > 0, true), "\n";

echo "-- restarted empty\n";
$server->restart();
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, ['ok'], true);
lock_fault_call('a: release', fn () => $a->release(), $bound, ['ExpiredException']);
lock_fault_call('b: refresh', fn () => $b->refresh(), $bound, ['ExpiredException']);
lock_fault_call('p: release', fn () => $p->release(), $bound, ['ExpiredException']);
lock_fault_call('a: acquire', fn () => $a->acquire(), $bound, ['ok'], true);
lock_fault_call('p: acquire', fn () => $p->acquire(), $bound, ['ok'], true);

echo "-- killed during a wait\n";
// The signal handler kills the server while the waiter sleeps between two polls.
$w = new Lock\Lock('a', $store, 30.0);
$pid = pcntl_fork();
if ($pid === 0) {
    usleep(300000);
    posix_kill(posix_getppid(), SIGUSR2);
    exit(0);
}
pcntl_async_signals(true);
pcntl_signal(SIGUSR2, function () use ($server, &$killedAt) {
    $server->kill();
    $killedAt = hrtime(true);
});
lock_fault_call('waiter: acquire(true, 10.0)', fn () => $w->acquire(true, 10.0), 10.0, $storage);
echo 'ended within the timeout + a poll + 100 ms of the kill: ', var_export(isset($killedAt) && lock_fault_since($killedAt) <= $timeout + 0.1 + LOCK_FAULT_SLACK, true), "\n";
pcntl_signal(SIGUSR2, SIG_DFL);
lock_test_wait_pid($pid);
$server->restart();
lock_fault_call('a: release (the server restarted since)', fn () => $a->release(), $bound, ['ExpiredException']);

echo "-- frozen\n";
var_dump($a->acquire());
$server->pause();
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, $storage);
// Kept past the timed call: dropping a lock whose acquire timed out gives back, briefly, what the add may have stored.
$n = new Lock\Lock('n', $store, 30.0);
lock_fault_call('new lock: acquire(true, 3.0)', fn () => $n->acquire(true, 3.0), $bound, $storage);
try {
    $store->isLocked('a');
} catch (Lock\StorageException $e) {
    echo 'the message says it timed out: ', var_export(str_contains($e->getMessage(), 'timed out after 500 ms'), true), "\n";
}
$server->resume();
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, ['ok'], true);
lock_fault_call('a: release', fn () => $a->release(), $bound, ['ok']);
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
-- killed during holds
a: release: StorageException
a: refresh: StorageException
a: isAcquired: StorageException
p: release: StorageException
isLocked: StorageException
forceRelease: StorageException
waitUntilFree(3.0): StorageException
new lock: acquire: StorageException
new lock: acquire(true, 3.0): StorageException
new lock: run: StorageException
the message names the server: true
a and p still held as far as they know: true
-- restarted empty
a: isAcquired: ok: false
a: release: ExpiredException
b: refresh: ExpiredException
p: release: ExpiredException
a: acquire: ok: true
p: acquire: ok: true
-- killed during a wait
waiter: acquire(true, 10.0): StorageException
ended within the timeout + a poll + 100 ms of the kill: true
a: release (the server restarted since): ExpiredException
-- frozen
bool(true)
a: refresh: StorageException
new lock: acquire(true, 3.0): StorageException
the message says it timed out: true
a: isAcquired: ok: true
a: release: ok
