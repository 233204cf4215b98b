--TEST--
network: refresh() keeps a hold across a slow link (nobody else gets in), and a hold that ran out during a stall or a black hole is reported as API.md says (ExpiredException, LostException) by the next refresh or release
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(60);

$T = 0.5;
$prefix = lock_test_prefix();
$direct = new LockTestResp(lock_test_redis_port());
$directStore = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);
$proxy = new LockTestProxy(lock_test_redis_port());
$at = $proxy->endpoint();
$store = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);

/** Waits (hang guard) until the server has let $resource's hold run out. */
function await_expiry(string $resource): void
{
    global $direct, $prefix;
    lock_test_wait_until(fn () => $direct->cmd('EXISTS', $prefix . '{' . $resource . '}') === 0, 10.0, "$resource to expire");
}

echo "-- a 1 s hold over a link with 200 ms each way, refreshed for 3 s\n";
// A store of its own with a 1 s timeout; the scripts it runs are loaded first, so that a refresh is one round trip.
$slowStore = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => 1.0]);
$lock = new Lock\Lock('slow', $slowStore, 1.0);
$rival = new Lock\Lock('slow', $directStore, 1.0);
var_dump($lock->acquire());
$lock->refresh();
$proxy->delay(200, 200);
$refreshes = $ours = $rivalGot = $expired = 0;
$end = microtime(true) + 3.0;
while (microtime(true) < $end) {
    $lock->refresh();
    $refreshes++;
    $expired += $lock->isExpired() ? 1 : 0;
    $ours += $direct->cmd('GET', $prefix . '{slow}') === $lock->getOwner() ? 1 : 0;
    $rivalGot += $rival->acquire() ? 1 : 0;
}
echo 'ours on the server after every refresh: ', var_export($ours === $refreshes, true), "\n";
echo 'expired locally after a refresh: ', $expired, "\n";
echo 'the rival got it: ', $rivalGot, " times\n";
echo 'refreshes at most 3 s / 400 ms round trip + 1: ', var_export($refreshes >= 2 && $refreshes <= 9, true), "\n";
lock_net_expect('release', 1.0, fn () => $lock->release());
$proxy->pass();

echo "-- stalled: the hold runs out, nobody takes it\n";
$lock = new Lock\Lock('a', $store, 0.5);
var_dump($lock->acquire());
$proxy->stall();
lock_net_expect('isAcquired', $T, fn () => $lock->isAcquired(), $at);
await_expiry('a');
$proxy->pass();
lock_net_expect('refresh', $T, fn () => $lock->refresh());
var_dump($lock->isAcquired(), $lock->getRemainingLifetime(), $lock->getFencingToken());
lock_net_expect('release (nothing held)', $T, fn () => $lock->release());
lock_net_expect('acquire', $T, fn () => $lock->acquire());
$lock->release();

echo "-- stalled: the hold runs out, somebody else takes it, our release is stalled too\n";
$lock = new Lock\Lock('b', $store, 0.5);
$rival = new Lock\Lock('b', $directStore, 10.0);
var_dump($lock->acquire());
$mine = $lock->getFencingToken();
$proxy->stall();
await_expiry('b');
var_dump($rival->acquire());
lock_net_expect('release', $T, fn () => $lock->release(), $at);
$proxy->pass();
lock_net_expect('release again', $T, fn () => $lock->release());
echo 'the rival still holds it: ', var_export($rival->isAcquired(), true), ', with a greater token: ', var_export($rival->getFencingToken() > $mine, true), "\n";
lock_net_expect('isLocked', $T, fn () => $store->isLocked('b'));
$rival->release();

echo "-- black hole: our refresh is lost, the hold runs out, somebody else takes it\n";
$lock = new Lock\Lock('c', $store, 0.5);
$rival = new Lock\Lock('c', $directStore, 10.0);
var_dump($lock->acquire());
$proxy->blackhole();
lock_net_expect('refresh', $T, fn () => $lock->refresh(), $at);
await_expiry('c');
var_dump($rival->acquire());
$proxy->pass();
lock_net_expect('refresh', $T, fn () => $lock->refresh());
var_dump($lock->isAcquired());
lock_net_expect('acquire', $T, fn () => $lock->acquire());
echo 'the rival still holds it: ', var_export($rival->isAcquired(), true), "\n";
$rival->release();

echo "-- stalled: a refresh that reached the server kept the hold although its answer was lost\n";
$lock = new Lock\Lock('d', $store, 0.5);
var_dump($lock->acquire());
$proxy->stall();
lock_net_expect('refresh(5.0)', $T, fn () => $lock->refresh(5.0), $at);
usleep(600000);
echo 'still ours on the server after the first TTL: ', var_export($direct->cmd('GET', $prefix . '{d}') === $lock->getOwner(), true), "\n";
$proxy->pass();
lock_net_expect('isAcquired', $T, fn () => $lock->isAcquired());
lock_net_expect('refresh', $T, fn () => $lock->refresh());
lock_net_expect('release', $T, fn () => $lock->release());
echo 'keys on the server: ', lock_net_describe_keys($direct, $prefix), "\n";
?>
--EXPECT--
-- a 1 s hold over a link with 200 ms each way, refreshed for 3 s
bool(true)
ours on the server after every refresh: true
expired locally after a refresh: 0
the rival got it: 0 times
refreshes at most 3 s / 400 ms round trip + 1: true
release: returned NULL, in time
-- stalled: the hold runs out, nobody takes it
bool(true)
isAcquired: Lock\StorageException, in time
refresh: Lock\ExpiredException, in time
bool(false)
NULL
NULL
release (nothing held): returned NULL, in time
acquire: returned true, in time
-- stalled: the hold runs out, somebody else takes it, our release is stalled too
bool(true)
bool(true)
release: Lock\StorageException, in time
release again: Lock\LostException, in time
the rival still holds it: true, with a greater token: true
isLocked: returned true, in time
-- black hole: our refresh is lost, the hold runs out, somebody else takes it
bool(true)
refresh: Lock\StorageException, in time
bool(true)
refresh: Lock\LostException, in time
bool(false)
acquire: returned false, in time
the rival still holds it: true
-- stalled: a refresh that reached the server kept the hold although its answer was lost
bool(true)
refresh(5.0): Lock\StorageException, in time
still ours on the server after the first TTL: true
isAcquired: returned true, in time
refresh: returned NULL, in time
release: returned NULL, in time
keys on the server: none
