--TEST--
network: through a black hole (connections accepted, nothing forwarded) every call throws Lock\StorageException within the timeout + 100 ms; nothing reached the server, and after pass-through the next calls work
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

$held = new Lock\Lock('held', $store, 30.0);
$reader = new Lock\Lock('read', $store, 30.0);
$free = new Lock\Lock('free', $store, 10.0);
$waiter = new Lock\Lock('busy', $store, 10.0);
$busy = new Lock\Lock('busy', $directStore, 10.0);
var_dump($held->acquire(), $reader->acquireRead(), $busy->acquire());
$token = $held->getFencingToken();

$proxy->blackhole();
lock_net_expect('acquire', $T, fn () => $free->acquire(), $at);
lock_net_expect('acquireRead', $T, fn () => $free->acquireRead(), $at);
// A wait longer than the timeout still fails at the first round trip that gets no answer.
lock_net_expect('acquire(true, 5.0)', $T, fn () => $waiter->acquire(true, 5.0), $at);
lock_net_expect('run', $T, fn () => $free->run(fn () => 'not called', 5.0), $at);
lock_net_expect('isLocked', $T, fn () => $store->isLocked('held'), $at);
lock_net_expect('isAcquired', $T, fn () => $held->isAcquired(), $at);
lock_net_expect('refresh', $T, fn () => $held->refresh(), $at);
lock_net_expect('acquire while held', $T, fn () => $held->acquire(), $at);
lock_net_expect('release', $T, fn () => $held->release(), $at);
lock_net_expect('release a read hold', $T, fn () => $reader->release(), $at);
lock_net_expect('forceRelease', $T, fn () => $store->forceRelease('busy'), $at);
lock_net_expect('a new store', $T, function () use ($proxy, $prefix, $T) {
    $s = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
    return $s->isLocked('held');
}, $at);
// The fencing token of a hold is known locally: no round trip, no failure.
echo 'fencing token kept: ', var_export($held->getFencingToken() === $token, true), "\n";

// Nothing went through: the holds are as they were, nothing new exists.
echo 'keys on the server: ', lock_net_describe_keys($direct, $prefix), "\n";
echo 'held is still ours: ', var_export($direct->cmd('GET', $prefix . '{held}') === $held->getOwner(), true), "\n";
echo 'busy is still held by its holder: ', var_export($direct->cmd('GET', $prefix . '{busy}') === $busy->getOwner(), true), "\n";

$proxy->pass();
lock_net_expect('after: isLocked', $T, fn () => $store->isLocked('held'));
lock_net_expect('after: isAcquired', $T, fn () => $held->isAcquired());
lock_net_expect('after: refresh', $T, fn () => $held->refresh());
echo 'after: fencing token unchanged: ', var_export($held->getFencingToken() === $token, true), "\n";
lock_net_expect('after: release', $T, fn () => $held->release());
lock_net_expect('after: release a read hold', $T, fn () => $reader->release());
lock_net_expect('after: acquire', $T, fn () => $free->acquire());
echo 'after: a new fencing token is greater: ', var_export($free->getFencingToken() > $token, true), "\n";
lock_net_expect('after: release', $T, fn () => $free->release());
lock_net_expect('after: acquire a busy lock', $T, fn () => $waiter->acquire());
$busy->release();
lock_net_expect('after: acquire(true, 1.0) once free', 1.0 + $T, fn () => $waiter->acquire(true, 1.0));
$waiter->release();
echo 'keys on the server: ', lock_net_describe_keys($direct, $prefix), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
acquire: Lock\StorageException, in time
acquireRead: Lock\StorageException, in time
acquire(true, 5.0): Lock\StorageException, in time
run: Lock\StorageException, in time
isLocked: Lock\StorageException, in time
isAcquired: Lock\StorageException, in time
refresh: Lock\StorageException, in time
acquire while held: Lock\StorageException, in time
release: Lock\StorageException, in time
release a read hold: Lock\StorageException, in time
forceRelease: Lock\StorageException, in time
a new store: Lock\StorageException, in time
fencing token kept: true
keys on the server: {busy} {held} {read} {read}:r
held is still ours: true
busy is still held by its holder: true
after: isLocked: returned true, in time
after: isAcquired: returned true, in time
after: refresh: returned NULL, in time
after: fencing token unchanged: true
after: release: returned NULL, in time
after: release a read hold: returned NULL, in time
after: acquire: returned true, in time
after: a new fencing token is greater: true
after: release: returned NULL, in time
after: acquire a busy lock: returned false, in time
after: acquire(true, 1.0) once free: returned true, in time
keys on the server: none
