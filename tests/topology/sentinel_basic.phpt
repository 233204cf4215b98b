--TEST--
topology: the Sentinel group of the test command: three sentinels name one master with two replicas in sync; the password group keeps sentinel and master credentials apart
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_SENTINEL_AUTH_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$master = lock_test_topology_port('LOCK_TEST_SENTINEL_MASTER_PORT');
$replicas = lock_test_topology_ports('LOCK_TEST_SENTINEL_REPLICA_PORTS');
$sentinels = lock_test_topology_ports('LOCK_TEST_SENTINEL_PORTS');
echo count($sentinels), " sentinels, ", count($replicas), " replicas, master name $name\n";

/** A flat [key, value, ...] reply as an array. */
function pairs(array $flat): array
{
    $out = [];
    for ($i = 0; $i + 1 < count($flat); $i += 2) {
        $out[$flat[$i]] = $flat[$i + 1];
    }
    return $out;
}

foreach ($sentinels as $i => $port) {
    $c = lock_test_topology_client($port);
    $info = pairs($c->ok('SENTINEL', 'MASTER', $name));
    $known = array_map(static fn (array $r): int => (int) pairs($r)['port'], $c->ok('SENTINEL', 'REPLICAS', $name));
    sort($known);
    $expected = $replicas;
    sort($expected);
    echo "sentinel $i: names the master ", var_export(lock_test_sentinel_master($port) === $master, true),
        ", flags {$info['flags']}, quorum {$info['quorum']}, other sentinels {$info['num-other-sentinels']}",
        ', knows the replicas ', var_export($known === $expected, true), "\n";
}

$role = lock_test_topology_client($master)->ok('ROLE');
$attached = array_map(static fn (array $r): int => (int) $r[1], $role[2]);
sort($attached);
sort($replicas);
echo "master: {$role[0]}, replicas attached ", var_export($attached === $replicas, true), "\n";
foreach ($replicas as $i => $port) {
    $role = lock_test_topology_client($port)->ok('ROLE');
    echo "replica $i: {$role[0]} of the master ", var_export($role[2] === $master, true), ", link {$role[3]}\n";
    $reply = lock_test_topology_client($port)->cmd('SET', lock_test_prefix() . 'k', 'v');
    echo "replica $i refuses writes: ", $reply instanceof LockTestRespError ? strtok($reply->message, ' ') : 'no', "\n";
}

// The password group: one sentinel with a password of its own, a master and a replica with another.
$sentinel = lock_test_topology_port('LOCK_TEST_SENTINEL_AUTH_PORTS');
$spass = lock_test_env('LOCK_TEST_SENTINEL_AUTH_PASSWORD');
$mpass = lock_test_env('LOCK_TEST_SENTINEL_AUTH_MASTER_PASSWORD');
$amaster = lock_test_topology_port('LOCK_TEST_SENTINEL_AUTH_MASTER_PORT');
$reply = lock_test_topology_client($sentinel)->cmd('SENTINEL', 'get-master-addr-by-name', $name);
echo 'password sentinel without a password: ', $reply instanceof LockTestRespError ? strtok($reply->message, ' ') : 'served', "\n";
echo 'password sentinel with the master\'s password: ', lock_test_topology_client($sentinel)->cmd('AUTH', $mpass) instanceof LockTestRespError ? 'refused' : 'served', "\n";
echo 'password sentinel names its master: ', var_export(lock_test_sentinel_master($sentinel, $spass) === $amaster, true), "\n";
echo 'password master with the sentinel\'s password: ', lock_test_topology_client($amaster)->cmd('AUTH', $spass) instanceof LockTestRespError ? 'refused' : 'served', "\n";
$role = lock_test_topology_client($amaster, $mpass)->ok('ROLE');
echo "password master with its own password: {$role[0]}, replicas attached ", count($role[2]), "\n";
?>
--EXPECT--
3 sentinels, 2 replicas, master name mymaster
sentinel 0: names the master true, flags master, quorum 2, other sentinels 2, knows the replicas true
sentinel 1: names the master true, flags master, quorum 2, other sentinels 2, knows the replicas true
sentinel 2: names the master true, flags master, quorum 2, other sentinels 2, knows the replicas true
master: master, replicas attached true
replica 0: slave of the master true, link connected
replica 0 refuses writes: READONLY
replica 1: slave of the master true, link connected
replica 1 refuses writes: READONLY
password sentinel without a password: NOAUTH
password sentinel with the master's password: refused
password sentinel names its master: true
password master with the sentinel's password: refused
password master with its own password: master, replicas attached 1
