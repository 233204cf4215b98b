--TEST--
redis+cluster: inspect() answers from the master of the resource's slot, for names in many slots: the holder, its token, a waiter in the queue
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
$store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
$right = 0;
for ($i = 0; $i < 20; $i++) {
    $lock = new Lock\Lock("job-$i", $store, 30.0, owner: "owner-$i");
    $lock->acquire();
    // The first token of a store is made when asked for: the last one handed out after that.
    $token = $lock->getFencingToken();
    $a = $store->inspect("job-$i");
    $right += (int) ($a['mode'] === 'write' && $a['owners'] === ["owner-$i"] && $a['fencing'] === $token);
    $lock->release();
    $right += (int) ($store->inspect("job-$i")['held'] === false);
}
echo "$right of 40 answers right\n";

$holder = new Lock\Lock('queued', $store, 30.0);
$holder->acquire();
$child = lock_test_fork(function () use ($dsn, $prefix): void {
    $lock = new Lock\Lock('queued', new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]), 30.0, owner: 'waiter');
    exit($lock->acquire(true, 30.0) ? 0 : 1);
});
lock_test_wait_until(fn () => $store->inspect('queued')['queue'] === ['waiter'], 20, 'the waiter to show in the queue');
echo "the waiter is in the queue\n";
$holder->release();
echo 'the waiter got it: ', var_export(lock_test_wait_pid($child) === 0, true), "\n";
?>
--EXPECT--
40 of 40 answers right
the waiter is in the queue
the waiter got it: true
