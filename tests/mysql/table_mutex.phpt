--TEST--
mysql table holds: mutual exclusion across processes: several processes increment a counter in a file under one lock, blocking and non-blocking, and no update is lost; the fencing tokens grow with the holds
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('mytable');
$file = "$dir/counter";
file_put_contents($file, '0');
$procs = 4;
$rounds = lock_test_scale(60, 10);
$pids = [];
for ($p = 0; $p < $procs; $p++) {
    $pids[] = lock_test_fork(static function () use ($prefix, $file, $rounds, $p): int {
        $store = lock_test_mysql_table_store(['prefix' => $prefix]);
        for ($i = 0; $i < $rounds; $i++) {
            $lock = new Lock\Lock('counter', $store, 30.0);
            // Half the processes wait in the server, half try again and again.
            if ($p % 2 === 0) {
                if (!$lock->acquire(true, 60.0)) {
                    return 2;
                }
            } else {
                while (!$lock->acquire()) {
                    usleep(1000);
                }
            }
            $n = (int) file_get_contents($file);
            usleep(200);
            file_put_contents($file, (string) ($n + 1));
            // Which hold this was, and its token: the tokens must grow with the holds.
            file_put_contents("$file.fences", "$n " . $lock->getFencingToken() . "\n", FILE_APPEND);
            $lock->release();
        }
        return 0;
    });
}
$codes = array_map(fn (int $pid): int => lock_test_wait_pid($pid), $pids);
echo 'exit codes: ', implode(' ', $codes), "\n";
$expected = $procs * $rounds;
$got = (int) file_get_contents($file);
echo 'lost updates: ', $expected - $got, "\n";
$store = lock_test_mysql_table_store(['prefix' => $prefix]);
var_dump($store->isLocked('counter'));
$fences = [];
foreach (file("$file.fences", FILE_IGNORE_NEW_LINES) as $line) {
    [$n, $fence] = explode(' ', $line);
    $fences[(int) $n] = (int) $fence;
}
ksort($fences);
$sorted = array_values($fences);
$grow = count($sorted) === $expected;
for ($i = 1; $i < count($sorted); $i++) {
    $grow = $grow && $sorted[$i] > $sorted[$i - 1];
}
echo 'a token per hold, growing with the holds: ', var_export($grow, true), "\n";
echo 'the row is free: ', var_export(lock_test_mysql_row($prefix, 'counter')['owner'] === null, true), "\n";
?>
--EXPECT--
exit codes: 0 0 0 0
lost updates: 0
bool(false)
a token per hold, growing with the holds: true
the row is free: true
