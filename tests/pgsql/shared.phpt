--TEST--
pgsql: shared holds: readers together, no writer beside them; promotion waits for the other readers, demotion lets readers in; fencing tokens strictly increase and are null for readers
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$store = lock_test_pgsql_store(['prefix' => $prefix]);
$r1 = new Lock\Lock('s', $store, null);
$r2 = new Lock\Lock('s', $store, null);
$w = new Lock\Lock('s', $store, null);

echo "-- readers\n";
var_dump($r1->acquireRead(), $r2->acquireRead(), $w->acquire(), $w->acquireRead(), $store->isLocked('s'));
var_dump($r1->getFencingToken(), count(lock_test_pgsql_holders($prefix, 's')));
$w->release();
echo "-- promotion waits for the other reader\n";
var_dump($r1->acquire(true, 0.2), $r1->isAcquired(), $r1->getFencingToken());
$r2->release();
var_dump($r1->acquire(), $r1->isAcquired(), $r2->acquireRead());
$t1 = $r1->getFencingToken();
echo "-- demotion\n";
var_dump($r1->acquireRead(), $r1->getFencingToken(), $r2->acquireRead(), $w->acquire());
$r1->release();
$r2->release();
var_dump($store->isLocked('s'), lock_test_pgsql_holders($prefix, 's'));

echo "-- fencing tokens grow with every exclusive hold, across stores and processes\n";
$last = $t1;
$grows = true;
for ($i = 0; $i < 5; $i++) {
    $lock = new Lock\Lock('s', lock_test_pgsql_store(['prefix' => $prefix]));
    $lock->acquire();
    $t = $lock->getFencingToken();
    $grows = $grows && is_int($t) && $t > $last && $t === $lock->getFencingToken();
    $last = $t;
    $lock->release();
}
[$code, $out] = lock_test_run_php('require "' . __DIR__ . '/../inc/pgsql.inc";'
    . '$l = new Lock\Lock("s", lock_test_pgsql_store(["prefix" => ' . var_export($prefix, true) . ']));'
    . '$l->acquire(); echo $l->getFencingToken();');
$grows = $grows && $code === 0 && (int) $out > $last;
$l = new Lock\Lock('s', $store);
$l->acquire();
$grows = $grows && $l->getFencingToken() > (int) $out;
$l->release();
var_dump($grows, $l->getFencingToken());
echo 'the table: ', lock_test_pgsql_sql("SELECT count(*) > 0 FROM lock_fencing"), "\n";
?>
--EXPECT--
-- readers
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
NULL
int(3)
-- promotion waits for the other reader
bool(false)
bool(true)
NULL
bool(true)
bool(true)
bool(false)
-- demotion
bool(true)
NULL
bool(true)
bool(false)
bool(false)
array(0) {
}
-- fencing tokens grow with every exclusive hold, across stores and processes
bool(true)
NULL
the table: t
