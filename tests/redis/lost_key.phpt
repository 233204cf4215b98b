--TEST--
redis: the server lost our key (FLUSHALL, restart): release() throws ExpiredException and the next acquire works
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

// A private server: FLUSHALL on the shared one would break other tests.
$server = new LockTestRedisServer();
$store = new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'p:']);
$lock = new Lock\Lock('job', $store);

echo "-- FLUSHALL\n";
var_dump($lock->acquire());
$server->client()->ok('FLUSHALL');
var_dump($store->isLocked('job'));
var_dump($lock->isAcquired());
try {
    $lock->release();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
var_dump($lock->acquire());
var_dump($store->isLocked('job'));
$server->client()->ok('FLUSHALL');
try {
    $lock->refresh();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
var_dump($lock->acquire());
$lock->release();

echo "-- restart\n";
var_dump($lock->acquire());
$server->restart();
try {
    $lock->release();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
var_dump($lock->acquire());
var_dump($store->isLocked('job'));
$lock->release();
var_dump($store->isLocked('job'));

echo "-- the server's script cache was flushed\n";
var_dump($lock->acquire());
$server->client()->ok('SCRIPT', 'FLUSH');
$lock->refresh();
var_dump($lock->isAcquired());
$lock->release();
var_dump($store->isLocked('job'));
?>
--EXPECT--
-- FLUSHALL
bool(true)
bool(false)
bool(false)
Lock\ExpiredException
bool(true)
bool(true)
Lock\ExpiredException
bool(true)
-- restart
bool(true)
Lock\ExpiredException
bool(true)
bool(true)
bool(false)
-- the server's script cache was flushed
bool(true)
bool(true)
bool(false)
