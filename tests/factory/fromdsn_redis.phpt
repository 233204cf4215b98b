--TEST--
Factory::fromDsn() with redis://host:port, /db, ?prefix=&timeout=&persistent=
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

$port = lock_test_redis_port();
$redis = new LockTestResp($port);
$prefix = lock_test_prefix();

$factory = Lock\Factory::fromDsn("redis://127.0.0.1:$port?prefix=" . urlencode($prefix));
var_dump(get_class($factory->getStore()));
$lock = $factory->createLock('r');
var_dump($lock->acquire());
// The key is in database 0, under the prefix.
$keys = $redis->keys($prefix);
var_dump(count($keys) >= 1);
$lock->release();
var_dump($factory->getStore()->isLocked('r'));

// localhost and the other options.
$factory = Lock\Factory::fromDsn("redis://localhost:$port?prefix=" . urlencode($prefix) . '&timeout=2.5&persistent=1');
$lock = $factory->createLock('r');
var_dump($lock->acquire());
$lock->release();
$factory = Lock\Factory::fromDsn("redis://127.0.0.1:$port?persistent=0&timeout=1&prefix=" . urlencode($prefix));
var_dump($factory->createLock('r')->acquire());

// /db selects a database: the key is there, not in 0.
$prefix = lock_test_prefix();
$factory = Lock\Factory::fromDsn("redis://127.0.0.1:$port/3?prefix=" . urlencode($prefix));
$lock = $factory->createLock('in-db-3');
var_dump($lock->acquire());
var_dump($redis->keys($prefix));
$redis->ok('SELECT', 3);
var_dump(count($redis->keys($prefix)) >= 1);
$lock->release();
$redis->ok('SELECT', 0);

// An explicit empty path and a trailing slash mean database 0.
$prefix = lock_test_prefix();
$lock = Lock\Factory::fromDsn("redis://127.0.0.1:$port/?prefix=" . urlencode($prefix))->createLock('r');
var_dump($lock->acquire());
var_dump(count($redis->keys($prefix)) >= 1);
$lock->release();
?>
--EXPECT--
string(21) "Lock\Store\RedisStore"
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
array(0) {
}
bool(true)
bool(true)
bool(true)
