--TEST--
Two Lock objects on the same resource conflict, even in one process, on every store
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = lock_test_resource();
    $a = new Lock\Lock($resource, $store);
    $b = new Lock\Lock($resource, $store);
    $other = new Lock\Lock(lock_test_resource(), $store);
    var_dump($a->acquire());
    var_dump($b->acquire());
    var_dump($b->acquire(true, 0.05));
    var_dump($b->isAcquired());
    // A different resource is independent.
    var_dump($other->acquire());
    // Releasing b (not held) does not release a.
    $b->release();
    var_dump($a->isAcquired());
    $a->release();
    var_dump($b->acquire());
    var_dump($a->acquire());
    $b->release();
    $other->release();
});

echo "== two store objects on one backend and namespace conflict too; another namespace is independent\n";
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $dir = lock_test_tmpdir();
    $prefix = lock_test_prefix();
    $resource = lock_test_resource();
    $a = new Lock\Lock($resource, lock_test_store($kind, $dir, $prefix));
    $b = new Lock\Lock($resource, lock_test_store($kind, $dir, $prefix));
    var_dump($a->acquire(), $b->acquire());
    // Another directory (flock) or prefix (the servers) is another namespace; System V has one.
    if ($kind === 'semaphore') {
        echo "one namespace\n";
        return;
    }
    $c = new Lock\Lock($resource, lock_test_store($kind, lock_test_tmpdir(), lock_test_prefix()));
    var_dump($c->acquire());
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
== two store objects on one backend and namespace conflict too; another namespace is independent
-- flock, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(false)
bool(true)
-- semaphore
bool(true)
bool(false)
one namespace
