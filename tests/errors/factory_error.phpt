--TEST--
Factory: bad default TTL, resource and TTL arguments are a ValueError naming the argument
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());
lock_test_expect_throw(fn () => new Lock\Factory($store, 0.0));
lock_test_expect_throw(fn () => new Lock\Factory($store, -3.0));
lock_test_expect_throw(fn () => new Lock\Factory($store, NAN));
lock_test_expect_throw(fn () => new Lock\Factory($store, INF));
$factory = new Lock\Factory($store);
lock_test_expect_throw(fn () => $factory->createLock(''));
lock_test_expect_throw(fn () => $factory->createLock(str_repeat('r', 65537)));
lock_test_expect_throw(fn () => $factory->createLock('r', 0.0));
lock_test_expect_throw(fn () => $factory->createLock('r', -1.0));
lock_test_expect_throw(fn () => $factory->createLock('r', NAN));
lock_test_expect_throw(fn () => $factory->createLock('r', INF));
lock_test_expect_throw(fn () => Lock\Factory::fromDsn("flock:\0"));
?>
--EXPECTF--
ValueError: Lock\Factory::__construct(): Argument #2 ($defaultTtl) must be greater than 0
ValueError: Lock\Factory::__construct(): Argument #2 ($defaultTtl) must be greater than 0
ValueError: Lock\Factory::__construct(): Argument #2 ($defaultTtl) must %s
ValueError: Lock\Factory::__construct(): Argument #2 ($defaultTtl) must %s
ValueError: Lock\Factory::createLock(): Argument #1 ($resource) must %s
ValueError: Lock\Factory::createLock(): Argument #1 ($resource) must %s
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must %s
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must %s
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) %s
