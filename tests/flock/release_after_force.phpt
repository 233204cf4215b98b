--TEST--
flock: release() after forceRelease() broke the hold throws ExpiredException, or LostException when somebody holds it now
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
$store = lock_test_store('flock');
$resource = lock_test_resource();
$a = new Lock\Lock($resource, $store);
$b = new Lock\Lock($resource, $store);

$a->acquire();
$store->forceRelease($resource);
var_dump($a->isAcquired());
lock_test_expect_throw(fn () => $a->release());
var_dump($a->isAcquired());

$a->acquire();
$store->forceRelease($resource);
var_dump($b->acquire());
lock_test_expect_throw(fn () => $a->release());
var_dump($b->isAcquired(), $store->isLocked($resource));
$b->release();

// The same through check(): refresh() says so and forgets the hold.
$a->acquire();
$store->forceRelease($resource);
lock_test_expect_throw(fn () => $a->refresh());
var_dump($a->isAcquired(), $store->isLocked($resource));
// An unbroken hold still releases quietly.
var_dump($a->acquire());
$a->release();
var_dump($store->isLocked($resource));
?>
--EXPECTF--
bool(false)
Lock\ExpiredException: %s
bool(false)
bool(true)
Lock\LostException: %s
bool(true)
bool(true)
Lock\ExpiredException: %s
bool(false)
bool(false)
bool(true)
bool(false)
