--TEST--
rediss+sentinel: and rediss+cluster: speak TLS to the sentinels, the master and every node (verified with the test CA); a wrong CA is a StorageException naming the sentinel
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_TLS_PORTS', 'LOCK_TEST_CLUSTER_TLS_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$ca = '?tls_ca_file=' . urlencode(lock_test_tls_file('ca.crt')) . (lock_test_valgrind() ? '&timeout=30' : '&timeout=5');
$prefix = lock_test_prefix();
$sentinels = lock_test_topology_hosts('LOCK_TEST_SENTINEL_TLS_PORTS');
$master = lock_test_topology_port('LOCK_TEST_SENTINEL_TLS_MASTER_PORT');

$store = new Lock\Store\RedisStore("rediss+sentinel://$sentinels/$name$ca", ['prefix' => $prefix]);
$lock = new Lock\Lock('tls', $store, 30.0);
var_dump($lock->acquire(), $lock->getFencingToken() > 0);
echo 'on the TLS master: ', var_export(lock_test_topology_tls_client($master)->ok('GET', $prefix . '{tls}') === $lock->getOwner(), true), "\n";
$lock->release();

$nodes = lock_test_topology_hosts('LOCK_TEST_CLUSTER_TLS_PORTS');
$store = new Lock\Store\RedisStore("rediss+cluster://$nodes$ca", ['prefix' => $prefix]);
$held = [];
for ($i = 0; $i < 12; $i++) {
    $held[$i] = new Lock\Lock("tls-$i", $store, 30.0);
    if (!$held[$i]->acquire()) {
        echo "tls-$i not acquired\n";
    }
}
$other = new Lock\Store\RedisStore("rediss+cluster://$nodes$ca", ['prefix' => $prefix]);
$busy = 0;
for ($i = 0; $i < 12; $i++) {
    $busy += (new Lock\Lock("tls-$i", $other, 30.0))->acquire() ? 0 : 1;
    $held[$i]->release();
}
echo "12 holds over the TLS cluster, each busy for another store: ", var_export($busy === 12, true), "\n";

// The sentinels are verified too: an unrelated CA fails, naming the sentinel.
$wrong = '?tls_ca_file=' . urlencode(lock_test_tls_file('other-ca.crt')) . '&timeout=2';
$e = lock_test_expect_throw(fn () => (new Lock\Lock('tls', new Lock\Store\RedisStore("rediss+sentinel://$sentinels/$name$wrong", ['prefix' => $prefix]), 30.0))->acquire());
?>
--EXPECTF--
bool(true)
bool(true)
on the TLS master: true
12 holds over the TLS cluster, each busy for another store: true
Lock\StorageException: Lock "tls": Redis master "%s" via sentinels %s: no sentinel named the master (sentinel 127.0.0.1:%d: %s)
