--TEST--
Lock\stats(): storage errors (a Redis and a PostgreSQL server that is not there), read holds, a wait a signal handler ends, a forked child that starts from zero, the totals in phpinfo(), and its arguments
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard(60);

/** A loopback port nothing listens on. */
function dead_port(): int
{
    $s = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
    fclose($s);
    return $port;
}

/** Calls $fn and prints the class of the exception it throws. */
function outcome(string $what, callable $fn): void
{
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), "\n";
    }
}

$port = dead_port();
echo "-- storage errors\n";
$redis = new Lock\Store\RedisStore("redis://127.0.0.1:$port?timeout=0.5");
$pgsql = new Lock\Store\PostgresStore("pgsql://lock@127.0.0.1:$port/lock?timeout=0.5");
outcome('redis acquire', fn () => (new Lock\Lock('e', $redis))->acquire());
outcome('redis isLocked', fn () => $redis->isLocked('e'));
outcome('redis waitUntilFree', fn () => $redis->waitUntilFree('e', 1.0));
outcome('pgsql acquire', fn () => (new Lock\Lock('e', $pgsql))->acquire(true, 1.0));
$stats = Lock\stats();
echo 'redis: ', $stats['Lock\Store\RedisStore']['storage_errors'], ' storage errors, ', $stats['Lock\Store\RedisStore']['acquired'], " acquired\n";
echo 'pgsql: ', $stats['Lock\Store\PostgresStore']['storage_errors'], ' storage errors, ', $stats['Lock\Store\PostgresStore']['timed_out'], " timed out\n";
echo 'total: ', $stats['total']['storage_errors'], " storage errors\n";

echo "-- read holds and a wait a signal handler ends\n";
$flock = new Lock\Store\FlockStore(lock_test_tmpdir('stats'));
$r1 = new Lock\Lock('r', $flock);
$r2 = new Lock\Lock('r', $flock);
$w = new Lock\Lock('r', $flock);
var_dump($r1->acquireRead(), $r2->acquireRead(true));
pcntl_async_signals(true);
pcntl_signal(SIGUSR1, function (): void {
    throw new RuntimeException('the handler ends the wait');
});
$pid = getmypid();
$sender = lock_test_fork(function () use ($pid): void {
    usleep(200000);
    posix_kill($pid, SIGUSR1);
});
outcome('blocking acquire', fn () => $w->acquire(true, 30.0));
lock_test_wait_pid($sender);
$f = Lock\stats()['Lock\Store\FlockStore'];
echo "acquired {$f['acquired']}, waited {$f['waited']}, timed_out {$f['timed_out']}, wait_seconds > 0: ", var_export($f['wait_seconds'] > 0, true), "\n";
$r1->release();
$r2->release();
echo 'classes shown: ', implode(', ', array_keys(Lock\stats())), "\n";

echo "-- a forked child starts from zero\n";
$child = lock_test_fork(function () use ($flock): void {
    $s = Lock\stats();
    echo 'child at start: total acquired ', $s['total']['acquired'], ', released ', $s['total']['released'],
        ', flock store shown: ', var_export(isset($s['Lock\Store\FlockStore']), true), "\n";
    $l = new Lock\Lock('c', $flock);
    $l->acquire();
    $l->release();
    echo 'child after one cycle: acquired ', Lock\stats()['total']['acquired'], "\n";
});
lock_test_wait_pid($child);
echo 'parent: acquired ', Lock\stats()['total']['acquired'], "\n";

echo "-- phpinfo()\n";
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
foreach (['acquired', 'storage_errors', 'timed_out'] as $name) {
    preg_match('/^' . $name . ' => (\d+)$/m', $info, $m);
    echo "$name => ", $m[1] ?? 'missing', "\n";
}

echo "-- arguments\n";
outcome('stats(1)', fn () => Lock\stats(1));
?>
--EXPECT--
-- storage errors
redis acquire: Lock\StorageException
redis isLocked: Lock\StorageException
redis waitUntilFree: Lock\StorageException
pgsql acquire: Lock\StorageException
redis: 3 storage errors, 0 acquired
pgsql: 1 storage errors, 0 timed out
total: 4 storage errors
-- read holds and a wait a signal handler ends
bool(true)
bool(true)
blocking acquire: RuntimeException
acquired 2, waited 1, timed_out 1, wait_seconds > 0: true
classes shown: total, Lock\Store\FlockStore, Lock\Store\RedisStore, Lock\Store\PostgresStore
-- a forked child starts from zero
child at start: total acquired 0, released 0, flock store shown: true
child after one cycle: acquired 1
parent: acquired 2
-- phpinfo()
acquired => 2
storage_errors => 4
timed_out => 1
-- arguments
stats(1): ArgumentCountError
