--TEST--
network: a slow link (delay added to requests, to replies, to both; below the timeout) only slows the calls: every result is right, holds, readers, waits and fencing tokens included
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(90);

$T = 1.0;
$direct = new LockTestResp(lock_test_redis_port());
$proxy = new LockTestProxy(lock_test_redis_port());

foreach ([[150, 0], [0, 150], [120, 120]] as [$up, $down]) {
    echo "-- delay $up ms to the server, $down ms back\n";
    $prefix = lock_test_prefix();
    $store = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
    $directStore = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);
    $a = new Lock\Lock('a', $store, 10.0);
    $b = new Lock\Lock('a', $store, 10.0);
    // The first round trips of a store load its scripts: done before the delay, so each call below is one exchange or more.
    $a->acquireRead();
    $a->release();
    $proxy->delay($up, $down);

    [$what, $seconds] = lock_net_timed(fn () => $store->isLocked('a'));
    echo "isLocked: $what, slowed by the delay: ", var_export($seconds >= ($up + $down) / 1000, true), "\n";
    lock_net_expect('acquire', $T, fn () => $a->acquire());
    echo '  held by a on the server: ', var_export($direct->cmd('GET', $prefix . '{a}') === $a->getOwner(), true), "\n";
    lock_net_expect('another lock', $T, fn () => $b->acquire());
    lock_net_expect('isLocked', $T, fn () => $store->isLocked('a'));
    lock_net_expect('isAcquired', $T, fn () => $a->isAcquired());
    $first = $a->getFencingToken();
    echo '  fencing token: ', var_export(is_int($first), true), "\n";
    lock_net_expect('refresh(5.0)', $T, fn () => $a->refresh(5.0));
    $pttl = $direct->cmd('PTTL', $prefix . '{a}');
    echo '  PTTL on the server in (4 s, 5 s]: ', var_export($pttl > 4000 && $pttl <= 5000, true), "\n";
    echo '  remaining lifetime below 5 s: ', var_export($a->getRemainingLifetime() <= 5.0, true), "\n";
    lock_net_expect('acquire again (refreshes)', $T, fn () => $a->acquire());
    lock_net_expect('release', $T, fn () => $a->release());
    echo '  the server has: ', lock_net_describe_keys($direct, $prefix), "\n";
    lock_net_expect('isLocked', $T, fn () => $store->isLocked('a'));
    lock_net_expect('acquire again', $T, fn () => $a->acquire());
    echo '  the token grew: ', var_export($a->getFencingToken() > $first, true), "\n";
    lock_net_expect('release', $T, fn () => $a->release());

    // Readers share, a writer is kept out, the last reader to leave frees it.
    lock_net_expect('acquireRead', $T, fn () => $a->acquireRead());
    lock_net_expect('acquireRead by another', $T, fn () => $b->acquireRead());
    $c = new Lock\Lock('a', $store, 10.0);
    lock_net_expect('acquire by a third', $T, fn () => $c->acquire());
    lock_net_expect('release a reader', $T, fn () => $a->release());
    lock_net_expect('release the other', $T, fn () => $b->release());
    lock_net_expect('acquire by the third', $T, fn () => $c->acquire());

    // A hold adopted by its owner token, refreshed and released over the slow link.
    $factory = new Lock\Factory($store);
    $adopted = $factory->restoreLock('a', $c->getOwner(), 10.0);
    lock_net_expect('restored: refresh', $T, fn () => $adopted->refresh());
    lock_net_expect('restored: release', $T, fn () => $adopted->release());
    lock_net_expect('the original: isAcquired', $T, fn () => $c->isAcquired());
    lock_net_expect('the original: release', $T, fn () => $c->release());

    // A wait: a holder on a direct connection lets go, the waiter on the slow link gets it handed over.
    $holder = lock_test_holder('new Lock\Store\RedisStore(' . var_export(lock_test_redis_dsn(), true)
        . ', ["prefix" => ' . var_export($prefix, true) . '])', 'a', 10.0);
    $holder->send('sleep-release 0.5');
    lock_net_expect('acquire(true, 5.0)', 5.0 + $T, fn () => $a->acquire(true, 5.0));
    $holder->waitFor('released');
    echo '  held by the waiter on the server: ', var_export($direct->cmd('GET', $prefix . '{a}') === $a->getOwner(), true), "\n";
    lock_net_expect('release', $T, fn () => $a->release());
    $holder->send('exit');
    $holder->wait();
    // A wait that runs out: the holder stays, the waiter leaves the queue.
    $blocker = new Lock\Lock('a', $directStore, 10.0);
    $blocker->acquire();
    lock_net_expect('acquire(true, 0.5) while held', 0.5 + $T, fn () => $a->acquire(true, 0.5));
    $blocker->release();
    lock_net_expect('forceRelease', $T, fn () => $store->forceRelease('a'));
    echo '  the server has: ', lock_net_describe_keys($direct, $prefix), "\n";
    $proxy->pass();
}
?>
--EXPECT--
-- delay 150 ms to the server, 0 ms back
isLocked: returned false, slowed by the delay: true
acquire: returned true, in time
  held by a on the server: true
another lock: returned false, in time
isLocked: returned true, in time
isAcquired: returned true, in time
  fencing token: true
refresh(5.0): returned NULL, in time
  PTTL on the server in (4 s, 5 s]: true
  remaining lifetime below 5 s: true
acquire again (refreshes): returned true, in time
release: returned NULL, in time
  the server has: none
isLocked: returned false, in time
acquire again: returned true, in time
  the token grew: true
release: returned NULL, in time
acquireRead: returned true, in time
acquireRead by another: returned true, in time
acquire by a third: returned false, in time
release a reader: returned NULL, in time
release the other: returned NULL, in time
acquire by the third: returned true, in time
restored: refresh: returned NULL, in time
restored: release: returned NULL, in time
the original: isAcquired: returned false, in time
the original: release: Lock\ExpiredException, in time
acquire(true, 5.0): returned true, in time
  held by the waiter on the server: true
release: returned NULL, in time
acquire(true, 0.5) while held: returned false, in time
forceRelease: returned NULL, in time
  the server has: none
-- delay 0 ms to the server, 150 ms back
isLocked: returned false, slowed by the delay: true
acquire: returned true, in time
  held by a on the server: true
another lock: returned false, in time
isLocked: returned true, in time
isAcquired: returned true, in time
  fencing token: true
refresh(5.0): returned NULL, in time
  PTTL on the server in (4 s, 5 s]: true
  remaining lifetime below 5 s: true
acquire again (refreshes): returned true, in time
release: returned NULL, in time
  the server has: none
isLocked: returned false, in time
acquire again: returned true, in time
  the token grew: true
release: returned NULL, in time
acquireRead: returned true, in time
acquireRead by another: returned true, in time
acquire by a third: returned false, in time
release a reader: returned NULL, in time
release the other: returned NULL, in time
acquire by the third: returned true, in time
restored: refresh: returned NULL, in time
restored: release: returned NULL, in time
the original: isAcquired: returned false, in time
the original: release: Lock\ExpiredException, in time
acquire(true, 5.0): returned true, in time
  held by the waiter on the server: true
release: returned NULL, in time
acquire(true, 0.5) while held: returned false, in time
forceRelease: returned NULL, in time
  the server has: none
-- delay 120 ms to the server, 120 ms back
isLocked: returned false, slowed by the delay: true
acquire: returned true, in time
  held by a on the server: true
another lock: returned false, in time
isLocked: returned true, in time
isAcquired: returned true, in time
  fencing token: true
refresh(5.0): returned NULL, in time
  PTTL on the server in (4 s, 5 s]: true
  remaining lifetime below 5 s: true
acquire again (refreshes): returned true, in time
release: returned NULL, in time
  the server has: none
isLocked: returned false, in time
acquire again: returned true, in time
  the token grew: true
release: returned NULL, in time
acquireRead: returned true, in time
acquireRead by another: returned true, in time
acquire by a third: returned false, in time
release a reader: returned NULL, in time
release the other: returned NULL, in time
acquire by the third: returned true, in time
restored: refresh: returned NULL, in time
restored: release: returned NULL, in time
the original: isAcquired: returned false, in time
the original: release: Lock\ExpiredException, in time
acquire(true, 5.0): returned true, in time
  held by the waiter on the server: true
release: returned NULL, in time
acquire(true, 0.5) while held: returned false, in time
forceRelease: returned NULL, in time
  the server has: none
