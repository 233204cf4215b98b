--TEST--
redis: replicas => N makes acquire and refresh wait for WAIT N; an acquire the replicas do not acknowledge in time is given back (never half-held) and a refresh reported, each a StorageException within the timeouts
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$master = new LockTestRedisServer();
$replica = new LockTestRedisServer(['--replicaof', '127.0.0.1', (string) $master->port]);
$admin = $master->client();
lock_test_wait_until(fn () => (int) $admin->cmd('WAIT', '1', '100') === 1, 30, 'the replica to catch up');
$prefix = lock_test_prefix();
$one = new Lock\Store\RedisStore($master->dsn(), ['prefix' => $prefix, 'replicas' => 1, 'replicas_timeout' => 2.0]);
$two = new Lock\Store\RedisStore($master->dsn(), ['prefix' => $prefix, 'replicas' => 2, 'replicas_timeout' => 0.2]);

/** Runs $fn and names its outcome; a StorageException's message without the port. */
function outcome(callable $fn): string
{
    global $master;
    try {
        return 'ok: ' . var_export($fn(), true);
    } catch (Lock\LockException $e) {
        return get_class($e) . ': ' . str_replace($master->endpoint(), 'SERVER', $e->getMessage());
    }
}

$a = new Lock\Lock('r', $one, 30.0);
echo 'acquire with 1 replica: ', outcome(fn () => $a->acquire()), "\n";
echo 'the replica has the hold: ', var_export($replica->client()->cmd('EXISTS', $prefix . '{r}') === 1, true), "\n";
echo 'refresh with 1: ', outcome(fn () => $a->refresh()), "\n";
echo 'refresh asking for 2: ', outcome(fn () => (new Lock\Factory($two))->restoreLock('r', $a->getOwner())->refresh()), "\n";
echo 'still held: ', var_export($one->isLocked('r'), true), "\n";
$a->release();

$c = new Lock\Lock('c', $two, 30.0);
echo 'acquire asking for 2: ', outcome(fn () => $c->acquire()), "\n";
echo 'given back: ', var_export(!$one->isLocked('c') && !$c->isAcquired(), true), "\n";
echo 'acquireRead asking for 2: ', outcome(fn () => $c->acquireRead()), "\n";
echo 'given back: ', var_export(!$one->isLocked('c'), true), "\n";

// A replica that stops answering: the acquire ends within replicas_timeout + timeout, given back.
$replica->pause();
$d = new Lock\Lock('d', $one, 30.0);
$start = hrtime(true);
echo 'acquire, replica stopped: ', outcome(fn () => $d->acquire()), "\n";
echo 'within the bound: ', var_export((hrtime(true) - $start) / 1e9 < 2.0 + 1.0 + 0.5, true), "\n";
echo 'given back: ', var_export(!$one->isLocked('d'), true), "\n";
$replica->resume();
?>
--EXPECT--
acquire with 1 replica: ok: true
the replica has the hold: true
refresh with 1: ok: NULL
refresh asking for 2: Lock\StorageException: Lock "r": Redis at SERVER: the refresh was made but not acknowledged by 2 replicas within 200 ms (1 did)
still held: true
acquire asking for 2: Lock\StorageException: Lock "c": Redis at SERVER: the hold was taken but not acknowledged by 2 replicas within 200 ms (1 did), so it was given back
given back: true
acquireRead asking for 2: Lock\StorageException: Lock "c": Redis at SERVER: the hold was taken but not acknowledged by 2 replicas within 200 ms (1 did), so it was given back
given back: true
acquire, replica stopped: Lock\StorageException: Lock "d": Redis at SERVER: the hold was taken but not acknowledged by 1 replica within 2000 ms (0 did), so it was given back
within the bound: true
given back: true
