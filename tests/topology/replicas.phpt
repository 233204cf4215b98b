--TEST--
topology: replicas => N through Sentinel (a master with two replicas) and on a Cluster (one replica per master): acquire, acquireRead and refresh wait for N acknowledgements on the master that took the write; more replicas than there are is a StorageException and the hold is given back
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_CLUSTER_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$setups = [
    // The Sentinel group's master has two replicas; each cluster master has one.
    'sentinel' => ['redis+sentinel://' . lock_test_topology_hosts('LOCK_TEST_SENTINEL_PORTS') . "/$name?timeout=5", 2],
    'cluster' => ['redis+cluster://' . lock_test_topology_hosts('LOCK_TEST_CLUSTER_PORTS') . '?timeout=5', 1],
];

/** Runs $fn and names its outcome. */
function outcome(callable $fn): string
{
    try {
        return 'ok: ' . var_export($fn(), true);
    } catch (Lock\LockException $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
}

foreach ($setups as $kind => [$dsn, $have]) {
    echo "-- $kind: $have replica(s) per master\n";
    $prefix = lock_test_prefix();
    $enough = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix, 'replicas' => $have, 'replicas_timeout' => 5.0]);
    $tooMany = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix, 'replicas' => $have + 1, 'replicas_timeout' => 0.2]);
    $plain = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);

    // Several resources, so that on the cluster they land on more than one master.
    foreach (['a', 'b', 'c', 'd'] as $r) {
        $lock = new Lock\Lock($r, $enough, 30.0);
        echo "$r: acquire ", outcome(fn () => $lock->acquire()), ', refresh ', outcome(fn () => $lock->refresh()),
            ', held ', var_export($plain->isLocked($r), true);
        $lock->release();
        echo ', released ', var_export(!$plain->isLocked($r), true), "\n";
    }
    $read = new Lock\Lock('r', $enough, 30.0);
    echo 'acquireRead: ', outcome(fn () => $read->acquireRead()), "\n";
    $read->release();

    $lock = new Lock\Lock('e', $tooMany, 30.0);
    echo 'acquire asking for one more: ', outcome(fn () => $lock->acquire()), "\n";
    echo 'given back: ', var_export(!$plain->isLocked('e') && !$lock->isAcquired(), true), "\n";
    $held = new Lock\Lock('f', $plain, 30.0);
    var_dump($held->acquire());
    echo 'refresh asking for one more: ',
        outcome(fn () => (new Lock\Factory($tooMany))->restoreLock('f', $held->getOwner())->refresh()), "\n";
    echo 'still held: ', var_export($plain->isLocked('f'), true), "\n";
    $held->release();
}
?>
--EXPECTF--
-- sentinel: 2 replica(s) per master
a: acquire ok: true, refresh ok: NULL, held true, released true
b: acquire ok: true, refresh ok: NULL, held true, released true
c: acquire ok: true, refresh ok: NULL, held true, released true
d: acquire ok: true, refresh ok: NULL, held true, released true
acquireRead: ok: true
acquire asking for one more: Lock\StorageException: Lock "e": Redis master "%s" via sentinels %s: master %s: the hold was taken but not acknowledged by 3 replicas within 200 ms (2 did), so it was given back
given back: true
bool(true)
refresh asking for one more: Lock\StorageException: Lock "f": Redis master "%s" via sentinels %s: master %s: the refresh was made but not acknowledged by 3 replicas within 200 ms (2 did)
still held: true
-- cluster: 1 replica(s) per master
a: acquire ok: true, refresh ok: NULL, held true, released true
b: acquire ok: true, refresh ok: NULL, held true, released true
c: acquire ok: true, refresh ok: NULL, held true, released true
d: acquire ok: true, refresh ok: NULL, held true, released true
acquireRead: ok: true
acquire asking for one more: Lock\StorageException: Lock "e": Redis Cluster at %s: node %s: the hold was taken but not acknowledged by 2 replicas within 200 ms (1 did), so it was given back
given back: true
bool(true)
refresh asking for one more: Lock\StorageException: Lock "f": Redis Cluster at %s: node %s: the refresh was made but not acknowledged by 2 replicas within 200 ms (1 did)
still held: true
