--TEST--
topology: redis-topology.sh restore puts Sentinel and Cluster back after a failover, a frozen sentinel and a killed node
--EXTENSIONS--
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_CLUSTER_PORTS', 'LOCK_TEST_TOPOLOGY_SCRIPT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$master = lock_test_topology_port('LOCK_TEST_SENTINEL_MASTER_PORT');
$sentinels = lock_test_topology_ports('LOCK_TEST_SENTINEL_PORTS');
$cluster = lock_test_topology_ports('LOCK_TEST_CLUSTER_PORTS');

/** The cluster's nodes as port => [role, master id, own id], as $port sees them. */
function cluster_nodes(int $port): array
{
    $nodes = [];
    foreach (explode("\n", trim(lock_test_topology_client($port)->ok('CLUSTER', 'NODES'))) as $line) {
        $f = explode(' ', $line);
        $p = (int) substr($f[1], strrpos($f[1], ':') + 1);
        $nodes[$p] = [str_contains($f[2], 'master') ? 'master' : 'replica', $f[3], $f[0]];
    }
    return $nodes;
}

// Sentinel: a failover to a replica, then one sentinel frozen.
lock_test_topology_client($sentinels[0])->ok('SENTINEL', 'FAILOVER', $name);
lock_test_wait_until(static fn (): bool => lock_test_sentinel_master($sentinels[0]) !== $master,
    lock_test_patience(30), 'the failover');
echo 'after SENTINEL FAILOVER the first master is master: ', var_export(lock_test_sentinel_master($sentinels[0]) === $master, true), "\n";
posix_kill(lock_test_topology_pid($sentinels[2]), SIGSTOP);

// Cluster: a replica takes over its master, and another replica is killed.
$nodes = cluster_nodes($cluster[0]);
$replicas = array_keys(array_filter($nodes, static fn (array $n): bool => $n[0] === 'replica'));
lock_test_topology_client($replicas[0])->ok('CLUSTER', 'FAILOVER');
lock_test_wait_until(static fn (): bool => cluster_nodes($replicas[0])[$replicas[0]][0] === 'master',
    lock_test_patience(30), 'the cluster failover');
echo "after CLUSTER FAILOVER the replica is master: true\n";
$killed = $replicas[1];
$pid = lock_test_topology_pid($killed);
posix_kill($pid, SIGKILL);
lock_test_wait_until(static fn (): bool => !posix_kill($pid, 0), lock_test_patience(10), 'the killed node to go');

lock_test_topology_restore();

foreach ($sentinels as $i => $port) {
    echo "sentinel $i names the first master again: ", var_export(lock_test_sentinel_master($port) === $master, true), "\n";
}
$role = lock_test_topology_client($master)->ok('ROLE');
echo "first master: {$role[0]} with ", count($role[2]), " replicas\n";
echo 'killed node runs again: ', var_export(lock_test_topology_pid($killed) !== $pid && posix_kill(lock_test_topology_pid($killed), 0), true), "\n";
foreach ($cluster as $port) {
    $nodes = cluster_nodes($port);
    $masters = array_filter($nodes, static fn (array $n): bool => $n[0] === 'master');
    $ok = str_contains(lock_test_topology_client($port)->ok('CLUSTER', 'INFO'), "cluster_state:ok\r\n");
    echo 'node: ', $ok ? 'ok' : 'not ok', ', ', count($nodes), ' nodes, ', count($masters), " masters\n";
}
?>
--EXPECT--
after SENTINEL FAILOVER the first master is master: false
after CLUSTER FAILOVER the replica is master: true
sentinel 0 names the first master again: true
sentinel 1 names the first master again: true
sentinel 2 names the first master again: true
first master: master with 2 replicas
killed node runs again: true
node: ok, 6 nodes, 3 masters
node: ok, 6 nodes, 3 masters
node: ok, 6 nodes, 3 masters
node: ok, 6 nodes, 3 masters
node: ok, 6 nodes, 3 masters
node: ok, 6 nodes, 3 masters
