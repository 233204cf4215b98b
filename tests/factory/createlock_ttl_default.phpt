--TEST--
Factory: $ttl = false is the factory's default TTL, so named arguments can skip it; bad TTL types and values
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());
$factory = new Lock\Factory($store, 42.0);

// Skipping $ttl with a named argument used to be an ArgumentCountError.
var_dump($factory->createLock('x', autoRelease: false)->getTtl());
var_dump($factory->createLock('x', false)->getTtl());
var_dump($factory->createLock('x', false, false)->getTtl());
var_dump($factory->createLock('x', null)->getTtl());
var_dump($factory->createLock('x', 2)->getTtl());
var_dump($factory->createLock('x', "1.5")->getTtl());

$redis = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => lock_test_prefix()]);
$rf = new Lock\Factory($redis, 9.0);
$a = $rf->createLock('r');
$a->acquire();
var_dump($rf->restoreLock('r', $a->getOwner(), autoRelease: false)->getTtl());
var_dump($rf->restoreLock('r', $a->getOwner(), false)->getTtl());
var_dump($rf->restoreLock('r', $a->getOwner(), null)->getTtl());
$a->release();

foreach ([true, 'soon', [], new stdClass(), 0.0, -1.0, NAN, INF] as $bad) {
    lock_test_expect_throw(fn () => $factory->createLock('x', $bad));
}
lock_test_expect_throw(fn () => $rf->restoreLock('r', str_repeat('a', 32), true));
?>
--EXPECT--
float(42)
float(42)
float(42)
NULL
float(2)
float(1.5)
float(9)
float(9)
NULL
TypeError: Lock\Factory::createLock(): Argument #2 ($ttl) must be of type float|false|null, bool given
TypeError: Lock\Factory::createLock(): Argument #2 ($ttl) must be of type float|false|null, string given
TypeError: Lock\Factory::createLock(): Argument #2 ($ttl) must be of type float|false|null, array given
TypeError: Lock\Factory::createLock(): Argument #2 ($ttl) must be of type float|false|null, stdClass given
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be a finite number
ValueError: Lock\Factory::createLock(): Argument #2 ($ttl) must be a finite number
TypeError: Lock\Factory::restoreLock(): Argument #3 ($ttl) must be of type float|false|null, bool given
