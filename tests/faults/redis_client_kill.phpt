--TEST--
faults: the Redis server cuts our connection (CLIENT KILL) while idle, pooled (persistent) or asleep in a blocking wait: the next call reconnects and works within the timeout + 100 ms, a wait goes on, and nothing leaks
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
$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));

/** Cuts the one connection the server has besides ours, and waits until it is gone. */
function cut(): void
{
    global $admin;
    $id = lock_fault_only_client($admin)['id'];
    if ($admin->ok('CLIENT', 'KILL', 'ID', $id) !== 1) {
        echo "CLIENT KILL found no connection $id\n";
    }
    lock_test_wait_until(fn () => !isset(lock_fault_clients($admin)[(int) $id]), 20, "connection $id to close");
}

echo "-- an idle connection, cut before each call\n";
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);
$h = new Lock\Lock('h', $store, 30.0);
$r = new Lock\Lock('r', $store, 30.0);
var_dump($h->acquire(), $r->acquireRead());
$fds = lock_fault_fds();
$calls = [
    'isLocked' => fn () => $store->isLocked('h'),
    'acquire' => fn () => (new Lock\Lock('n', $store))->acquire(),
    'acquire(true, 1.0)' => fn () => (new Lock\Lock('n', $store))->acquire(true, 1.0),
    'acquireRead' => fn () => (new Lock\Lock('s', $store))->acquireRead(),
    'run' => fn () => (new Lock\Lock('n', $store))->run(fn () => 'ran', 1.0),
    'h: isAcquired' => fn () => $h->isAcquired(),
    'h: refresh' => fn () => $h->refresh(),
    'h: acquire again' => fn () => $h->acquire(),
    'r: refresh' => fn () => $r->refresh(),
    'r: promote' => fn () => $r->acquire(),
    'r: demote' => fn () => $r->acquireRead(),
    'forceRelease' => fn () => $store->forceRelease('n'),
    'h: release' => fn () => $h->release(),
    'r: release' => fn () => $r->release(),
    'isLocked afterwards' => fn () => $store->isLocked('h') || $store->isLocked('r'),
];
foreach ($calls as $what => $call) {
    cut();
    lock_fault_call($what, $call, $bound, ['ok'], true);
}
echo 'connections of the store: ', count(lock_fault_clients($admin)), "\n";
echo 'no file descriptor added: ', var_export(lock_fault_fds() <= $fds, true), "\n";
unset($store, $h, $r, $calls, $call);
lock_test_wait_until(fn () => lock_fault_clients($admin) === [], 20, 'the store to close its connection');
echo "closed with its store\n";

echo "-- a persistent connection\n";
$options = ['timeout' => $timeout, 'persistent' => true];
$p = new Lock\Lock('p', new Lock\Store\RedisStore($dsn, $options), 30.0);
var_dump($p->acquire());
cut();
lock_fault_call('held, cut, release', fn () => $p->release(), $bound, ['ok'], true);
unset($p);
// The connection now waits in the pool for the next store with the same settings.
$pooled = lock_fault_only_client($admin)['id'];
for ($i = 0; $i < 3; $i++) {
    cut();
    lock_fault_call("pooled, cut, new store $i: acquire and release", function () use ($dsn, $options): bool {
        $lock = new Lock\Lock('p', new Lock\Store\RedisStore($dsn, $options));
        $ok = $lock->acquire();
        $lock->release();
        return $ok;
    }, $bound, ['ok'], true);
}
// One pooled connection, the replacement of the last one cut: none piles up.
echo 'connections in the pool: ', count(lock_fault_clients($admin)), "\n";

echo "-- asleep in a blocking wait\n";
$holder = new Lock\Lock('busy', new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]), 30.0);
var_dump($holder->acquire());
$token = $holder->getFencingToken();
$blocked = fn (): array => array_values(array_filter(lock_fault_clients($admin), fn (array $c) => $c['cmd'] === 'blpop'));
$queue = fn (): array => $admin->ok('LRANGE', $prefix . '{busy}:q', 0, -1);
$setup = '$store = ' . lock_fault_store_code($dsn, ['timeout' => $timeout]) . '; $lock = new Lock\Lock("busy", $store, 30.0);';
$waiter = lock_fault_caller($setup, '$store->isLocked("x")', [
    'wait' => '$lock->acquire(true, 20.0) ? $lock->getFencingToken() : false',
    'owner' => '$lock->getOwner()',
]);
$waiter->send('go wait');
lock_test_wait_until(fn () => count($blocked()) === 1, 20, 'the waiter to sleep');
$first = $blocked()[0]['id'];
$before = $queue();
$admin->ok('CLIENT', 'KILL', 'ID', $first);
// It reconnects, takes its place in the queue again and sleeps on its new connection.
lock_test_wait_until(fn () => count($blocked()) === 1 && $blocked()[0]['id'] !== $first, 20, 'the waiter to sleep again');
echo 'still queued, alone: ', var_export($queue() === $before && count($before) === 1, true), "\n";
$holder->release();
$r = lock_fault_caller_result($waiter);
lock_fault_report('waiter', $r, ['ok'], 20.0 + $bound, false);
echo 'handed over with a greater fencing token: ', var_export((int) $r[2] > $token, true), "\n";
$waiter->wait();
echo 'keys that stay: ', lock_fault_keys_that_stay($admin, $prefix), "\n";

echo "-- asleep in a blocking wait, cut twice in a row\n";
var_dump($holder->acquire());
$waiter = lock_fault_caller($setup, '$store->isLocked("x")', ['wait' => '$lock->acquire(true, 20.0)']);
$waiter->send('go wait');
foreach (['first', 'second'] as $n) {
    lock_test_wait_until(fn () => count($blocked()) === 1, 20, 'the waiter to sleep');
    $admin->ok('CLIENT', 'KILL', 'ID', $blocked()[0]['id']);
}
/*
 * A waiter gives up only when the step on a new connection after a drop
 * fails too; here each reconnect works, so it goes on waiting and gets the
 * lock. (Had it given up, it would have left the queue, so that the release
 * does not hand the lock to a waiter that is gone.)
 */
$r = [$waiter->stdout];
$w = $e = null;
$gaveUp = stream_select($r, $w, $e, (int) lock_test_patience(5.0)) === 1;
if ($gaveUp) {
    lock_fault_report('waiter', lock_fault_caller_result($waiter), ['StorageException'], 20.0 + $bound);
    echo 'it left the queue: ', var_export($queue() === [], true), "\n";
    $holder->release();
} else {
    echo 'waiter: goes on waiting, sleeping: ', var_export(count($blocked()) === 1, true), "\n";
    $holder->release();
    lock_fault_report('waiter', lock_fault_caller_result($waiter), ['ok'], 20.0 + $bound);
}
$waiter->wait();
echo 'free for a newcomer: ', var_export((new Lock\Lock('busy', new Lock\Store\RedisStore($dsn)))->acquire(), true), "\n";
echo 'keys that stay: ', lock_fault_keys_that_stay($admin, $prefix), "\n";
?>
--EXPECT--
-- an idle connection, cut before each call
bool(true)
bool(true)
isLocked: ok: true
acquire: ok: true
acquire(true, 1.0): ok: true
acquireRead: ok: true
run: ok: 'ran'
h: isAcquired: ok: true
h: refresh: ok: NULL
h: acquire again: ok: true
r: refresh: ok: NULL
r: promote: ok: true
r: demote: ok: true
forceRelease: ok: NULL
h: release: ok: NULL
r: release: ok: NULL
isLocked afterwards: ok: false
connections of the store: 1
no file descriptor added: true
closed with its store
-- a persistent connection
bool(true)
held, cut, release: ok: NULL
pooled, cut, new store 0: acquire and release: ok: true
pooled, cut, new store 1: acquire and release: ok: true
pooled, cut, new store 2: acquire and release: ok: true
connections in the pool: 1
-- asleep in a blocking wait
bool(true)
still queued, alone: true
waiter: ok
handed over with a greater fencing token: true
keys that stay: none
-- asleep in a blocking wait, cut twice in a row
bool(true)
waiter: goes on waiting, sleeping: true
waiter: ok: true
free for a newcomer: true
keys that stay: none
