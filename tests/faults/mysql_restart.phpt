--TEST--
faults: MySQL (MariaDB): the server killed (SIGKILL, as a crash) and started again during holds and waits: calls while it is down throw Lock\StorageException within the timeout + 100 ms and keep the hold; a waiter gets a StorageException; after the restart the holds are gone (ExpiredException, or LostException when somebody else took it), and the next acquire works with a greater fencing token
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$server = new LockTestMyServer();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . rawurlencode($prefix));
$store = new Lock\Store\MysqlStore($dsn, ['timeout' => $timeout]);
$pstore = new Lock\Store\MysqlStore($dsn, ['timeout' => $timeout, 'persistent' => true]);
$a = new Lock\Lock('a', $store);
$b = new Lock\Lock('b', $store);
$r = new Lock\Lock('r', $store);
$p = new Lock\Lock('p', $pstore);
var_dump($a->acquire(), $b->acquire(), $r->acquireRead(), $p->acquire());
$token = $a->getFencingToken();
// Stores left with idle connections (one pooled across stores as persistent): the restart ends their sessions.
$idle = new Lock\Store\MysqlStore($dsn, ['timeout' => $timeout]);
$pooled = new Lock\Store\MysqlStore($dsn, ['timeout' => $timeout, 'persistent' => true]);
var_dump($idle->isLocked('x'), $pooled->isLocked('x'));
unset($pooled);

$waiter = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$l = new Lock\Lock("a", new Lock\Store\MysqlStore(' . var_export($dsn, true) . ', ["timeout" => 0.5]));'
    . 'echo "waiting\n"; try { var_dump($l->acquire(true, 60.0)); } catch (Lock\LockException $e) { echo get_class($e), "\n"; }'
    . 'echo "done\n";');
$waiter->waitFor('waiting');
lock_test_wait_until(static fn () => count(lock_test_mysql_waiters($prefix, 'a', $server->dsn)) === 1, 30.0, 'the waiter to queue');

$server->stop();
$start = hrtime(true);
echo 'waiter: ', trim(str_replace('done', '', $waiter->waitFor('done'))), "\n";
echo 'waiter told within the bound: ', var_export(lock_fault_since($start) <= $bound, true), "\n";
$storage = ['StorageException'];
lock_fault_call('a: release', fn () => $a->release(), $bound, $storage);
lock_fault_call('a: refresh', fn () => $a->refresh(), $bound, $storage);
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), $bound, $storage);
lock_fault_call('a: getFencingToken (known already)', fn () => $a->getFencingToken() === $token, $bound, ['ok'], true);
lock_fault_call('r: release', fn () => $r->release(), $bound, $storage);
lock_fault_call('p: release', fn () => $p->release(), $bound, $storage);
lock_fault_call('isLocked', fn () => $store->isLocked('a'), $bound, $storage);
lock_fault_call('forceRelease', fn () => $store->forceRelease('a'), $bound, $storage);
lock_fault_call('waitUntilFree', fn () => $store->waitUntilFree('a', 3.0), $bound, $storage);
lock_fault_call('new lock: acquire', fn () => (new Lock\Lock('n', $store))->acquire(), $bound, $storage);
lock_fault_call('new lock: acquire(true, 3.0)', fn () => (new Lock\Lock('n', $store))->acquire(true, 3.0), $bound, $storage);
// A release that could not reach the server gives nothing up: the lock still counts as held.
var_dump($a->getFencingToken() === $token);

$server->up();
// An idle connection that the old server closed is noticed before use: no StorageException for it.
lock_fault_call('idle store: isLocked', fn () => $idle->isLocked('x'), 5.0, ['ok'], true);
lock_fault_call('new persistent store: isLocked', fn () => (new Lock\Store\MysqlStore($dsn, ['persistent' => true]))->isLocked('x'), 5.0, ['ok'], true);
// The sessions ended with the old server: every hold is gone.
lock_fault_call('a: isAcquired', fn () => $a->isAcquired(), 5.0, ['ok'], true);
lock_fault_call('a: release', fn () => $a->release(), 5.0, ['ExpiredException']);
lock_fault_call('a: release again (not held: a no-op)', fn () => $a->release(), 5.0, ['ok']);
lock_fault_call('r: release', fn () => $r->release(), 5.0, ['ExpiredException']);
lock_fault_call('p: release', fn () => $p->release(), 5.0, ['ExpiredException']);
$other = new Lock\Lock('b', new Lock\Store\MysqlStore($dsn));
var_dump($other->acquire());
lock_fault_call('b: refresh', fn () => $b->refresh(), 5.0, ['LostException']);
lock_fault_call('b: release (not held any more)', fn () => $b->release(), 5.0, ['ok']);
$other->release();
lock_fault_call('a: acquire', fn () => $a->acquire(), 5.0, ['ok'], true);
echo 'a: fencing token greater than before the restart: ', var_export($a->getFencingToken() > $token, true), "\n";
lock_fault_call('p: acquire', fn () => $p->acquire(), 5.0, ['ok'], true);
lock_fault_call('r: acquireRead', fn () => $r->acquireRead(), 5.0, ['ok'], true);
lock_fault_call('b: acquire', fn () => $b->acquire(), 5.0, ['ok'], true);
foreach ([$a, $p, $r, $b] as $lock) {
    $lock->release();
}
var_dump($store->isLocked('a'), $store->isLocked('r'));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
waiter: Lock\StorageException
waiter told within the bound: true
a: release: StorageException
a: refresh: StorageException
a: isAcquired: StorageException
a: getFencingToken (known already): ok: true
r: release: StorageException
p: release: StorageException
isLocked: StorageException
forceRelease: StorageException
waitUntilFree: StorageException
new lock: acquire: StorageException
new lock: acquire(true, 3.0): StorageException
bool(true)
idle store: isLocked: ok: false
new persistent store: isLocked: ok: false
a: isAcquired: ok: false
a: release: ExpiredException
a: release again (not held: a no-op): ok
r: release: ExpiredException
p: release: ExpiredException
bool(true)
b: refresh: LostException
b: release (not held any more): ok
a: acquire: ok: true
a: fencing token greater than before the restart: true
p: acquire: ok: true
r: acquireRead: ok: true
b: acquire: ok: true
bool(false)
bool(false)
