--TEST--
network: with replies held back (the server runs every command, the answer never comes) every call throws Lock\StorageException within the timeout + 100 ms; after pass-through the next calls are reconciled by the owner token
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

/** Who holds $resource, seen directly on the server. */
function holder(string $resource, Lock\Lock ...$locks): string
{
    global $direct, $prefix;
    $v = $direct->cmd('GET', $prefix . '{' . $resource . '}');
    foreach ($locks as $i => $lock) {
        if ($v === $lock->getOwner()) {
            return "lock $i";
        }
    }
    return $v === null ? 'nobody' : (string) $v;
}

$held = new Lock\Lock('held', $store, 30.0);
$kept = new Lock\Lock('kept', $store, 10.0);
$free = new Lock\Lock('free', $store, 10.0);
$reader = new Lock\Lock('read', $store, 30.0);
$waiter = new Lock\Lock('busy', $store, 10.0);
$busy = new Lock\Lock('busy', $directStore, 10.0);
$forced = new Lock\Lock('forced', $directStore, 10.0);
var_dump($held->acquire(), $kept->acquire(), $busy->acquire(), $forced->acquire());
$tokens = [$held->getFencingToken(), $kept->getFencingToken(), $busy->getFencingToken(), $forced->getFencingToken()];
$kept->refresh(3.0);
// A stalled EVALSHA that met NOSCRIPT would not have run: the server gets every script first.
lock_net_load_scripts($store);

$proxy->stall();
lock_net_expect('refresh(10.0)', $T, fn () => $kept->refresh(10.0), $at);
echo '  the server ran it: {kept} lives more than 5 s: ', json_encode($direct->cmd('PTTL', $prefix . '{kept}') > 5000), "\n";
lock_net_expect('acquire', $T, fn () => $free->acquire(), $at);
echo '  the server ran it: {free} held by ', holder('free', $free), "\n";
lock_net_expect('acquireRead', $T, fn () => $reader->acquireRead(), $at);
echo '  the server ran it: readers ', json_encode($direct->cmd('ZRANGE', $prefix . '{read}:r', 0, -1) === [$reader->getOwner()]), "\n";
lock_net_expect('acquire(true, 5.0)', $T, fn () => $waiter->acquire(true, 5.0), $at);
echo '  the server ran it: queued ', json_encode($direct->cmd('LRANGE', $prefix . '{busy}:q', 0, -1) === [$waiter->getOwner()]), "\n";
lock_net_expect('isLocked', $T, fn () => $store->isLocked('held'), $at);
lock_net_expect('isAcquired', $T, fn () => $held->isAcquired(), $at);
lock_net_expect('release', $T, fn () => $held->release(), $at);
echo '  the server ran it: {held} held by ', holder('held', $held), "\n";
lock_net_expect('forceRelease', $T, fn () => $store->forceRelease('forced'), $at);
echo '  the server ran it: {forced} held by ', holder('forced', $forced), "\n";
lock_net_expect('a new store', $T, function () use ($proxy, $prefix, $T) {
    $s = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
    return $s->isLocked('held');
}, $at);

$proxy->pass();
// Late replies may now reach the closed connections: none may be read as the answer to a new command.
lock_net_expect('after: isLocked', $T, fn () => $store->isLocked('held'));
// The acquire ran, so the hold is ours by our owner token: acquire() takes it again, with a new token.
lock_net_expect('after: acquire', $T, fn () => $free->acquire());
echo '  {free} held by ', holder('free', $free), ', token greater than any before: ', json_encode($free->getFencingToken() > max($tokens)), "\n";
lock_net_expect('after: acquireRead', $T, fn () => $reader->acquireRead());
// The refresh ran; the hold is still ours.
lock_net_expect('after: isAcquired (refreshed)', $T, fn () => $kept->isAcquired());
// The release ran: asking again finds nothing to release, and says so without claiming an expiry.
lock_net_expect('after: release again', $T, fn () => $held->release());
lock_net_expect('after: isAcquired (released)', $T, fn () => $held->isAcquired());
// The forced release ran.
lock_net_expect('after: isAcquired (forced)', $T, fn () => $forced->isAcquired());
// The waiter's queue entry ran too: waiting again is served first when the holder lets go.
$busy->release();
lock_net_expect('after: acquire(true, 1.0)', 1.0 + $T, fn () => $waiter->acquire(true, 1.0));
echo '  {busy} held by ', holder('busy', $waiter, $busy), "\n";
foreach ([$free, $reader, $kept, $waiter] as $lock) {
    $lock->release();
}
echo 'keys on the server: ', lock_net_describe_keys($direct, $prefix), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
refresh(10.0): Lock\StorageException, in time
  the server ran it: {kept} lives more than 5 s: true
acquire: Lock\StorageException, in time
  the server ran it: {free} held by lock 0
acquireRead: Lock\StorageException, in time
  the server ran it: readers true
acquire(true, 5.0): Lock\StorageException, in time
  the server ran it: queued true
isLocked: Lock\StorageException, in time
isAcquired: Lock\StorageException, in time
release: Lock\StorageException, in time
  the server ran it: {held} held by nobody
forceRelease: Lock\StorageException, in time
  the server ran it: {forced} held by nobody
a new store: Lock\StorageException, in time
after: isLocked: returned false, in time
after: acquire: returned true, in time
  {free} held by lock 0, token greater than any before: true
after: acquireRead: returned true, in time
after: isAcquired (refreshed): returned true, in time
after: release again: returned NULL, in time
after: isAcquired (released): returned false, in time
after: isAcquired (forced): returned false, in time
after: acquire(true, 1.0): returned true, in time
  {busy} held by lock 0
keys on the server: none
