--TEST--
faults: a Redis server killed (SIGKILL) and restarted during holds: calls while it is down throw Lock\StorageException within the timeout + 100 ms and keep the hold; after the restart release/refresh say ExpiredException or LostException and the next acquire works; with AOF the hold survives
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$storage = ['StorageException'];
$prefix = lock_test_prefix();

echo "-- without persistence\n";
$server = new LockTestRedisServer();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);
$pstore = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout, 'persistent' => true]);
$a = new Lock\Lock('a', $store, 30.0);
$b = new Lock\Lock('b', $store, 30.0);
$c = new Lock\Lock('c', $store, 30.0);
$e = new Lock\Lock('e', $store, 30.0);
$r = new Lock\Lock('r', $store, 30.0);
$p = new Lock\Lock('p', $pstore, 30.0);
var_dump($a->acquire(), $b->acquire(), $c->acquire(), $e->acquire(), $r->acquireRead(), $p->acquire());
$token = $a->getFencingToken();
$fds = lock_fault_fds();

$server->kill();
lock_fault_call('a: release', fn () => $a->release(), $bound, $storage);
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, $storage);
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, $storage);
lock_fault_call('b: acquire again', fn () => $b->acquire(), $bound, $storage);
lock_fault_call('r: refresh', fn () => $r->refresh(), $bound, $storage);
lock_fault_call('p: release', fn () => $p->release(), $bound, $storage);
lock_fault_call('isLocked', fn () => $store->isLocked('a'), $bound, $storage);
lock_fault_call('forceRelease', fn () => $store->forceRelease('a'), $bound, $storage);
lock_fault_call('new lock: acquire', fn () => (new Lock\Lock('n', $store, 30.0))->acquire(), $bound, $storage);
lock_fault_call('new lock: acquire(true, 3.0)', fn () => (new Lock\Lock('n', $store, 30.0))->acquire(true, 3.0), $bound, $storage);
lock_fault_call('new lock: run', fn () => (new Lock\Lock('n', $store, 30.0))->run(fn () => 1, 3.0), $bound, $storage);
// A release that could not reach the server gives nothing up: the lock still counts as held.
echo 'a and p still held as far as they know: ', var_export($a->getRemainingLifetime() > 0 && $p->getRemainingLifetime() > 0, true), "\n";

$server->restart();
// The server came back empty: every hold is gone with its data.
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, ['ok'], true);
lock_fault_call('e: release', fn () => $e->release(), $bound, ['ExpiredException']);
lock_fault_call('e: release again (not held: a no-op)', fn () => $e->release(), $bound, ['ok']);
lock_fault_call('b: refresh', fn () => $b->refresh(), $bound, ['ExpiredException']);
lock_fault_call('r: release', fn () => $r->release(), $bound, ['ExpiredException']);
// A release retried before the hold's TTL could run out succeeds (docs/redis.md): the first may have run.
lock_fault_call('a: release retried', fn () => $a->release(), $bound, ['ok']);
// The pooled connection died with the old server: the persistent store notices, and does not blame the server.
lock_fault_call('p: release retried', fn () => $p->release(), $bound, ['ok']);
// Somebody else takes c on the new server: our hold on it is lost, not merely expired.
$other = new Lock\Lock('c', new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]), 30.0);
var_dump($other->acquire());
lock_fault_call('c: isAcquired', fn () => $c->isAcquired(), $bound, ['ok'], true);
lock_fault_call('c: refresh', fn () => $c->refresh(), $bound, ['LostException']);
lock_fault_call('c: release', fn () => $c->release(), $bound, ['ok'], true);
lock_fault_call('other still holds c', fn () => $other->isAcquired(), $bound, ['ok'], true);
$other->release();
unset($other);
// The next acquisitions work, and fencing tokens still grow: a lost counter restarts from the clock.
lock_fault_call('a: acquire', fn () => $a->acquire(), $bound, ['ok'], true);
echo 'a: fencing token greater than before the restart: ', var_export($a->getFencingToken() > $token, true), "\n";
lock_fault_call('p: acquire', fn () => $p->acquire(), $bound, ['ok'], true);
lock_fault_call('r: acquireRead', fn () => $r->acquireRead(), $bound, ['ok'], true);
foreach ([$a, $p, $r, $b, $e] as $lock) {
    $lock->release();
}
// The connections of failed calls were closed, and the stores hold one each again.
echo 'no file descriptor added: ', var_export(lock_fault_fds() <= $fds, true), "\n";
echo 'keys left: ', json_encode(lock_fault_keys($server->client(), $prefix)), "\n";

echo "-- with AOF, appendfsync always\n";
$dir = lock_test_tmpdir('aof');
$server = new LockTestRedisServer(['--appendonly', 'yes', '--appendfsync', 'always', '--dir', $dir]);
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);
$a = new Lock\Lock('a', $store, 30.0);
var_dump($a->acquire());
$token = $a->getFencingToken();
$server->kill();
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, $storage);
$server->restart();
// Every write reached the disk before its reply: the hold and the fencing counter are still there.
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, ['ok'], true);
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, ['ok']);
lock_fault_call('another lock: acquire', fn () => (new Lock\Lock('a', $store))->acquire(), $bound, ['ok'], true);
lock_fault_call('a: release', fn () => $a->release(), $bound, ['ok']);
lock_fault_call('a: acquire', fn () => $a->acquire(), $bound, ['ok'], true);
echo 'a: fencing token greater than before: ', var_export($a->getFencingToken() > $token, true), "\n";
$a->release();
echo 'keys left: ', json_encode(lock_fault_keys($server->client(), $prefix)), "\n";
?>
--EXPECT--
-- without persistence
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
a: release: StorageException
a: refresh: StorageException
a: isAcquired: StorageException
b: acquire again: StorageException
r: refresh: StorageException
p: release: StorageException
isLocked: StorageException
forceRelease: StorageException
new lock: acquire: StorageException
new lock: acquire(true, 3.0): StorageException
new lock: run: StorageException
a and p still held as far as they know: true
a: isAcquired: ok: false
e: release: ExpiredException
e: release again (not held: a no-op): ok
b: refresh: ExpiredException
r: release: ExpiredException
a: release retried: ok
p: release retried: ok
bool(true)
c: isAcquired: ok: false
c: refresh: LostException
c: release: ok: NULL
other still holds c: ok: true
a: acquire: ok: true
a: fencing token greater than before the restart: true
p: acquire: ok: true
r: acquireRead: ok: true
no file descriptor added: true
keys left: []
-- with AOF, appendfsync always
bool(true)
a: refresh: StorageException
a: isAcquired: ok: true
a: refresh: ok
another lock: acquire: ok: false
a: release: ok
a: acquire: ok: true
a: fencing token greater than before: true
keys left: []
