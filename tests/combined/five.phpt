--TEST--
combined: five Redis servers: eight processes (four under valgrind) never hold together (no lost update); two servers down, it still takes holds on the other three; three down, acquire() throws StorageException within the timeout and holds nothing anywhere; 'unanimous' needs all five; fencing tokens grow through it all, servers restarted empty included
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$servers = [];
for ($i = 0; $i < 5; $i++) {
    $servers[] = new LockTestRedisServer();
}
$prefix = lock_test_prefix();
$timeout = 0.5;
$hosts = implode(',', array_map(fn ($s) => '127.0.0.1:' . $s->port, $servers));
$dsn = "redlock://$hosts?prefix=" . urlencode($prefix) . "&timeout=$timeout";
$direct = array_map(fn ($s) => new Lock\Store\RedisStore($s->dsn('prefix=' . urlencode($prefix) . "&timeout=$timeout")), $servers);
// Which of the servers $which hold the resource, once they say $want (see tests/combined/basic.phpt).
$held = function (string $r, array $which, string $want) use ($direct): string {
    $deadline = microtime(true) + 5.0;
    do {
        $now = implode('', array_map(fn ($i) => $direct[$i]->isLocked($r) ? '1' : '0', $which));
    } while ($now !== $want && microtime(true) < $deadline && usleep(10000) === null);
    return $now;
};
$tokens = [];

echo "-- eight processes\n";
$dir = lock_test_tmpdir();
file_put_contents("$dir/count", '0');
$rounds = lock_test_scale(25, 5);
$procs = lock_test_scale(8, 4);
$pids = [];
for ($p = 0; $p < $procs; $p++) {
    $pids[] = lock_test_fork(function () use ($dsn, $dir, $rounds) {
        $lock = Lock\Factory::fromDsn($dsn)->createLock('count', 10.0);
        $seen = [];
        for ($i = 0; $i < $rounds; $i++) {
            if (!$lock->acquire(true, 60.0)) {
                return 1;
            }
            $seen[] = $lock->getFencingToken();
            $n = (int) file_get_contents("$dir/count");
            usleep(500);
            file_put_contents("$dir/count.tmp", (string) ($n + 1));
            rename("$dir/count.tmp", "$dir/count");
            $lock->release();
        }
        file_put_contents("$dir/tokens-" . getmypid(), implode("\n", $seen));
        return 0;
    });
}
$ok = true;
foreach ($pids as $pid) {
    $ok = lock_test_wait_pid($pid) === 0 && $ok;
}
$all = [];
foreach (glob("$dir/tokens-*") as $f) {
    $mine = array_map('intval', file($f, FILE_IGNORE_NEW_LINES));
    $sorted = $mine;
    sort($sorted);
    $ok = $ok && $sorted === $mine;
    $all = array_merge($all, $mine);
}
echo 'every process done: ', var_export($ok, true), "\n";
echo 'no lost update: ', var_export((int) file_get_contents("$dir/count") === $procs * $rounds, true), "\n";
echo 'every hold its own token: ', var_export(count(array_unique($all)) === $procs * $rounds, true), "\n";
$tokens[] = max($all);
lock_test_rmdir($dir);

$lock = Lock\Factory::fromDsn($dsn)->createLock('r', 10.0);
echo "-- two of five down\n";
$servers[0]->kill();
$servers[1]->kill();
var_dump($lock->acquire(), $held('r', [2, 3, 4], '111'));
$tokens[] = $lock->getFencingToken();
var_dump($lock->refresh(), $lock->release(), $held('r', [2, 3, 4], '000'));

echo "-- three of five down\n";
$servers[2]->pause();
lock_fault_call('acquire', fn () => $lock->acquire(), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
lock_fault_call('acquire, waiting', fn () => $lock->acquire(true, 5.0), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
lock_fault_call('isLocked', fn () => Lock\Factory::fromDsn($dsn)->getStore()->isLocked('r'), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
var_dump($lock->isAcquired() === false, $held('r', [3, 4], '00'));
$servers[2]->resume();

echo "-- back, empty\n";
$servers[0]->restart();
$servers[1]->restart();
// The servers back need a new connection: the call may go on with the majority without one of them.
var_dump($lock->acquire(), substr_count($held('r', [0, 1, 2, 3, 4], '11111'), '1') >= 3);
$tokens[] = $lock->getFencingToken();
$lock->release();
$servers[3]->restart();
$servers[4]->restart();
$servers[2]->restart();
var_dump($lock->acquire());
$tokens[] = $lock->getFencingToken();
$lock->release();
$sorted = $tokens;
sort($sorted);
echo 'tokens grew: ', var_export($sorted === $tokens && count(array_unique($tokens)) === count($tokens), true), "\n";

echo "-- unanimous\n";
$all5 = Lock\Factory::fromDsn("$dsn&strategy=unanimous")->createLock('u', 10.0);
var_dump($all5->acquire(), $held('u', [0, 1, 2, 3, 4], '11111'));
$all5->release();
$servers[4]->kill();
lock_fault_call('acquire, one down', fn () => $all5->acquire(), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
var_dump($held('u', [0, 1, 2, 3], '0000'));
?>
--EXPECT--
-- eight processes
every process done: true
no lost update: true
every hold its own token: true
-- two of five down
bool(true)
string(3) "111"
NULL
NULL
string(3) "000"
-- three of five down
acquire: StorageException
acquire, waiting: StorageException
isLocked: StorageException
bool(true)
string(2) "00"
-- back, empty
bool(true)
bool(true)
bool(true)
tokens grew: true
-- unanimous
bool(true)
string(5) "11111"
acquire, one down: StorageException
string(4) "0000"
