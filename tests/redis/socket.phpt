--TEST--
redis: a unix socket DSN (redis:///path) works; a missing socket is a StorageException naming the path
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$dir = lock_test_tmpdir('sock');
$socket = $dir . '/redis.sock';
$server = new LockTestRedisServer(['--unixsocket', $socket, '--unixsocketperm', '700']);
lock_test_wait_until(fn () => file_exists($socket), 30, 'the socket');

$store = new Lock\Store\RedisStore('redis://' . $socket, ['prefix' => 'p:']);
$lock = new Lock\Lock('r', $store);
var_dump($lock->acquire());
// The same hold, seen over TCP.
$tcp = new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'p:']);
var_dump($tcp->isLocked('r'));
$lock->release();
var_dump($tcp->isLocked('r'));

// Query options apply to sockets too, and Factory::fromDsn knows the form.
$factory = Lock\Factory::fromDsn('redis://' . $socket . '?prefix=q:&timeout=2');
$lock = $factory->createLock('r');
var_dump($lock->acquire());
var_dump((new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'q:']))->isLocked('r'));
$lock->release();

try {
    $missing = new Lock\Store\RedisStore('redis://' . $dir . '/nothing.sock');
    $missing->isLocked('r');
    echo "no exception\n";
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
    var_dump(str_contains($e->getMessage(), $dir . '/nothing.sock'));
}
?>
--EXPECT--
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
Lock\StorageException
bool(true)
