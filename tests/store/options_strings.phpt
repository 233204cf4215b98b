--TEST--
Options that arrive as strings (Symfony's %env()%, a .env file) are taken where PHP would take them; other strings stay a TypeError
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$port = lock_test_env('LOCK_TEST_REDIS_PORT');
$dir = lock_test_tmpdir();

echo "-- numbers and booleans as strings\n";
$redis = new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['timeout' => '2.5', 'persistent' => 'false', 'database' => '1',
    'fair' => 'true', 'replicas' => '0', 'replicas_timeout' => '0.5', 'prefix' => lock_test_prefix()]);
$lock = new Lock\Lock(lock_test_resource('strings'), $redis, 10.0);
var_dump($lock->acquire(), $lock->isAcquired());
$lock->release();
var_dump((new Lock\Store\FlockStore($dir, ['cache' => '8', 'mode' => '384']))->supports(Lock\Store::SHARED));
var_dump((new Lock\Store\SemaphoreStore(['cache' => '16']))->supports(Lock\Store::SHARED));
foreach (['1', 'true', '0', 'false', ''] as $bool) {
    new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['persistent' => $bool]);
}
echo "booleans: taken\n";

echo "-- a string for a timeout bounds the wait as the number would\n";
$start = hrtime(true);
try {
    (new Lock\Lock('r', new Lock\Store\RedisStore('redis://127.0.0.1:1', ['timeout' => '0.2'])))->acquire();
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
}
var_dump((hrtime(true) - $start) / 1e9 < 2.0);

echo "-- strings that are no value of the option's type\n";
foreach ([['timeout' => 'soon'], ['timeout' => '2.5s'], ['persistent' => 'yes'], ['database' => '1.5'], ['fair' => 'on']] as $options) {
    lock_test_expect_throw(fn () => new Lock\Store\RedisStore("redis://127.0.0.1:$port", $options));
}
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['cache' => '8 files']));
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['mode' => '0600']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['database' => '-1']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['timeout' => '0']));
?>
--EXPECT--
-- numbers and booleans as strings
bool(true)
bool(true)
bool(true)
bool(true)
booleans: taken
-- a string for a timeout bounds the wait as the number would
Lock\StorageException
bool(true)
-- strings that are no value of the option's type
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "timeout" must be of type float, string given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "timeout" must be of type float, string given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "persistent" must be of type bool, string given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "database" must be of type int, string given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "fair" must be of type bool, string given
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "cache" must be of type int, string given
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) option "mode" must be of type int, string given
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "database" must be a non-negative integer
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "timeout" must be greater than 0
