--TEST--
new Lock\Lock(): bad resource and TTL arguments are a ValueError naming the argument
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());
lock_test_expect_throw(fn () => new Lock\Lock('', $store));
lock_test_expect_throw(fn () => new Lock\Lock(str_repeat('x', 65537), $store));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, 0.0));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, 0));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, -1.0));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, -INF));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, NAN));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, INF));
lock_test_expect_throw(fn () => new Lock\Lock('r', new stdClass()));
lock_test_expect_throw(fn () => new Lock\Lock('r', $store, 'soon'));

// The edges that are fine: 1 byte, 64 KiB, a tiny TTL.
var_dump(strlen((new Lock\Lock('x', $store))->getResource()));
$big = new Lock\Lock(str_repeat('x', 65536), $store);
var_dump(strlen($big->getResource()));
var_dump($big->acquire());
$big->release();
var_dump((new Lock\Lock('r', $store, 0.001))->getTtl() > 0);
?>
--EXPECTF--
ValueError: Lock\Lock::__construct(): Argument #1 ($resource) must %s
ValueError: Lock\Lock::__construct(): Argument #1 ($resource) must %s
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must be greater than 0
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must be greater than 0
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must %s
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must %s
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must %s
ValueError: Lock\Lock::__construct(): Argument #3 ($ttl) must %s
TypeError: Lock\Lock::__construct(): Argument #2 ($store) must be of type Lock\Store, stdClass given
TypeError: Lock\Lock::__construct(): Argument #3 ($ttl) must be of type ?float, string given
int(1)
int(65536)
bool(true)
bool(true)
