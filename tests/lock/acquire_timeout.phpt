--TEST--
acquire() on a lock another process holds: false at once, false after a timeout, and a timeout implies waiting
--EXTENSIONS--
lock
posix
pcntl
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();

$dir = lock_test_tmpdir();
$prefix = lock_test_prefix();
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind) use ($dir, $prefix): void {
    $resource = lock_test_resource();
    $holder = lock_test_holder(lock_test_store_code($kind, $dir, $prefix), $resource);
    $lock = new Lock\Lock($resource, lock_test_store($kind, $dir, $prefix));
    var_dump($lock->acquire());
    var_dump($lock->acquire(false));
    var_dump($lock->acquire(true, 0.2));
    var_dump($lock->acquire(timeout: 0.2));
    var_dump($lock->acquire(true, 0.0));
    var_dump($lock->isAcquired());
    // The holder lets go a moment after we start waiting: acquire(timeout:) must wait for it.
    $holder->send('sleep-release 1');
    var_dump($lock->acquire(timeout: 60.0));
    $holder->waitFor('released');
    var_dump($lock->isAcquired());
    $lock->release();
    $holder->wait();
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(false)
bool(false)
bool(false)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
