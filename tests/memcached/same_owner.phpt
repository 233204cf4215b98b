--TEST--
memcached: stores listing the same servers in any order under one prefix are one namespace: a second lock object with the same chosen owner conflicts, and waiting for it throws instead of waiting for itself
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

$p1 = lock_test_memcached_port();
$p2 = lock_test_memcached_port(2);
$prefix = urlencode(lock_test_prefix());
$a = new Lock\Store\MemcachedStore("memcached://127.0.0.1:$p1,127.0.0.1:$p2?prefix=$prefix");
$b = new Lock\Store\MemcachedStore("memcached://127.0.0.1:$p2,127.0.0.1:$p1?prefix=$prefix");
$first = new Lock\Lock('same', $a, 30.0, true, 'the-owner');
$second = new Lock\Lock('same', $b, 30.0, true, 'the-owner');
var_dump($first->acquire(), $second->acquire());
$t = microtime(true);
try {
    $second->acquire(true, 5.0);
    echo "no exception\n";
} catch (Lock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
echo 'at once: ', var_export(microtime(true) - $t < 1.0, true), "\n";
$first->release();
var_dump($second->acquire(true, 5.0));
$second->release();
?>
--EXPECTF--
bool(true)
bool(false)
Lock\LockException: %Sanother lock object of this process holds it under the same owner; waiting for it would never end
at once: true
bool(true)
