--TEST--
topology: the Sentinel group and the Cluster over TLS of the test command: a sentinel, its master and replica, and three cluster nodes that speak only TLS and name TLS ports
--EXTENSIONS--
openssl
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_TLS_PORTS', 'LOCK_TEST_CLUSTER_TLS_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$sentinel = lock_test_topology_port('LOCK_TEST_SENTINEL_TLS_PORTS');
$master = lock_test_topology_port('LOCK_TEST_SENTINEL_TLS_MASTER_PORT');
$replica = lock_test_topology_port('LOCK_TEST_SENTINEL_TLS_REPLICA_PORTS');
$cluster = lock_test_topology_ports('LOCK_TEST_CLUSTER_TLS_PORTS');

$reply = lock_test_topology_tls_client($sentinel)->ok('SENTINEL', 'get-master-addr-by-name', $name);
echo 'the TLS sentinel names the TLS master: ', var_export($reply === ['127.0.0.1', (string) $master], true), "\n";
$role = lock_test_topology_tls_client($master)->ok('ROLE');
echo "master over TLS: {$role[0]}, its replica is the TLS replica: ", var_export((int) $role[2][0][1] === $replica, true), "\n";
$role = lock_test_topology_tls_client($replica)->ok('ROLE');
echo "replica over TLS: {$role[0]}, link {$role[3]}\n";

foreach ($cluster as $i => $port) {
    $info = lock_test_topology_tls_client($port)->ok('CLUSTER', 'INFO');
    echo "cluster node $i over TLS: ", str_contains($info, "cluster_state:ok\r\n") ? 'ok' : 'not ok', "\n";
}
$named = [];
foreach (lock_test_topology_tls_client($cluster[0])->ok('CLUSTER', 'SLOTS') as $range) {
    $named[] = (int) $range[2][1];
}
sort($named);
$sorted = $cluster;
sort($sorted);
echo 'CLUSTER SLOTS names the TLS ports: ', var_export($named === $sorted, true), "\n";

// A plain client gets no answer from a TLS-only port.
foreach (['sentinel' => $sentinel, 'master' => $master, 'cluster node' => $cluster[0]] as $what => $port) {
    try {
        $reply = (new LockTestResp($port, 1.0))->cmd('PING');
        echo "plain $what: answered ", var_export($reply, true), "\n";
    } catch (RuntimeException) {
        echo "plain $what: no answer\n";
    }
}
?>
--EXPECT--
the TLS sentinel names the TLS master: true
master over TLS: master, its replica is the TLS replica: true
replica over TLS: slave, link connected
cluster node 0 over TLS: ok
cluster node 1 over TLS: ok
cluster node 2 over TLS: ok
CLUSTER SLOTS names the TLS ports: true
plain sentinel: no answer
plain master: no answer
plain cluster node: no answer
