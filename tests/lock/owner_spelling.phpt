--TEST--
Two lock objects with one owner conflict when their DSNs spell one server differently (127.0.0.1, localhost), on Redis, memcached and the MySQL and PostgreSQL table holds, and only then
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/redis.inc';
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/memcached.inc';

$port = (int) lock_test_env('LOCK_TEST_REDIS_PORT');
$prefix = lock_test_prefix();
$byAddress = new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['prefix' => $prefix]);
$byName = new Lock\Store\RedisStore("redis://localhost:$port", ['prefix' => $prefix]);

echo "-- one server, two spellings\n";
$resource = lock_test_resource('spelling');
$first = new Lock\Lock($resource, $byAddress, 30.0, true, 'job-7');
$second = new Lock\Lock($resource, $byName, 30.0, true, 'job-7');
var_dump($first->acquire());
var_dump($second->acquire());
var_dump($second->acquireRead());
try {
    $second->acquire(true, 1.0);
    echo "blocking: acquired\n";
} catch (Lock\LockException $e) {
    echo 'blocking: ', get_class($e), str_contains($e->getMessage(), 'same owner') ? ' (same owner)' : ': ' . $e->getMessage(), "\n";
}
var_dump($first->isAcquired());
$first->release();
var_dump($byName->isLocked($resource));
var_dump($second->acquire());
$second->release();

echo "-- the same spellings, another database or prefix: other names, no conflict\n";
$resource = lock_test_resource('spelling');
$a = new Lock\Lock($resource, new Lock\Store\RedisStore("redis://127.0.0.1:$port/0", ['prefix' => $prefix]), 30.0, true, 'job-7');
$b = new Lock\Lock($resource, new Lock\Store\RedisStore("redis://localhost:$port/1", ['prefix' => $prefix]), 30.0, true, 'job-7');
$c = new Lock\Lock($resource, new Lock\Store\RedisStore("redis://localhost:$port/0", ['prefix' => lock_test_prefix()]), 30.0, true, 'job-7');
var_dump($a->acquire(), $b->acquire(), $c->acquire());
$a->release();
$b->release();
$c->release();

echo "-- another server, one owner: no conflict\n";
$other = new LockTestRedisServer();
$resource = lock_test_resource('spelling');
$here = new Lock\Lock($resource, $byAddress, 30.0, true, 'job-7');
$there = new Lock\Lock($resource, new Lock\Store\RedisStore('redis://localhost:' . parse_url($other->dsn(), PHP_URL_PORT), ['prefix' => $prefix]), 30.0, true, 'job-7');
var_dump($here->acquire(), $there->acquire(), $there->acquire(true, 1.0));
$here->release();
$there->release();

echo "-- MySQL table holds: one server, two spellings\n";
[$host, $myPort, $user, $password, $db] = lock_test_mysql_parts();
$credentials = rawurlencode($user) . ($password !== null && $password !== '' ? ':' . rawurlencode($password) : '');
$resource = lock_test_resource('spelling');
$first = new Lock\Lock($resource, new Lock\Store\MysqlStore("mysql://$credentials@127.0.0.1:$myPort/$db",
    ['prefix' => $prefix, 'holds' => 'table']), 30.0, true, 'job-7');
$second = new Lock\Lock($resource, new Lock\Store\MysqlStore("mysql://$credentials@localhost:$myPort/$db",
    ['prefix' => $prefix, 'holds' => 'table']), 30.0, true, 'job-7');
var_dump($first->acquire(), $second->acquire());
try {
    $second->acquire(true, 1.0);
    echo "blocking: acquired\n";
} catch (Lock\LockException $e) {
    echo 'blocking: ', get_class($e), str_contains($e->getMessage(), 'same owner') ? ' (same owner)' : ': ' . $e->getMessage(), "\n";
}
var_dump($first->isAcquired());
$first->release();
var_dump($second->acquire());
$second->release();

echo "-- PostgreSQL table holds: one server, two spellings\n";
[$host, $pgPort, $user, $password, $db] = lock_test_pgsql_parts();
$credentials = rawurlencode($user) . ($password !== null && $password !== '' ? ':' . rawurlencode($password) : '');
$resource = lock_test_resource('spelling');
$first = new Lock\Lock($resource, new Lock\Store\PostgresStore("pgsql://$credentials@127.0.0.1:$pgPort/$db",
    ['prefix' => $prefix, 'holds' => 'table']), 30.0, true, 'job-7');
$second = new Lock\Lock($resource, new Lock\Store\PostgresStore("pgsql://$credentials@localhost:$pgPort/$db",
    ['prefix' => $prefix, 'holds' => 'table']), 30.0, true, 'job-7');
var_dump($first->acquire(), $second->acquire());
try {
    $second->acquire(true, 1.0);
    echo "blocking: acquired\n";
} catch (Lock\LockException $e) {
    echo 'blocking: ', get_class($e), str_contains($e->getMessage(), 'same owner') ? ' (same owner)' : ': ' . $e->getMessage(), "\n";
}
$first->release();
var_dump($second->acquire());
$second->release();

echo "-- memcached, one server: two spellings\n";
$mcPort = lock_test_env('LOCK_TEST_MEMCACHED_PORT');
$resource = lock_test_resource('spelling');
$first = new Lock\Lock($resource, new Lock\Store\MemcachedStore("memcached://127.0.0.1:$mcPort", ['prefix' => $prefix]), 30.0, true, 'job-7');
$second = new Lock\Lock($resource, new Lock\Store\MemcachedStore("memcached://localhost:$mcPort", ['prefix' => $prefix]), 30.0, true, 'job-7');
var_dump($first->acquire(), $second->acquire());
try {
    $second->acquire(true, 1.0);
    echo "blocking: acquired\n";
} catch (Lock\LockException $e) {
    echo 'blocking: ', get_class($e), str_contains($e->getMessage(), 'same owner') ? ' (same owner)' : ': ' . $e->getMessage(), "\n";
}
$first->release();
var_dump($second->acquire());
$second->release();
?>
--EXPECT--
-- one server, two spellings
bool(true)
bool(false)
bool(false)
blocking: Lock\LockException (same owner)
bool(true)
bool(false)
bool(true)
-- the same spellings, another database or prefix: other names, no conflict
bool(true)
bool(true)
bool(true)
-- another server, one owner: no conflict
bool(true)
bool(true)
bool(true)
-- MySQL table holds: one server, two spellings
bool(true)
bool(false)
blocking: Lock\LockException (same owner)
bool(true)
bool(true)
-- PostgreSQL table holds: one server, two spellings
bool(true)
bool(false)
blocking: Lock\LockException (same owner)
bool(true)
-- memcached, one server: two spellings
bool(true)
bool(false)
blocking: Lock\LockException (same owner)
bool(true)
