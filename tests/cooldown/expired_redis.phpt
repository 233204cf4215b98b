--TEST--
redis: release($delay) of a hold that outlived its TTL throws ExpiredException or LostException, and never blocks the resource under the new holder's feet
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');

echo "-- expired, nobody holds it\n";
$resource = lock_test_resource('expired');
$a = new Lock\Lock($resource, $store, 0.2);
var_dump($a->acquire());
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the hold to expire');
lock_test_expect_throw(fn () => $a->release(300.0));
var_dump($a->isAcquired());

echo "-- lost, somebody else holds it\n";
$resource = lock_test_resource('lost');
$a = new Lock\Lock($resource, $store, 0.2);
$b = new Lock\Lock($resource, $store, 300.0);
var_dump($a->acquire());
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the hold to expire');
var_dump($b->acquire());
lock_test_expect_throw(fn () => $a->release(300.0));
echo 'the new holder still holds: ', var_export($b->isAcquired(), true), "\n";
$b->release();
echo 'isLocked after the new holder released: ', var_export($store->isLocked($resource), true), "\n";
?>
--EXPECTF--
-- expired, nobody holds it
bool(true)
Lock\ExpiredException: %s
bool(false)
-- lost, somebody else holds it
bool(true)
bool(true)
Lock\LostException: %s
the new holder still holds: true
isLocked after the new holder released: false
