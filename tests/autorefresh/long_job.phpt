--TEST--
$autoRefresh: a 1 s hold outlives a job of 5 s asleep, 3 s of CPU-bound PHP and a 3 s PostgreSQL pg_sleep(); nobody else gets it meanwhile, and a waiter gets it at once after the release
--EXTENSIONS--
lock
pgsql
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/pgsql.inc';

lock_test_hang_guard(90);
$resource = lock_test_resource();
$prefix = lock_test_prefix();
[$host, $port, $user, $pass, $db] = lock_test_pgsql_parts();
$conninfo = "host=$host port=$port user=$user password=$pass dbname=$db";
$holder = new LockTestChild('$store = ' . lock_test_store_code('redis', null, $prefix) . ";\n"
    . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store, 1.0, true, null, true);' . "\n"
    . '$pg = pg_connect(' . var_export($conninfo, true) . ');' . "\n"
    . <<<'PHP'
if (!$lock->acquire()) {
    echo "not acquired\n";
    exit(1);
}
echo "held\n";
sleep(5);
echo "slept\n";
$end = microtime(true) + 3.0;
$x = 0;
while (microtime(true) < $end) {
    for ($i = 0; $i < 100000; $i++) {
        $x = ($x * 31 + $i) % 1000003;
    }
}
echo "computed\n";
pg_query($pg, 'SELECT pg_sleep(3)');
echo "queried\n";
echo 'releasing ', var_export($lock->isAcquired(), true), "\n";
$lock->release();
printf("released %.6f\n", microtime(true));
PHP);
$holder->waitFor('held');

$store = lock_test_store('redis', null, $prefix);
$lock = new Lock\Lock($resource, $store, 10.0);
$seen = [];
$early = 0;
$tries = 0;
// Tries every 100 ms while the holder works; a hold it gets before the holder said it releases is a second holder.
while (!in_array('releasing true', $seen, true) && !in_array('releasing false', $seen, true)) {
    $r = [$holder->stdout];
    $w = $e = null;
    if (stream_select($r, $w, $e, 0, 100000) > 0) {
        $line = fgets($holder->stdout);
        if ($line === false) {
            break;
        }
        $seen[] = trim($line);
        continue;
    }
    $tries++;
    if ($lock->acquire()) {
        $r = [$holder->stdout];
        if (stream_select($r, $w, $e, 0, 0) === 0 || !str_starts_with(trim((string) fgets($holder->stdout)), 'releasing')) {
            $early++;
        }
        $lock->release();
        break;
    }
}
echo implode("\n", array_slice($seen, 0, 4)), "\n";
echo "tries while held: ", $tries > 80 ? 'more than 80' : $tries, "; got it early: $early\n";
if (!$early) {
    var_dump($lock->acquire(true, 10.0));
    $got = microtime(true);
    $rest = $holder->wait();
    $at = strpos($rest, 'released ');
    $after = $got - ($at === false ? 0.0 : (float) substr($rest, $at + 9));
    echo 'acquired within 0.5 s of the release: ', var_export($after < lock_test_patience(0.5), true), "\n";
    $lock->release();
}
?>
--EXPECT--
slept
computed
queried
releasing true
tries while held: more than 80; got it early: 0
bool(true)
acquired within 0.5 s of the release: true
