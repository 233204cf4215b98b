--TEST--
memcached: MemcachedStore is a final Lock\Store, not cloneable or serializable; phpinfo() says it is built, with libmemcached's version; var_dump() shows nothing of the DSN
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

$r = new ReflectionClass(Lock\Store\MemcachedStore::class);
var_dump($r->isFinal(), $r->implementsInterface(Lock\Store::class));
$store = lock_test_store('memcached');
try {
    clone $store;
} catch (Error $e) {
    echo get_class($e), "\n";
}
try {
    serialize($store);
} catch (Exception $e) {
    echo get_class($e), "\n";
}
var_dump($store);
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
var_dump(preg_match('/^Stores => .*\bMemcachedStore\b/m', $info) === 1);
var_dump(preg_match('/^libmemcached version => \d+\.\d+\.\d+$/m', $info) === 1);
?>
--EXPECTF--
bool(true)
bool(true)
Error
Exception
object(Lock\Store\MemcachedStore)#%d (0) {
}
bool(true)
bool(true)
