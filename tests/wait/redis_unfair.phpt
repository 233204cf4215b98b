--TEST--
Redis: fair => false (option or DSN query) is accepted and waits unordered, still woken by the release
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard(100);

$dir = lock_test_tmpdir();
$port = lock_test_redis_port();

echo "-- accepted\n";
$prefix = lock_test_prefix();
$stores = [
    'option false' => new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix, 'fair' => false]),
    'option true' => new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix, 'fair' => true]),
    'query 0' => new Lock\Store\RedisStore(lock_test_redis_dsn('fair=0&prefix=' . urlencode($prefix))),
    'query false' => new Lock\Store\RedisStore(lock_test_redis_dsn('fair=false&prefix=' . urlencode($prefix))),
    'fromDsn' => Lock\Factory::fromDsn(lock_test_redis_dsn('fair=0&prefix=' . urlencode($prefix)))->getStore(),
];
$resource = lock_test_resource('unfair');
foreach ($stores as $name => $store) {
    $lock = new Lock\Lock($resource, $store);
    echo "$name: ", var_export($lock->acquire(true, 5.0), true);
    $lock->release();
    echo ', free again: ', var_export(!$store->isLocked($resource), true), "\n";
}

echo "-- wrong values\n";
lock_test_expect_throw(fn () => new Lock\Store\RedisStore(lock_test_redis_dsn(), ['fair' => 'no']));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore(lock_test_redis_dsn('fair=maybe')));

echo "-- a blocked waiter is woken by the release, not by the TTL\n";
foreach (['option' => 'redis-unfair', 'query' => 'query'] as $how => $kind) {
    $prefix = lock_test_prefix();
    $resource = lock_test_resource('unfair-wake');
    $redis = new LockWaitRedis($prefix, $resource);
    $storeCode = $kind === 'query'
        ? 'new Lock\Store\RedisStore(' . var_export(lock_test_redis_dsn('fair=0&prefix=' . urlencode($prefix)), true) . ')'
        : lock_wait_store_code($kind, $dir, $prefix);
    // The holder's TTL is far beyond the hang guard: only its release can let the waiter in.
    $holder = lock_test_holder($storeCode, $resource, 3600.0);
    [$waiter] = lock_wait_start_waiter('redis-unfair', $storeCode, $resource, 'waiter', $redis, 0, ['hold' => true]);
    $holder->send('release');
    $holder->waitFor('released');
    $waiter->waitFor('acquired');
    echo "$how: the waiter got it\n";
    $waiter->send('release');
    $waiter->waitFor('released');
    $waiter->wait();
    $holder->wait();
    echo "$how: Redis keys that stay: ", $redis->describeKeys(), "\n";
}
?>
--EXPECT--
-- accepted
option false: true, free again: true
option true: true, free again: true
query 0: true, free again: true
query false: true, free again: true
fromDsn: true, free again: true
-- wrong values
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "fair" must be of type bool, string given
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "fair" must be 0, 1, true or false
-- a blocked waiter is woken by the release, not by the TTL
option: the waiter got it
option: Redis keys that stay: none
query: the waiter got it
query: Redis keys that stay: none
