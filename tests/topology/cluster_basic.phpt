--TEST--
topology: the Cluster of the test command: six nodes, three masters with a replica each, every slot served; a key is served by its slot's master and redirected elsewhere
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_CLUSTER_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$ports = lock_test_topology_ports('LOCK_TEST_CLUSTER_PORTS');
echo count($ports), " nodes\n";
foreach ($ports as $i => $port) {
    $info = [];
    foreach (explode("\n", lock_test_topology_client($port)->ok('CLUSTER', 'INFO')) as $line) {
        [$k, $v] = array_pad(explode(':', trim($line), 2), 2, '');
        $info[$k] = $v;
    }
    echo "node $i: {$info['cluster_state']}, {$info['cluster_slots_assigned']} slots, ",
        "{$info['cluster_known_nodes']} nodes, {$info['cluster_size']} masters\n";
}

$slots = lock_test_topology_client($ports[0])->ok('CLUSTER', 'SLOTS');
usort($slots, static fn (array $a, array $b): int => $a[0] <=> $b[0]);
$next = 0;
foreach ($slots as $range) {
    // A range: first slot, last slot, its master, its replicas.
    echo "slots {$range[0]}-{$range[1]}: ", count($range) - 3, " replica, contiguous ", var_export($range[0] === $next, true), "\n";
    $next = $range[1] + 1;
}

$prefix = lock_test_prefix();
foreach (['{a}', '{b}', '{c}'] as $tag) {
    $key = $prefix . $tag . 'k';
    $owner = lock_test_cluster_master_of($key);
    echo "$tag: its master stores it: ", lock_test_topology_client($owner)->ok('SET', $key, 'v', 'PX', 60000);
    $moved = 0;
    foreach ($ports as $port) {
        if ($port === $owner) {
            continue;
        }
        $reply = lock_test_topology_client($port)->cmd('GET', $key);
        $moved += $reply instanceof LockTestRespError && str_ends_with($reply->message, "127.0.0.1:$owner") ? 1 : 0;
    }
    echo ", the other nodes answer MOVED to it: $moved of 5\n";
}
?>
--EXPECT--
6 nodes
node 0: ok, 16384 slots, 6 nodes, 3 masters
node 1: ok, 16384 slots, 6 nodes, 3 masters
node 2: ok, 16384 slots, 6 nodes, 3 masters
node 3: ok, 16384 slots, 6 nodes, 3 masters
node 4: ok, 16384 slots, 6 nodes, 3 masters
node 5: ok, 16384 slots, 6 nodes, 3 masters
slots 0-5460: 1 replica, contiguous true
slots 5461-10922: 1 replica, contiguous true
slots 10923-16383: 1 replica, contiguous true
{a}: its master stores it: OK, the other nodes answer MOVED to it: 5 of 5
{b}: its master stores it: OK, the other nodes answer MOVED to it: 5 of 5
{c}: its master stores it: OK, the other nodes answer MOVED to it: 5 of 5
