--TEST--
Factory: constructor, createLock() with the factory's default TTL, getStore()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());

$factory = new Lock\Factory($store);
var_dump($factory->getStore() === $store);
$lock = $factory->createLock('a');
var_dump($lock instanceof Lock\Lock);
var_dump($lock->getResource());
var_dump($lock->getTtl());

$factory = new Lock\Factory($store, 12.5);
var_dump($factory->createLock('a')->getTtl());
// An explicit TTL wins, null included.
var_dump($factory->createLock('a', 3.0)->getTtl());
var_dump($factory->createLock('a', null)->getTtl());
var_dump($factory->createLock('a', ttl: null)->getTtl());

$factory = new Lock\Factory($store, null);
var_dump($factory->createLock('a')->getTtl());
var_dump($factory->createLock('a', 7)->getTtl());

// Locks of one factory conflict with each other; the store outlives the factory.
$factory = new Lock\Factory($store);
$a = $factory->createLock('shared');
$b = $factory->createLock('shared');
var_dump($a->acquire(), $b->acquire());
unset($factory);
$a->release();
var_dump($b->acquire());

// autoRelease=false is passed on (on Redis it keeps the hold past the object).
$redis = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => lock_test_prefix()]);
$factory = new Lock\Factory($redis);
$kept = $factory->createLock('kept', 60.0, false);
$kept->acquire();
unset($kept);
var_dump($redis->isLocked('kept'));
$redis->forceRelease('kept');
$dropped = $factory->createLock('dropped', 60.0);
$dropped->acquire();
unset($dropped);
var_dump($redis->isLocked('dropped'));
var_dump($factory->getStore() === $redis);
?>
--EXPECT--
bool(true)
bool(true)
string(1) "a"
float(300)
float(12.5)
float(3)
NULL
NULL
NULL
float(7)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
