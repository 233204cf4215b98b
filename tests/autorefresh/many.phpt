--TEST--
$autoRefresh: a thousand holds refreshed at once by one process stay held for another process
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$n = lock_test_scale(1000, 100);
$ttl = 1.0;
$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$resources = [];
$locks = [];
for ($i = 0; $i < $n; $i++) {
    $resources[] = $r = lock_test_resource("many$i");
    $locks[] = $lock = new Lock\Lock($r, $store, $ttl, true, null, true);
    if (!$lock->acquire()) {
        echo "FAIL: $r not acquired\n";
    }
}
$before = Lock\stats()['Lock\Store\RedisStore']['auto_refreshed'];
$start = microtime(true);
// Another process looks at every hold, again and again, for three TTLs.
[$rc, $out] = lock_test_run_php('$store = ' . lock_test_store_code('redis', null, $prefix) . ";\n"
    . '$resources = ' . var_export($resources, true) . ";\n"
    . '$free = 0; $rounds = 0; $end = microtime(true) + 3.0;' . "\n"
    . 'while (microtime(true) < $end) { foreach ($resources as $r) { $free += $store->isLocked($r) ? 0 : 1; } $rounds++; }' . "\n"
    . 'echo "seen free: $free, rounds: ", $rounds >= 2 ? "2 or more" : $rounds, "\n";');
echo $out;
$took = microtime(true) - $start;
$refreshes = Lock\stats()['Lock\Store\RedisStore']['auto_refreshed'] - $before;
// About three refreshes per hold per TTL, not more.
$rate = $refreshes / $n / $took;
echo 'refreshes per hold per second about 3: ', var_export($rate > 2.0 && $rate < 3.6, true), "\n";
foreach ($locks as $lock) {
    $lock->release();
}
$free = 0;
foreach ($resources as $r) {
    $free += $store->isLocked($r) ? 0 : 1;
}
echo "free after release: ", $free === $n ? 'all' : $free, "\n";
?>
--EXPECT--
seen free: 0, rounds: 2 or more
refreshes per hold per second about 3: true
free after release: all
