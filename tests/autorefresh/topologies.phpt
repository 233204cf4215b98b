--TEST--
$autoRefresh on Redis over TLS, behind Sentinel and as a Cluster: the thread's own connection reaches the same server, and the hold outlives many TTLs
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_REDIS_TLS_PORT', 'LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_CLUSTER_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

// A TLS handshake and a topology lookup under valgrind take a while: the TTL makes room.
$ttl = lock_test_valgrind() ? 3.0 : 0.6;
$ttls = lock_test_valgrind() ? 2 : 4;
$dsns = [
    'tls' => lock_test_redis_tls_dsn(),
    'sentinel' => 'redis+sentinel://' . lock_test_topology_hosts('LOCK_TEST_SENTINEL_PORTS') . '/'
        . lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME') . '?timeout=2',
    'cluster' => 'redis+cluster://' . lock_test_topology_hosts('LOCK_TEST_CLUSTER_PORTS') . '?timeout=2',
];
foreach ($dsns as $name => $dsn) {
    $store = new Lock\Store\RedisStore($dsn, ['prefix' => lock_test_prefix()]);
    // Resources on several slots of the cluster (and so on several of its masters).
    $locks = [];
    for ($i = 0; $i < 4; $i++) {
        $locks[] = $lock = new Lock\Lock(lock_test_resource("topo$i"), $store, $ttl, true, null, true);
        $lock->acquire();
    }
    usleep((int) ($ttls * $ttl * 1e6));
    $held = 0;
    foreach ($locks as $lock) {
        $other = new Lock\Lock($lock->getResource(), $store, 10.0);
        $held += (!$other->acquire() && $lock->isAcquired()) ? 1 : 0;
        $lock->release();
    }
    echo "$name: held after several TTLs: $held of 4\n";
}
?>
--EXPECT--
tls: held after several TTLs: 4 of 4
sentinel: held after several TTLs: 4 of 4
cluster: held after several TTLs: 4 of 4
