--TEST--
flock: the cache option bounds the idle lock files a store keeps open (0 to 65536)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
$dir = lock_test_tmpdir();
foreach ([-1, 65537, PHP_INT_MAX, '64 files', 1.5, null] as $bad) {
    lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['cache' => $bad]));
}
foreach ([0, 1, 64, 65536] as $good) {
    $store = new Lock\Store\FlockStore($dir, ['cache' => $good, 'mode' => 0600]);
    $lock = new Lock\Lock(lock_test_resource(), $store);
    var_dump($lock->acquire());
    $lock->release();
}
?>
--EXPECT--
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be between 0 and 65536
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be between 0 and 65536
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be between 0 and 65536
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be of type int, string given
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be of type int, float given
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be of type int, null given
bool(true)
bool(true)
bool(true)
bool(true)
