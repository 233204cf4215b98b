--TEST--
redis+cluster: a forked child uses its parent's cluster store on every master (connections of its own), and the parent's connections to those masters stay intact; persistent connections are pooled per node
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

foreach ([false, true] as $persistent) {
    $store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix, 'persistent' => $persistent]);
    // The parent talks to every master: the store keeps a connection to each.
    $masters = [];
    for ($r = 0; $r < 24; $r++) {
        $lock = new Lock\Lock("f-$r", $store, 30.0);
        $lock->acquire() || print("f-$r not acquired\n");
        $lock->release();
        $masters[lock_test_cluster_master_of($prefix . "{f-$r}")] = true;
    }
    $pid = lock_test_fork(static function () use ($store): int {
        for ($r = 0; $r < 24; $r++) {
            $lock = new Lock\Lock("f-$r", $store, 30.0);
            if (!$lock->acquire()) {
                return 2;
            }
            $lock->release();
        }
        return 0;
    });
    echo 'persistent ', var_export($persistent, true), ': ', count($masters), ' masters, child exit ', lock_test_wait_pid($pid), "\n";
    $ok = 0;
    for ($r = 0; $r < 24; $r++) {
        $lock = new Lock\Lock("f-$r", $store, 30.0);
        $ok += $lock->acquire() ? 1 : 0;
        $ok += $store->isLocked("f-$r") ? 1 : 0;
        $lock->release();
        $ok += $store->isLocked("f-$r") ? 0 : 1;
    }
    echo "  the parent's store afterwards: ", var_export($ok === 72, true), "\n";
}
?>
--EXPECT--
persistent false: 3 masters, child exit 0
  the parent's store afterwards: true
persistent true: 3 masters, child exit 0
  the parent's store afterwards: true
