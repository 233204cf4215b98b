--TEST--
redis+cluster: a held resource's slot migrates to another master (MIGRATE, SETSLOT NODE) while a waiter sleeps on it: the holder's release and the waiter follow MOVED, and the waiter gets the hold with a greater fencing token
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

$ports = lock_test_topology_ports('LOCK_TEST_CLUSTER_PORTS');
$dsn = 'redis+cluster://' . lock_test_topology_hosts('LOCK_TEST_CLUSTER_PORTS') . '?timeout=3';
$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('cluster-mig');
$key = $prefix . '{job}';
$src = lock_test_cluster_master_of($key);
$slot = lock_test_topology_client($src)->ok('CLUSTER', 'KEYSLOT', $key);
// Another master.
$dst = null;
foreach (lock_test_topology_client($src)->ok('CLUSTER', 'SLOTS') as $range) {
    if ((int) $range[2][1] !== $src) {
        $dst = (int) $range[2][1];
    }
}

$store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
$holder = new Lock\Lock('job', $store, 60.0);
var_dump($holder->acquire());
$first = $holder->getFencingToken();

$pid = lock_test_fork(static function () use ($dsn, $prefix, $dir): int {
    $lock = new Lock\Lock('job', new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]), 60.0);
    file_put_contents("$dir/waiting", '1');
    try {
        $what = $lock->acquire(true, 30.0) ? 'acquired ' . $lock->getFencingToken() : 'timed out';
    } catch (Lock\StorageException $e) {
        $what = 'StorageException ' . $e->getMessage();
    }
    file_put_contents("$dir/result", $what);
    if ($lock->isAcquired()) {
        $lock->release();
    }
    return 0;
});
lock_test_wait_until(static fn (): bool => is_file("$dir/waiting"), 30.0, 'the waiter to start');
usleep(300000);

/** Moves $slot from the master on $from to the one on $to, keys and all, as redis-cli --cluster reshard does. */
function move_slot(int $slot, int $from, int $to, array $ports): void
{
    $s = lock_test_topology_client($from);
    $d = lock_test_topology_client($to);
    $fromId = trim((string) $s->ok('CLUSTER', 'MYID'));
    $toId = trim((string) $d->ok('CLUSTER', 'MYID'));
    $d->ok('CLUSTER', 'SETSLOT', $slot, 'IMPORTING', $fromId);
    $s->ok('CLUSTER', 'SETSLOT', $slot, 'MIGRATING', $toId);
    while ($keys = $s->ok('CLUSTER', 'GETKEYSINSLOT', $slot, 100)) {
        $s->ok('MIGRATE', '127.0.0.1', $to, '', 0, 5000, 'KEYS', ...$keys);
    }
    $d->ok('CLUSTER', 'SETSLOT', $slot, 'NODE', $toId);
    $s->ok('CLUSTER', 'SETSLOT', $slot, 'NODE', $toId);
    foreach ($ports as $p) {
        if ($p !== $from && $p !== $to) {
            lock_test_topology_client($p)->cmd('CLUSTER', 'SETSLOT', $slot, 'NODE', $toId);
        }
    }
}
move_slot($slot, $src, $dst, $ports);
$d = lock_test_topology_client($dst);
echo 'the hold moved with the slot: ', var_export($d->ok('GET', $key) === $holder->getOwner(), true), "\n";
var_dump($holder->isAcquired());
$holder->release();
echo 'exit: ', lock_test_wait_pid($pid, 60.0), "\n";
[$what, $token] = array_pad(explode(' ', (string) file_get_contents("$dir/result"), 2), 2, '');
echo "waiter: $what", $what === 'acquired' ? ', a greater token: ' . var_export((int) $token > $first, true) : " $token", "\n";

// The slot goes back where the other tests expect it.
move_slot($slot, $dst, $src, $ports);
lock_test_wait_until(static fn (): bool => lock_test_cluster_master_of($key) === $src, 30.0, 'the slot to be back');
lock_test_topology_restore();
?>
--EXPECT--
bool(true)
the hold moved with the slot: true
bool(true)
exit: 0
waiter: acquired, a greater token: true
