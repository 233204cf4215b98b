--TEST--
memcached: a hold that outlived its TTL: ExpiredException when nobody holds it; when another owner took it, release() and refresh() say LostException and the other owner's hold stays (a release never deletes another owner's hold)
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$prefix = lock_test_prefix();
$store = lock_test_store('memcached', null, $prefix);
$port = lock_test_memcached_port();

/** Waits until the server dropped the lock's item (a TTL of 1 s lasts 1 to 3 s on memcached's clock). */
function expire(Lock\Lock $lock, Lock\Store $store): void
{
    $lock->refresh(1.0);
    lock_test_wait_until(fn () => !$store->isLocked($lock->getResource()), 30, 'the hold to expire');
}

echo "-- expired, nobody holds it\n";
$resource = lock_test_resource('expiring');
$a = new Lock\Lock($resource, $store, 300.0);
$a->acquire();
expire($a, $store);
var_dump($a->isAcquired(), $a->isExpired());
try {
    $a->release();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
$a->release();
var_dump($a->acquire());
expire($a, $store);
try {
    $a->refresh();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}

echo "-- lost: another owner took it\n";
$a = new Lock\Lock($resource, $store, 300.0, true, 'first-owner');
var_dump($a->acquire());
expire($a, $store);
$b = new Lock\Lock($resource, $store, 300.0, true, 'second-owner');
var_dump($b->acquire());
try {
    $a->refresh();
    echo "no exception\n";
} catch (Lock\LostException $e) {
    echo get_class($e), "\n";
}
$a2 = Lock\Factory::fromDsn('memcached://127.0.0.1:' . $port . '?prefix=' . urlencode($prefix))->restoreLock($resource, 'first-owner');
try {
    $a2->release();
    echo "no exception\n";
} catch (Lock\LostException $e) {
    echo get_class($e), "\n";
}
// The other owner's item is untouched: same value, still locked, still theirs.
var_dump(lock_test_memcached_get($port, lock_test_memcached_key($prefix, $resource)));
var_dump($store->isLocked($resource), $b->isAcquired());
$b->release();
var_dump($store->isLocked($resource));
?>
--EXPECT--
-- expired, nobody holds it
bool(false)
bool(true)
Lock\ExpiredException
bool(true)
Lock\ExpiredException
-- lost: another owner took it
bool(true)
bool(true)
Lock\LostException
Lock\LostException
string(13) "osecond-owner"
bool(true)
bool(true)
bool(false)
