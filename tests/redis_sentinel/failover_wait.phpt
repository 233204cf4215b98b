--TEST--
redis+sentinel: holds go to the master the sentinels name; a wait under way across SENTINEL FAILOVER ends in the hold when its holder releases on the new master, with a greater fencing token; the sentinels' and the master's credentials are apart
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_SENTINEL_AUTH_PORTS', 'LOCK_TEST_TOPOLOGY_SCRIPT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$name = lock_test_env('LOCK_TEST_SENTINEL_MASTER_NAME');
$sentinels = lock_test_topology_ports('LOCK_TEST_SENTINEL_PORTS');
$dsn = 'redis+sentinel://' . lock_test_topology_hosts('LOCK_TEST_SENTINEL_PORTS') . "/$name?timeout=2";
$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('sentinel');
$old = lock_test_sentinel_master($sentinels[0]);

$store = new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]);
$holder = new Lock\Lock('job', $store, 60.0);
var_dump($holder->acquire());
$first = $holder->getFencingToken();
echo 'the key is on the master the sentinels name: ',
    var_export(lock_test_topology_client($old)->ok('GET', $prefix . '{job}') === $holder->getOwner(), true), "\n";
// The replicas have the hold before the switch: a failover loses what they have not.
lock_test_topology_client($old)->ok('WAIT', 2, 5000);

$pid = lock_test_fork(static function () use ($dsn, $prefix, $dir): int {
    $lock = new Lock\Lock('job', new Lock\Store\RedisStore($dsn, ['prefix' => $prefix]), 60.0);
    file_put_contents("$dir/waiting", '1');
    $t0 = microtime(true);
    try {
        $got = $lock->acquire(true, 30.0);
        $what = $got ? 'acquired ' . $lock->getFencingToken() : 'timed out';
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

lock_test_topology_client($sentinels[1])->ok('SENTINEL', 'FAILOVER', $name);
lock_test_wait_until(static fn (): bool => lock_test_sentinel_master($sentinels[0]) !== $old, 60.0, 'a new master');
// Until the sentinels demote it the old master still takes writes (docs/topologies.md): wait for that.
/** The role of the server on $port; "" when it closed the connection (a sentinel reconfiguring it kills its clients). */
function role(int $port): string
{
    try {
        return (string) lock_test_topology_client($port)->ok('ROLE')[0];
    } catch (RuntimeException $e) {
        return '';
    }
}
lock_test_wait_until(static fn (): bool => role($old) === 'slave', 60.0, 'the old master to be demoted');
$new = lock_test_sentinel_master($sentinels[0]);
echo 'the hold is on the new master: ',
    var_export(lock_test_topology_client($new)->ok('GET', $prefix . '{job}') === $holder->getOwner(), true), "\n";
$holder->release();
echo 'exit: ', lock_test_wait_pid($pid, 90.0), "\n";
[$what, $token, $seconds] = array_pad(explode(' ', (string) file_get_contents("$dir/result")), 3, '');
echo "waiter: $what, a greater token: ", var_export((int) $token > $first, true), ', within its wait: ', var_export((float) $seconds <= 32.0, true), "\n";

// The password group: the DSN's password is the master's, sentinel_password the sentinel's.
$auth = lock_test_topology_hosts('LOCK_TEST_SENTINEL_AUTH_PORTS');
$spass = lock_test_env('LOCK_TEST_SENTINEL_AUTH_PASSWORD');
$mpass = lock_test_env('LOCK_TEST_SENTINEL_AUTH_MASTER_PASSWORD');
$good = new Lock\Store\RedisStore('redis+sentinel://:' . rawurlencode($mpass) . "@$auth/$name", ['prefix' => $prefix, 'sentinel_password' => $spass]);
$lock = new Lock\Lock('auth', $good, 30.0);
var_dump($lock->acquire());
$lock->release();
foreach ([['sentinel_password' => 'wrong-sentinel-secret'], []] as $options) {
    $bad = new Lock\Store\RedisStore('redis+sentinel://:' . rawurlencode($mpass) . "@$auth/$name", ['prefix' => $prefix] + $options);
    $e = lock_test_expect_throw(fn () => (new Lock\Lock('auth', $bad, 30.0))->acquire());
    echo '  names the sentinel: ', var_export(str_contains($e->getMessage(), "sentinel $auth"), true),
        ', shows a password: ', var_export(str_contains($e->getMessage(), 'wrong-sentinel-secret') || str_contains($e->getMessage(), $mpass), true), "\n";
}

lock_test_topology_restore();
?>
--EXPECTF--
bool(true)
the key is on the master the sentinels name: true
the hold is on the new master: true
exit: 0
waiter: acquired, a greater token: true, within its wait: true
bool(true)
Lock\StorageException: Lock "auth": Redis master "%s" via sentinels %s: no sentinel named the master (sentinel %s: authentication failed: WRONGPASS%s)
  names the sentinel: true, shows a password: false
Lock\StorageException: Lock "auth": Redis master "%s" via sentinels %s: no sentinel named the master (sentinel %s: SENTINEL get-master-addr-by-name failed: NOAUTH%s)
  names the sentinel: true, shows a password: false
