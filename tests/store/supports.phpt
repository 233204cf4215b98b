--TEST--
Store::supports() tells each store's capabilities; anything but one of the constants is a ValueError
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$caps = ['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED,
    'FENCING' => Lock\Store::FENCING, 'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND];
var_dump(count(array_unique($caps)));
foreach (['flock', 'semaphore', 'redis'] as $kind) {
    $store = lock_test_store($kind);
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
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
ValueError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
TypeError: Lock\Store\FlockStore::supports(): Argument #1 ($capability) must be of type int, string given
