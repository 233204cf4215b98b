--TEST--
redis+cluster: 8 processes on 24 resources spread over the slots of three masters hold each resource alone (no update lost); every resource's keys are on its slot's master
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_CLUSTER_PORTS');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$dsn = 'redis+cluster://' . lock_test_topology_hosts('LOCK_TEST_CLUSTER_PORTS') . '?timeout=5';
$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('cluster');
$rounds = lock_test_scale(40, 8);

// Which masters the resources land on.
$masters = [];
for ($r = 0; $r < 24; $r++) {
    $masters[lock_test_cluster_master_of($prefix . "{res-$r}")] = true;
}
echo 'masters used: ', count($masters), "\n";

$pids = [];
for ($w = 0; $w < 8; $w++) {
    $pids[] = lock_test_fork(static function () use ($dsn, $prefix, $dir, $rounds, $w): int {
        $store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
        mt_srand(1000 + $w);
        $taken = 0;
        for ($i = 0; $i < $rounds; $i++) {
            $r = mt_rand(0, 23);
            $lock = new Lock\Lock("res-$r", $store, 30.0);
            if (!$lock->acquire(true, 20.0)) {
                return 2;
            }
            // A read, a pause and a write: two holders at once would lose an update.
            $file = "$dir/$r";
            $n = (int) @file_get_contents($file);
            usleep(500);
            file_put_contents($file, (string) ($n + 1));
            $lock->release();
            $taken++;
        }
        file_put_contents("$dir/taken-$w", (string) $taken);
        return 0;
    });
}
$codes = array_map(static fn (int $pid): int => lock_test_wait_pid($pid, 300.0), $pids);
echo 'workers: ', implode(' ', $codes), "\n";
$sum = 0;
for ($r = 0; $r < 24; $r++) {
    $sum += (int) @file_get_contents("$dir/$r");
}
$taken = 0;
for ($w = 0; $w < 8; $w++) {
    $taken += (int) @file_get_contents("$dir/taken-$w");
}
echo 'acquisitions counted by the workers match the counters: ', var_export($sum === $taken && $taken === 8 * $rounds, true), "\n";

// A hold lives on its slot's master, and is found by a store that knows only one seed.
$one = lock_test_topology_ports('LOCK_TEST_CLUSTER_PORTS')[2];
$store = new Lock\Store\RedisStore("redis+cluster://127.0.0.1:$one", ['prefix' => $prefix]);
$lock = new Lock\Lock('res-7', $store, 30.0);
var_dump($lock->acquire());
$master = lock_test_cluster_master_of($prefix . '{res-7}');
var_dump(lock_test_topology_client($master)->ok('GET', $prefix . '{res-7}') === $lock->getOwner());
$other = new Lock\Lock('res-7', new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]), 30.0);
var_dump($other->acquire(), $store->isLocked('res-7'));
$lock->release();
var_dump($other->acquire(), $other->getFencingToken() > 0);
$other->release();
?>
--EXPECT--
masters used: 3
workers: 0 0 0 0 0 0 0 0
acquisitions counted by the workers match the counters: true
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
