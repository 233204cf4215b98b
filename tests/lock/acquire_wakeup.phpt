--TEST--
A blocked acquire() is woken when the holder (another process) releases, on every store
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
    // A TTL far beyond the hang guard: on Redis, only the release can let us in.
    $holder = lock_test_holder(lock_test_store_code($kind, $dir, $prefix), $resource, 3600.0);
    $lock = new Lock\Lock($resource, lock_test_store($kind, $dir, $prefix));
    var_dump($lock->acquire());
    $holder->send('sleep-release 0.5');
    // Blocking without a timeout: waits as long as it takes.
    var_dump($lock->acquire(true));
    var_dump($lock->isAcquired());
    $holder->waitFor('released');
    $lock->release();

    // The other way round: the child waits, we release.
    $holder->send('exit');
    $holder->wait();
    $lock->acquire();
    $waiter = new LockTestChild('$store = ' . lock_test_store_code($kind, $dir, $prefix) . ";\n"
        . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store);' . "\n"
        . 'echo "waiting\n";' . "\n"
        . 'echo "got it: ", var_export($lock->acquire(true), true), "\n";' . "\n");
    $waiter->waitFor('waiting');
    usleep(300000);
    $lock->release();
    $waiter->waitFor('got it: true');
    $waiter->wait();
});
echo "done\n";
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(false)
bool(true)
bool(true)
done
