--TEST--
redis: persistent=1 keeps the connection for the next store of the process; without it a store's connection closes with it
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

// A private server: counting connections needs a server nobody else talks to.
$server = new LockTestRedisServer();
$redis = $server->client();

/** Makes a store, uses it, drops it. */
function use_store(string $dsn): void
{
    $store = new Lock\Store\RedisStore($dsn);
    $lock = new Lock\Lock('r', $store);
    $lock->acquire();
    $lock->release();
}

echo "-- persistent\n";
use_store($server->dsn('persistent=1&prefix=p:'));
$first = $redis->otherClientIds();
var_dump(count($first));
for ($i = 0; $i < 5; $i++) {
    use_store($server->dsn('persistent=1&prefix=p:'));
}
var_dump($redis->otherClientIds() === $first);
// The option form shares the same connection.
$store = new Lock\Store\RedisStore($server->dsn(), ['persistent' => true, 'prefix' => 'p:']);
$store->isLocked('r');
var_dump($redis->otherClientIds() === $first);
unset($store);

// A pooled connection that the server dropped is replaced, not reported.
$redis->ok('CLIENT', 'KILL', 'ID', (string) $first[0]);
lock_test_wait_until(fn () => $redis->otherClientIds() === [], 30, 'the connection to close');
use_store($server->dsn('persistent=1&prefix=p:'));
var_dump(count($redis->otherClientIds()));

echo "-- not persistent\n";
$server->restart();
$redis = $server->client();
use_store($server->dsn('prefix=n:'));
lock_test_wait_until(fn () => $redis->otherClientIds() === [], 30, 'the connection to close');
echo "closed with its store\n";
$store = new Lock\Store\RedisStore($server->dsn('prefix=n:'));
$store->isLocked('r');
var_dump(count($redis->otherClientIds()));
$store2 = new Lock\Store\RedisStore($server->dsn('prefix=n:'));
$store2->isLocked('r');
var_dump(count($redis->otherClientIds()));
unset($store, $store2);
lock_test_wait_until(fn () => $redis->otherClientIds() === [], 30, 'the connections to close');
echo "closed with their stores\n";
?>
--EXPECT--
-- persistent
int(1)
bool(true)
bool(true)
int(1)
-- not persistent
closed with its store
int(1)
int(2)
closed with their stores
