--TEST--
Factory::restoreLock() argument errors (an owner is 1 to 255 bytes), and the process-bound stores (flock, semaphore) refuse to restore what no let-go lock object of this process left them, with a LockException
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');
$factory = new Lock\Factory($store);
$valid = bin2hex(random_bytes(16));

echo "-- owner\n";
// Any 1 to 255 bytes are an owner (the caller may have chosen it); nothing else is.
foreach (['', str_repeat('a', 256)] as $owner) {
    lock_test_expect_throw(fn () => $factory->restoreLock('r', $owner));
}
echo "-- resource and ttl\n";
lock_test_expect_throw(fn () => $factory->restoreLock('', $valid));
lock_test_expect_throw(fn () => $factory->restoreLock(str_repeat('x', 65537), $valid));
lock_test_expect_throw(fn () => $factory->restoreLock('r', $valid, 0.0));
lock_test_expect_throw(fn () => $factory->restoreLock('r', $valid, -1.0));
lock_test_expect_throw(fn () => $factory->restoreLock('r', $valid, NAN));
lock_test_expect_throw(fn () => $factory->restoreLock('r', $valid, INF));
echo 'a valid token is accepted: ', get_class($factory->restoreLock('r', $valid)), "\n";

echo "-- process-bound stores\n";
foreach (['flock', 'semaphore'] as $kind) {
    $kindStore = lock_test_store($kind);
    $resource = lock_test_resource();
    $e = lock_test_expect_throw(fn () => (new Lock\Factory($kindStore))->restoreLock($resource, $valid));
    echo 'the message names the store: ', var_export($e !== null && str_contains($e->getMessage(), $kind), true), "\n";
    echo 'isLocked: ', var_export($kindStore->isLocked($resource), true), "\n";
    // Not even the owner of a hold of this process whose lock object still holds it can be restored.
    $held = new Lock\Lock($resource, $kindStore);
    $held->acquire();
    lock_test_expect_throw(fn () => (new Lock\Factory($kindStore))->restoreLock($resource, $held->getOwner()));
    echo 'the holder still holds: ', var_export($held->isAcquired(), true), "\n";
}
?>
--EXPECTF--
-- owner
ValueError: Lock\Factory::restoreLock(): Argument #2 ($owner) must be 1 to 255 bytes long, 0 given
ValueError: Lock\Factory::restoreLock(): Argument #2 ($owner) must be 1 to 255 bytes long, 256 given
-- resource and ttl
ValueError: Lock\Factory::restoreLock(): Argument #1 ($resource) must %s
ValueError: Lock\Factory::restoreLock(): Argument #1 ($resource) must %s
ValueError: Lock\Factory::restoreLock(): Argument #3 ($ttl) must %s
ValueError: Lock\Factory::restoreLock(): Argument #3 ($ttl) must %s
ValueError: Lock\Factory::restoreLock(): Argument #3 ($ttl) must %s
ValueError: Lock\Factory::restoreLock(): Argument #3 ($ttl) must %s
a valid token is accepted: Lock\Lock
-- process-bound stores
Lock\LockException: %s
the message names the store: true
isLocked: false
Lock\LockException: %s
the holder still holds: true
Lock\LockException: %s
the message names the store: true
isLocked: false
Lock\LockException: %s
the holder still holds: true
