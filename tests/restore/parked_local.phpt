--TEST--
flock and semaphore: a hold without autoRelease outlives its lock object, restoreLock() adopts it in the same process only, and nothing else does
--EXTENSIONS--
lock
pcntl
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

foreach (['flock', 'semaphore'] as $kind) {
    echo "-- $kind\n";
    $dir = $kind === 'flock' ? lock_test_tmpdir('flock') : null;
    $store = lock_test_store($kind, $dir);
    $factory = new Lock\Factory($store, null);
    $resource = lock_test_resource('parked');
    $lock = $factory->createLock($resource, autoRelease: false);
    var_dump($lock->acquire());
    $owner = $lock->getOwner();
    unset($lock);
    echo 'held after the object is gone: ', var_export($store->isLocked($resource), true), "\n";
    [, $out] = lock_test_run_php('$lock = new Lock\Lock(' . var_export($resource, true) . ', '
        . lock_test_store_code($kind, $dir) . ", null);\n" . 'var_dump($lock->acquire());'
        . 'try { (new Lock\Factory(' . lock_test_store_code($kind, $dir) . '))->restoreLock('
        . var_export($resource, true) . ', ' . var_export($owner, true) . '); echo "restored\n"; }'
        . ' catch (Lock\LockException $e) { echo get_class($e), "\n"; }');
    echo 'another process: ', str_replace("\n", ' ', trim($out)), "\n";

    echo 'a wrong owner: ';
    lock_test_expect_throw(fn () => $factory->restoreLock($resource, 'not-the-owner'));
    if ($kind === 'flock') {
        echo 'another directory: ';
        lock_test_expect_throw(fn () => (new Lock\Factory(lock_test_store('flock')))->restoreLock($resource, $owner));
    }
    $pid = lock_test_fork(static function () use ($factory, $resource, $owner): int {
        try {
            $factory->restoreLock($resource, $owner);
            return 1;
        } catch (Lock\LockException $e) {
            return 0;
        }
    });
    echo 'a forked child cannot adopt it: ', var_export(lock_test_wait_pid($pid) === 0, true), "\n";
    echo 'still held: ', var_export($store->isLocked($resource), true), "\n";

    // The same directory spelt another way is the same store.
    $other = $kind === 'flock' ? new Lock\Store\FlockStore($dir . '/./') : new Lock\Store\SemaphoreStore();
    $restored = (new Lock\Factory($other, null))->restoreLock($resource, $owner);
    echo 'restored: ', var_export($restored->isAcquired(), true), ', owner kept: ', var_export($restored->getOwner() === $owner, true), "\n";
    echo 'only once: ';
    lock_test_expect_throw(fn () => $factory->restoreLock($resource, $owner));
    $restored->release();
    echo 'after release: ', var_export($store->isLocked($resource), true), "\n";

    // Left parked at the end of the script: the process end frees it (checked by the leak checks of valgrind runs).
    $last = $factory->createLock(lock_test_resource('parked'), autoRelease: false);
    $last->acquire();
}
?>
--EXPECTF--
-- flock
bool(true)
held after the object is gone: true
another process: bool(false) Lock\LockException
a wrong owner: Lock\LockException: The flock store binds a hold to the process that took it: %s
another directory: Lock\LockException: %s
a forked child cannot adopt it: true
still held: true
restored: true, owner kept: true
only once: Lock\LockException: %s
after release: false
-- semaphore
bool(true)
held after the object is gone: true
another process: bool(false) Lock\LockException
a wrong owner: Lock\LockException: The semaphore store binds a hold to the process that took it: %s
a forked child cannot adopt it: true
still held: true
restored: true, owner kept: true
only once: Lock\LockException: %s
after release: false
