--TEST--
redis+cluster: CLUSTER FAILOVER on the replica of a held resource's master: the hold is found on the promoted replica, a wait under way ends in the hold when it is released there, with a greater fencing token
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_CLUSTER_PORTS', 'LOCK_TEST_TOPOLOGY_SCRIPT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$dsn = 'redis+cluster://' . lock_test_topology_hosts('LOCK_TEST_CLUSTER_PORTS') . '?timeout=3';
$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('cluster-fo');
$key = $prefix . '{job}';
$old = lock_test_cluster_master_of($key);

$store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
$holder = new Lock\Lock('job', $store, 60.0);
var_dump($holder->acquire());
$first = $holder->getFencingToken();

// The replica of the slot's master.
$id = trim((string) lock_test_topology_client($old)->ok('CLUSTER', 'MYID'));
$lines = lock_test_topology_client($old)->ok('CLUSTER', 'REPLICAS', $id);
$addr = explode(' ', $lines[0])[1];
$replica = (int) substr($addr, strrpos($addr, ':') + 1, strpos($addr, '@') - strrpos($addr, ':') - 1);

$pid = lock_test_fork(static function () use ($dsn, $prefix, $dir): int {
    $lock = new Lock\Lock('job', new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]), 60.0);
    file_put_contents("$dir/waiting", '1');
    $t0 = microtime(true);
    try {
        $what = $lock->acquire(true, 30.0) ? 'acquired ' . $lock->getFencingToken() : 'timed out';
    } catch (Lock\StorageException $e) {
        $what = 'StorageException';
    }
    file_put_contents("$dir/result", sprintf('%s %.1f', $what, microtime(true) - $t0));
    if ($lock->isAcquired()) {
        $lock->release();
    }
    return 0;
});
lock_test_wait_until(static fn (): bool => is_file("$dir/waiting"), 30.0, 'the waiter to start');
usleep(300000);

lock_test_topology_client($replica)->ok('CLUSTER', 'FAILOVER');
lock_test_wait_until(static fn (): bool => lock_test_cluster_master_of($key) === $replica, 60.0, 'the replica to serve the slot');
echo 'the hold is on the promoted replica: ',
    var_export(lock_test_topology_client($replica)->ok('GET', $key) === $holder->getOwner(), true), "\n";
var_dump($holder->isAcquired());
$holder->release();
echo 'exit: ', lock_test_wait_pid($pid, 90.0), "\n";
[$what, $token, $seconds] = array_pad(explode(' ', (string) file_get_contents("$dir/result")), 3, '');
echo "waiter: $what, a greater token: ", var_export((int) $token > $first, true), ', within its wait: ', var_export((float) $seconds <= 33.0, true), "\n";

lock_test_topology_restore();
?>
--EXPECT--
bool(true)
the hold is on the promoted replica: true
bool(true)
exit: 0
waiter: acquired, a greater token: true, within its wait: true
