--TEST--
redis: a hold that outlived its TTL: ExpiredException when nobody holds it, LostException when somebody else does
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');

/** Shortens a's hold and waits until the server dropped it. */
function expire(Lock\Lock $lock, Lock\Store $store): void
{
    $lock->refresh(0.05);
    lock_test_wait_until(fn () => !$store->isLocked($lock->getResource()), 30, 'the hold to expire');
}

echo "-- expired, nobody holds it\n";
$resource = lock_test_resource('expiring');
$a = new Lock\Lock($resource, $store, 300.0);
$a->acquire();
expire($a, $store);
var_dump($a->isAcquired());
var_dump($a->isExpired());
try {
    $a->release();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
    var_dump(str_contains($e->getMessage(), $resource));
}
// The local state is cleared: releasing again is a no-op, refresh() says it is not held.
$a->release();
try {
    $a->refresh();
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump($a->acquire());
expire($a, $store);
try {
    $a->refresh();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
    var_dump(str_contains($e->getMessage(), $resource));
}
var_dump($a->getRemainingLifetime());

echo "-- lost, somebody else holds it\n";
$b = new Lock\Lock($resource, $store, 300.0);
var_dump($a->acquire());
expire($a, $store);
var_dump($b->acquire());
var_dump($a->isAcquired());
try {
    $a->release();
    echo "no exception\n";
} catch (Lock\LostException $e) {
    echo get_class($e), "\n";
    var_dump($e instanceof Lock\ExpiredException);
    var_dump(str_contains($e->getMessage(), $resource));
}
// b's hold is untouched by a's release.
var_dump($b->isAcquired());
$a->release();
var_dump($a->acquire());
var_dump($b->isAcquired());
$b->release();

// refresh() of a lost hold.
var_dump($a->acquire());
expire($a, $store);
var_dump($b->acquire());
try {
    $a->refresh();
    echo "no exception\n";
} catch (Lock\LostException $e) {
    echo get_class($e), "\n";
}
var_dump($b->isAcquired());
// acquire() while the local state still says held: it finds the hold gone and is refused.
var_dump($a->acquire());
$b->release();
var_dump($a->acquire());
$a->release();
?>
--EXPECT--
-- expired, nobody holds it
bool(false)
bool(true)
Lock\ExpiredException
bool(true)
Lock\LockException
bool(true)
Lock\ExpiredException
bool(true)
NULL
-- lost, somebody else holds it
bool(true)
bool(true)
bool(false)
Lock\LostException
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
Lock\LostException
bool(true)
bool(false)
bool(true)
