--TEST--
Owners chosen by the caller: 1 to 255 bytes of any kind, on every store; a second lock with the same owner still conflicts; restored in another process on Redis
--EXTENSIONS--
lock
pcntl
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

echo "-- bad owners\n";
$store = lock_test_store('redis');
$factory = new Lock\Factory($store);
foreach (['', str_repeat('x', 256)] as $owner) {
    lock_test_expect_throw(fn () => new Lock\Lock('r', $store, 10.0, true, $owner));
    lock_test_expect_throw(fn () => $factory->createLock('r', owner: $owner));
}
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, 10.0, true, ['o']));

echo "== chosen owners on every store\n";
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $ttl = $store->supports(Lock\Store::EXPIRING) ? 30.0 : null;
    $factory = new Lock\Factory($store, $ttl);
    foreach (['job-42', "bin\0ary\xff" . str_repeat('o', 200), str_repeat('z', 255), 'x'] as $owner) {
        $resource = lock_test_resource('owner');
        $lock = $factory->createLock($resource, owner: $owner);
        $same = $lock->getOwner() === $owner;
        $acquired = $lock->acquire();
        // Only restoreLock() adopts a hold: another lock object with the same owner is another holder.
        $other = new Lock\Lock($resource, $store, $ttl, true, $owner);
        $otherAcquired = $other->acquire() || $other->acquireRead();
        try {
            $other->acquire(true, 1.0);
            $blocking = 'acquired';
        } catch (Lock\LockException $e) {
            $blocking = get_class($e) . (str_contains($e->getMessage(), 'same owner') ? ' (same owner)' : ': ' . $e->getMessage());
        }
        $held = $lock->isAcquired();
        $lock->release();
        $afterRelease = $store->isLocked($resource);
        printf("%d bytes: getOwner %s, acquire %s, same owner again %s, blocking %s, still held %s, locked after release %s\n",
            strlen($owner), var_export($same, true), var_export($acquired, true), var_export($otherAcquired, true),
            $blocking, var_export($held, true), var_export($afterRelease, true));
    }
});

echo "== stores whose holds are not process-bound: restore by a chosen owner\n";
$kinds = array_values(array_filter(LOCK_TEST_KINDS, fn ($k) => !lock_test_store($k)->supports(Lock\Store::PROCESS_BOUND)));
lock_test_each_kind($kinds, function (string $kind): void {
    // A hold released through a restored object no longer keeps the owner out.
    $store = lock_test_store($kind);
    $resource = lock_test_resource('owner');
    $first = new Lock\Lock($resource, $store, 30.0, true, 'worker-1');
    var_dump($first->acquire());
    (new Lock\Factory($store))->restoreLock($resource, 'worker-1')->release();
    $again = new Lock\Lock($resource, $store, 30.0, true, 'worker-1');
    var_dump($again->acquire(), $first->isAcquired());

    // One owner under two prefixes: two namespaces, no conflict.
    $resource = lock_test_resource('owner');
    $a = new Lock\Lock($resource, lock_test_store($kind, null, lock_test_prefix()), 30.0, true, 'shared-id');
    $b = new Lock\Lock($resource, lock_test_store($kind, null, lock_test_prefix()), 30.0, true, 'shared-id');
    var_dump($a->acquire(), $b->acquire());

    // Restored in another process by its chosen owner, and released there.
    $prefix = lock_test_prefix();
    $store = lock_test_store($kind, null, $prefix);
    $resource = lock_test_resource('owner');
    $owner = "queue-worker\0" . random_bytes(16);
    $lock = new Lock\Lock($resource, $store, 30.0, false, $owner);
    var_dump($lock->acquire());
    [, $out] = lock_test_run_php('$factory = new Lock\Factory(' . lock_test_store_code($kind, null, $prefix) . ");\n"
        . '$lock = $factory->restoreLock(' . var_export($resource, true) . ', ' . var_export($owner, true) . ");\n"
        . 'var_dump($lock->isAcquired(), $lock->getOwner() === ' . var_export($owner, true) . ");\n"
        . '$lock->release();' . "\n"
        . 'echo "released\n";');
    echo $out;
    echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
    try {
        $lock->release();
        echo "release of the hold released elsewhere: no exception\n";
    } catch (Lock\LockException $e) {
        echo 'release of the hold released elsewhere: ', get_class($e), "\n";
    }
});

echo "-- a forked child cannot act under its parent's chosen owner\n";
$resource = lock_test_resource('owner');
$lock = new Lock\Lock($resource, lock_test_store('semaphore'), null, true, 'parent-owner');
$pid = lock_test_fork(static function () use ($lock): int {
    try {
        $lock->acquire();
        return 1;
    } catch (Lock\LockException $e) {
        return str_contains($e->getMessage(), 'forked child') ? 0 : 2;
    }
});
echo 'child refused: ', var_export(lock_test_wait_pid($pid) === 0, true), "\n";
var_dump($lock->acquire());
?>
--EXPECTF--
-- bad owners
ValueError: Lock\Lock::__construct(): Argument #5 ($owner) must be 1 to 255 bytes long, 0 given
ValueError: Lock\Factory::createLock(): Argument #4 ($owner) must be 1 to 255 bytes long, 0 given
ValueError: Lock\Lock::__construct(): Argument #5 ($owner) must be 1 to 255 bytes long, 256 given
ValueError: Lock\Factory::createLock(): Argument #4 ($owner) must be 1 to 255 bytes long, 256 given
TypeError: Lock\Lock::__construct(): Argument #5 ($owner) must be of type ?string, array given
== chosen owners on every store
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
6 bytes: getOwner true, acquire true, same owner again false, blocking Lock\LockException (same owner), still held true, locked after release false
208 bytes: getOwner true, acquire true, same owner again false, blocking Lock\LockException (same owner), still held true, locked after release false
255 bytes: getOwner true, acquire true, same owner again false, blocking Lock\LockException (same owner), still held true, locked after release false
1 bytes: getOwner true, acquire true, same owner again false, blocking Lock\LockException (same owner), still held true, locked after release false
== stores whose holds are not process-bound: restore by a chosen owner
-- redis, combined, pgsql-table, mysql-table, memcached
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
released
isLocked: false
release of the hold released elsewhere: Lock\ExpiredException
-- a forked child cannot act under its parent's chosen owner
child refused: true
bool(true)
