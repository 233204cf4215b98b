--TEST--
Stores: unknown option keys are a ValueError, wrong option types a TypeError; bad resources a ValueError
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$dir = lock_test_tmpdir();
$dsn = lock_test_redis_dsn();
echo "-- options\n";
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['nope' => 1]));
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['mode' => '0600']));
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, [0600]));
lock_test_expect_throw(fn () => new Lock\Store\SemaphoreStore(['nope' => 1]));
lock_test_expect_throw(fn () => new Lock\Store\SemaphoreStore(['mode' => 1.5]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['nope' => 1]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['prefix' => 1]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['timeout' => 'soon']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['persistent' => 'yes']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['database' => 'one']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['password' => 123]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['username' => []]));
// A bad value names the option it belongs to.
echo "-- option values\n";
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['timeout' => -1.0]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['timeout' => NAN]));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore($dsn, ['database' => -1]));
lock_test_expect_throw(fn () => new Lock\Store\FlockStore($dir, ['mode' => -1]));
echo "-- dsn\n";
lock_test_expect_throw(fn () => new Lock\Store\RedisStore('flock:'));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore('redis://127.0.0.1:99999'));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore('nonsense'));
echo "-- resources\n";
foreach ([new Lock\Store\FlockStore($dir), new Lock\Store\SemaphoreStore(), new Lock\Store\RedisStore($dsn)] as $store) {
    lock_test_expect_throw(fn () => $store->isLocked(''));
    lock_test_expect_throw(fn () => $store->forceRelease(str_repeat('x', 65537)));
}
?>
--EXPECTF--
-- options
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) %snope%s
TypeError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) %smode%s
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) %s
ValueError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) %snope%s
TypeError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) %smode%s
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %snope%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %sprefix%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %stimeout%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %spersistent%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %sdatabase%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %spassword%s
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %susername%s
-- option values
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %stimeout%s
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %stimeout%s
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) %sdatabase%s
ValueError: Lock\Store\FlockStore::__construct(): Argument #2 ($options) %smode%s
-- dsn
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) %s
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) %s
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) %s
-- resources
ValueError: Lock\Store\FlockStore::isLocked(): Argument #1 ($resource) must %s
ValueError: Lock\Store\FlockStore::forceRelease(): Argument #1 ($resource) must %s
ValueError: Lock\Store\SemaphoreStore::isLocked(): Argument #1 ($resource) must %s
ValueError: Lock\Store\SemaphoreStore::forceRelease(): Argument #1 ($resource) must %s
ValueError: Lock\Store\RedisStore::isLocked(): Argument #1 ($resource) must %s
ValueError: Lock\Store\RedisStore::forceRelease(): Argument #1 ($resource) must %s
