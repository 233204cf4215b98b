--TEST--
redis+sentinel: with the master killed, every call ends within its timeout (a StorageException while no master is known), and holds are taken on the replica the sentinels promote, with greater fencing tokens
--EXTENSIONS--
lock
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_TOPOLOGY_SCRIPT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$sentinels = lock_test_topology_ports('LOCK_TEST_SENTINEL_PORTS');
$dsn = 'redis+sentinel://' . lock_test_topology_hosts('LOCK_TEST_SENTINEL_PORTS') . "/$name?timeout=1";
$prefix = lock_test_prefix();
$old = lock_test_sentinel_master($sentinels[0]);

$store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
$lock = new Lock\Lock('job', $store, 30.0);
var_dump($lock->acquire());
$first = $lock->getFencingToken();
$lock->release();

posix_kill(lock_test_topology_pid($old), SIGKILL);
$slowest = 0.0;
$errors = 0;
$deadline = microtime(true) + lock_test_patience(60.0);
$got = false;
while (!$got && microtime(true) < $deadline) {
    $t0 = hrtime(true);
    try {
        $got = $lock->acquire();
    } catch (Lock\StorageException $e) {
        $errors++;
        usleep(100000);
    }
    $slowest = max($slowest, (hrtime(true) - $t0) / 1e9);
}
echo 'acquired on the promoted replica: ', var_export($got && lock_test_sentinel_master($sentinels[0]) !== $old, true), "\n";
echo 'storage errors meanwhile: ', var_export($errors > 0, true), ', each call within its timeout: ', var_export($slowest < 1.0 + 0.3, true), "\n";
echo 'a greater fencing token: ', var_export($lock->getFencingToken() > $first, true), "\n";
$lock->release();

lock_test_topology_restore();
?>
--EXPECT--
bool(true)
acquired on the promoted replica: true
storage errors meanwhile: true, each call within its timeout: true
a greater fencing token: true
