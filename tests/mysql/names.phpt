--TEST--
mysql: resource names of any bytes and length map to distinct 64-character GET_LOCK names (the SQL expression of docs/mysql.md finds them); case variants, prefixes and the application's own GET_LOCK names never meet
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$store = lock_test_mysql_store(['prefix' => $prefix]);

echo "-- binary, long and odd names\n";
foreach (["\0", "a\0b", str_repeat("\xff", 65536), "'; DROP TABLE x; --", "\\'", str_repeat('n', 64), "é"] as $name) {
    $l = new Lock\Lock($name, $store);
    $m = new Lock\Lock($name, $store);
    echo strlen($name), ': ', json_encode([$l->acquire(), $m->acquire(), $store->isLocked($name),
        lock_test_mysql_holder($prefix, $name) !== null]);
    $l->release();
    echo ' ', json_encode([$store->isLocked($name), $m->acquire()]), "\n";
    $m->release();
}

echo "-- case variants are distinct locks\n";
$variants = ['Orders', 'orders', 'ORDERS', 'oRdErS'];
$locks = [];
foreach ($variants as $v) {
    $locks[$v] = new Lock\Lock($v, $store);
    echo $v, ': ', var_export($locks[$v]->acquire(), true), "\n";
}
$names = array_map(static fn (string $v): string => lock_test_mysql_name($prefix, $v), $variants);
echo 'names distinct: ', var_export(count(array_unique($names)) === count($variants), true), "\n";
echo 'names are 64 lowercase characters: ', var_export(array_filter($names, static fn (string $n): bool => preg_match('/^lock:[0-9a-f]{59}$/', $n) !== 1) === [], true), "\n";
foreach ($locks as $l) {
    $l->release();
}

echo "-- the prefix is part of the name, its length too\n";
$p1 = lock_test_mysql_store(['prefix' => $prefix . 'ab']);
$p2 = lock_test_mysql_store(['prefix' => $prefix . 'a']);
$x = new Lock\Lock('c', $p1);
var_dump($x->acquire(), $p2->isLocked('bc'), (new Lock\Lock('bc', $p2))->acquire());
$x->release();
$nop = lock_test_mysql_store(['prefix' => '']);
$y = new Lock\Lock($prefix . 'c', $nop);
var_dump($y->acquire(), $store->isLocked('c'));
$y->release();

echo "-- the application's own GET_LOCK names are left alone\n";
$raw = 'app-' . bin2hex(random_bytes(4));
$app = new Lock\Lock($raw, lock_test_mysql_store(['prefix' => '']));
var_dump($app->acquire(), lock_test_mysql_sql("SELECT IS_FREE_LOCK('$raw')"));
$app->release();
?>
--EXPECT--
-- binary, long and odd names
1: [true,false,true,true] [false,true]
3: [true,false,true,true] [false,true]
65536: [true,false,true,true] [false,true]
19: [true,false,true,true] [false,true]
2: [true,false,true,true] [false,true]
64: [true,false,true,true] [false,true]
2: [true,false,true,true] [false,true]
-- case variants are distinct locks
Orders: true
orders: true
ORDERS: true
oRdErS: true
names distinct: true
names are 64 lowercase characters: true
-- the prefix is part of the name, its length too
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
-- the application's own GET_LOCK names are left alone
bool(true)
string(1) "1"
