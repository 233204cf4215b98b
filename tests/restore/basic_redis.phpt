--TEST--
redis: Factory::restoreLock() adopts a hold by its owner token; the restored lock refreshes and releases it
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');
$factory = new Lock\Factory($store, 60.0);
$resource = lock_test_resource('restore');
$lock = $factory->createLock($resource);
var_dump($lock->acquire());
$owner = $lock->getOwner();
echo 'owner is 32 hex digits: ', preg_match('/^[0-9a-f]{32}$/D', $owner), "\n";

echo "-- restored\n";
$restored = $factory->restoreLock($resource, $owner);
echo 'getOwner is the token: ', var_export($restored->getOwner() === $owner, true), "\n";
echo 'getResource: ', var_export($restored->getResource() === $resource, true), "\n";
echo 'getTtl (the factory default): ', var_export($restored->getTtl(), true), "\n";
echo 'isAcquired: ', var_export($restored->isAcquired(), true), "\n";
$restored->refresh();
$left = $restored->getRemainingLifetime();
echo 'refreshed to the TTL: ', var_export(is_float($left) && $left > 0 && $left <= 60.0, true), "\n";
$restored->refresh(120.0);
$left = $restored->getRemainingLifetime();
echo 'refreshed to 120 s: ', var_export(is_float($left) && $left > 60.0 && $left <= 120.0, true), "\n";
echo 'another lock acquires: ', var_export((new Lock\Lock($resource, $store))->acquire(), true), "\n";
echo 'the original still holds: ', var_export($lock->isAcquired(), true), "\n";

echo "-- TTL argument\n";
echo 'ttl 30: ', var_export($factory->restoreLock($resource, $owner, 30.0)->getTtl(), true), "\n";
echo 'ttl null: ', var_export($factory->restoreLock($resource, $owner, null)->getTtl(), true), "\n";

echo "-- autoRelease defaults to false\n";
$dropped = $factory->restoreLock($resource, $owner);
unset($dropped);
gc_collect_cycles();
echo 'isLocked after the restored object is gone: ', var_export($store->isLocked($resource), true), "\n";
echo 'the original still holds: ', var_export($lock->isAcquired(), true), "\n";
$dropped = $factory->restoreLock($resource, $owner, 60.0, true);
unset($dropped);
gc_collect_cycles();
echo 'isLocked after a restored object with autoRelease is gone: ', var_export($store->isLocked($resource), true), "\n";
var_dump($lock->acquire());
$owner = $lock->getOwner();

echo "-- release\n";
$restored = $factory->restoreLock($resource, $owner);
$restored->release();
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'restored isAcquired: ', var_export($restored->isAcquired(), true), "\n";
echo 'original isAcquired: ', var_export($lock->isAcquired(), true), "\n";
lock_test_expect_throw(fn () => $lock->release());
echo 'another lock acquires: ', var_export((new Lock\Lock($resource, $store))->acquire(), true), "\n";
?>
--EXPECTF--
bool(true)
owner is 32 hex digits: 1
-- restored
getOwner is the token: true
getResource: true
getTtl (the factory default): 60.0
isAcquired: true
refreshed to the TTL: true
refreshed to 120 s: true
another lock acquires: false
the original still holds: true
-- TTL argument
ttl 30: 30.0
ttl null: NULL
-- autoRelease defaults to false
isLocked after the restored object is gone: true
the original still holds: true
isLocked after a restored object with autoRelease is gone: false
bool(true)
-- release
isLocked: false
restored isAcquired: false
original isAcquired: false
Lock\ExpiredException: %s
another lock acquires: true
