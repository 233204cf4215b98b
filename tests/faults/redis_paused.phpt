--TEST--
faults: a Redis server stopped (SIGSTOP) longer than the timeout: every call throws Lock\StorageException within its timeout + 100 ms, also waits already asleep; after SIGCONT every store works and nothing stays behind
--EXTENSIONS--
lock
pcntl
posix
--INI--
lock.redis_timeout=0.4
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$stores = [
    'option' => new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]),
    'dsn' => new Lock\Store\RedisStore($server->dsn('timeout=0.2&prefix=' . urlencode($prefix))),
    'ini' => new Lock\Store\RedisStore($dsn),
    'persistent' => new Lock\Store\RedisStore($dsn, ['timeout' => $timeout, 'persistent' => true]),
];
$bounds = ['option' => $bound, 'dsn' => 0.2 + LOCK_FAULT_SLACK, 'ini' => 0.4 + LOCK_FAULT_SLACK, 'persistent' => $bound];
$store = $stores['option'];
$busy = new Lock\Lock('busy', $store, 30.0);
$held = new Lock\Lock('held', $store, 30.0);
$reader = new Lock\Lock('shared', $store, 30.0);
$heldP = new Lock\Lock('held-p', $stores['persistent'], 30.0);
var_dump($busy->acquire(), $held->acquire(), $reader->acquireRead(), $heldP->acquire());
$token = $held->getFencingToken();
foreach ($stores as $s) {
    $s->isLocked('warm-up');
}

// Two waiters already asleep in BLPOP when the server stops: one with a wait timeout, one without.
$setup = '$store = ' . lock_fault_store_code($dsn, ['timeout' => $timeout]) . '; $lock = new Lock\Lock("busy", $store, 3.0);';
$bounded = lock_fault_caller($setup, '$store->isLocked("x")', ['wait' => '$lock->acquire(true, 2.0)']);
$forever = lock_fault_caller($setup, '$store->isLocked("x")', ['wait' => '$lock->acquire(true)']);
$bounded->send('go wait');
$forever->send('go wait');
lock_test_wait_until(fn () => $admin->ok('LLEN', $prefix . '{busy}:q') === 2, 20, 'two queued waiters');
usleep(200000);

$server->pause();
$pausedAt = hrtime(true);
$fds = lock_fault_fds();

// Locks of these calls get a short TTL: a command that reached the frozen server may still run once it thaws.
$n = 0;
$fresh = static function () use ($store, &$n): Lock\Lock {
    return new Lock\Lock('paused-' . $n++, $store, 3.0);
};
$storage = ['StorageException'];
lock_fault_call('acquire', fn () => $fresh()->acquire(), $bound, $storage);
lock_fault_call('acquire(true)', fn () => $fresh()->acquire(true), $bound, $storage);
lock_fault_call('acquire(true, 5.0)', fn () => $fresh()->acquire(true, 5.0), $bound, $storage);
lock_fault_call('acquireRead', fn () => $fresh()->acquireRead(), $bound, $storage);
lock_fault_call('acquireRead(true, 5.0)', fn () => $fresh()->acquireRead(true, 5.0), $bound, $storage);
lock_fault_call('run', fn () => $fresh()->run(fn () => 'not called', 5.0), $bound, $storage);
lock_fault_call('isLocked', fn () => $store->isLocked('held'), $bound, $storage);
lock_fault_call('forceRelease', fn () => $store->forceRelease('nobody'), $bound, $storage);
lock_fault_call('held: isAcquired', fn () => $held->isAcquired(), $bound, $storage);
lock_fault_call('held: refresh', fn () => $held->refresh(), $bound, $storage);
lock_fault_call('held: acquire again (refresh)', fn () => $held->acquire(), $bound, $storage);
// Known since the acquisition: no round trip.
lock_fault_call('held: getFencingToken', fn () => $held->getFencingToken() === $token, $bound, ['ok'], true);
lock_fault_call('held: release', fn () => $held->release(), $bound, $storage);
lock_fault_call('reader: refresh', fn () => $reader->refresh(), $bound, $storage);
lock_fault_call('reader: promote', fn () => $reader->acquire(), $bound, $storage);
lock_fault_call('reader: release', fn () => $reader->release(), $bound, $storage);
foreach (['dsn', 'ini', 'persistent'] as $name) {
    lock_fault_call("$name store: isLocked", fn () => $stores[$name]->isLocked('x'), $bounds[$name], $storage);
    lock_fault_call("$name store: acquire", fn () => (new Lock\Lock('paused-' . $name, $stores[$name], 3.0))->acquire(), $bounds[$name], $storage);
}
lock_fault_call('persistent: release', fn () => $heldP->release(), $bound, $storage);
// A new connection: the kernel completes the handshake for the frozen server, the reply never comes.
lock_fault_call('new store', fn () => (new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]))->isLocked('x'), $bound, $storage);
lock_fault_call('new persistent store', fn () => (new Lock\Store\RedisStore($dsn, ['timeout' => $timeout, 'persistent' => true]))->isLocked('x'), $bound, $storage);
// Each failure closes its connection: nothing piles up while the server stays frozen.
echo 'no file descriptor added: ', var_export(lock_fault_fds() <= $fds, true), "\n";

/*
 * A waiter asleep in BLPOP cannot tell a frozen server from a long sleep: it
 * notices when its sleep is overdue (10 ms past its end), and its next step
 * then times out. With a wait timeout W its sleeps end by W, so the call ends
 * by W + the timeout; without one it sleeps at most 2 s at a time (the
 * bound on a waiter's sleep in docs/waiting.md), so it ends by 2 s + the timeout after
 * the freeze. The bounds' 100 ms cover the 10 ms too.
 */
$r = lock_fault_caller_result($bounded);
lock_fault_report('waiter acquire(true, 2.0)', $r, $storage, 2.0 + $bound);
$r = lock_fault_caller_result($forever);
lock_fault_report('waiter acquire(true)', $r, $storage, INF);
$after = ($r[3] - $pausedAt) / 1e9;
if ($after > 2.0 + $bound) {
    printf("waiter acquire(true): ended %.0f ms after the freeze, over its bound of %.0f ms\n", $after * 1000, (2.0 + $bound) * 1000);
}
$bounded->wait();
$forever->wait();
echo 'waiters exited: ', var_export($bounded->exitCode() === 0 && $forever->exitCode() === 0, true), "\n";

$server->resume();
// The old connections may still get their late replies: each store must ignore them and work.
foreach ($stores as $name => $s) {
    $lock = new Lock\Lock('after-' . $name, $s);
    $ok = $lock->acquire() && $s->isLocked('after-' . $name) && $lock->isAcquired();
    $lock->release();
    echo "$name store works again: ", var_export($ok && !$s->isLocked('after-' . $name), true), "\n";
}
// A release sent to the frozen server may have run when it woke: either way the hold is gone afterwards.
foreach (['held' => $held, 'reader' => $reader, 'persistent' => $heldP] as $name => $lock) {
    lock_fault_call("$name: release after the thaw", fn () => $lock->release(), $bound, ['ok', 'ExpiredException']);
}
echo 'nothing held: ', var_export(!$store->isLocked('held') && !$store->isLocked('shared') && !$store->isLocked('held-p'), true), "\n";
var_dump($held->acquire(), $held->getFencingToken() > $token);
$held->release();

/*
 * What the faults left: queue entries of the two waiters (they could not
 * leave the queue of a frozen server; their liveness deadline, 2 s + 2 x the
 * timeout + 0.5 s, ends them) and holds taken by commands that ran late (3 s
 * TTL). Every such key has an expiry no later than those, and then it is gone.
 */
$left = lock_fault_keys($admin, $prefix);
unset($left['{busy}']);
$lasting = array_filter($left, fn (int $ttl) => $ttl < 0 || $ttl > 3500);
echo 'keys left behind expire by themselves: ', $lasting === [] ? 'true' : 'false ' . json_encode($left), "\n";
lock_test_wait_until(fn () => array_keys(lock_fault_keys($admin, $prefix)) === ['{busy}'], 10.0, 'the keys to expire');
echo "and are gone\n";
$busy->release();
echo 'nothing left: ', json_encode(lock_fault_keys($admin, $prefix)), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
acquire: StorageException
acquire(true): StorageException
acquire(true, 5.0): StorageException
acquireRead: StorageException
acquireRead(true, 5.0): StorageException
run: StorageException
isLocked: StorageException
forceRelease: StorageException
held: isAcquired: StorageException
held: refresh: StorageException
held: acquire again (refresh): StorageException
held: getFencingToken: ok: true
held: release: StorageException
reader: refresh: StorageException
reader: promote: StorageException
reader: release: StorageException
dsn store: isLocked: StorageException
dsn store: acquire: StorageException
ini store: isLocked: StorageException
ini store: acquire: StorageException
persistent store: isLocked: StorageException
persistent store: acquire: StorageException
persistent: release: StorageException
new store: StorageException
new persistent store: StorageException
no file descriptor added: true
waiter acquire(true, 2.0): StorageException
waiter acquire(true): StorageException
waiters exited: true
option store works again: true
dsn store works again: true
ini store works again: true
persistent store works again: true
held: release after the thaw: ok
reader: release after the thaw: ok
persistent: release after the thaw: ok
nothing held: true
bool(true)
bool(true)
keys left behind expire by themselves: true
and are gone
nothing left: []
