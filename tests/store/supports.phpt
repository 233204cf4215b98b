--TEST--
Store::supports() tells each store's capabilities; anything but one of the constants is a ValueError
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/memcached.inc';

$caps = ['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED,
    'FENCING' => Lock\Store::FENCING, 'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND];
var_dump(count(array_unique($caps)));
$stores = [
    'flock' => lock_test_store('flock'),
    'semaphore' => lock_test_store('semaphore'),
    'redis' => lock_test_store('redis'),
    'pgsql' => lock_test_pgsql_store(),
    'pgsql table' => lock_test_pgsql_table_store(),
    'mysql' => lock_test_mysql_store(),
    'mysql table' => lock_test_mysql_table_store(),
    'memcached' => lock_test_store('memcached'),
];
foreach ($stores as $kind => $store) {
    $yes = [];
    foreach ($caps as $name => $cap) {
        if ($store->supports($cap)) {
            $yes[] = $name;
        }
    }
    echo $kind, ': ', implode(' ', $yes), "\n";
}
$store = lock_test_store('flock');
foreach ([0, -1, 3, 16, PHP_INT_MAX, Lock\Store::EXPIRING | Lock\Store::SHARED] as $bad) {
    lock_test_expect_throw(fn () => $store->supports($bad));
}
lock_test_expect_throw(fn () => $store->supports('SHARED'));
?>
--EXPECT--
int(4)
flock: SHARED FENCING PROCESS_BOUND
semaphore: SHARED PROCESS_BOUND
redis: EXPIRING SHARED FENCING
pgsql: SHARED FENCING PROCESS_BOUND
pgsql table: EXPIRING FENCING
mysql: FENCING PROCESS_BOUND
mysql table: EXPIRING FENCING
memcached: EXPIRING
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
TypeError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be of type int, string given
