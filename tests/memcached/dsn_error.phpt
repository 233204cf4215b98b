--TEST--
memcached: every bad DSN and option is a ValueError or TypeError naming it (never quoting a password); good DSNs, host lists and Factory::fromDsn() work
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

function attempt(callable $fn): void
{
    try {
        $fn();
        echo "no exception\n";
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
        if (str_contains($e->getMessage(), 'sekret')) {
            echo "  (the message quotes the password)\n";
        }
    }
}

echo "-- DSNs\n";
foreach ([
    'memcached://',
    'memcached:',
    'memcached://user:sekret@127.0.0.1',
    'memcached://:sekret@127.0.0.1',
    'memcached://127.0.0.1:0',
    'memcached://127.0.0.1:99999',
    'memcached://h1:11211,,h2:11211',
    'memcached://h1:11211,h2:port',
    'memcached://h1:11211,h1:11211',
    'memcached://h1,h2:1:2',
    'memcached://h1:11211,[::1',
    'memcached://127.0.0.1/0',
    'memcached://127.0.0.1?nope=1',
    'memcached://127.0.0.1?timeout=abc',
    'memcached://127.0.0.1?timeout=0',
    'memcached://127.0.0.1?timeout=-1',
    'memcached://127.0.0.1?persistent=maybe',
    'memcached://127.0.0.1?prefix=a%20b',
    'memcached://127.0.0.1?prefix=' . str_repeat('p', 129),
    'redis://127.0.0.1',
] as $dsn) {
    attempt(fn () => new Lock\Store\MemcachedStore($dsn));
}

echo "-- options\n";
foreach ([
    ['nope' => 1],
    [0 => 1],
    ['prefix' => 1],
    ['prefix' => "a\nb"],
    ['prefix' => str_repeat('p', 129)],
    ['timeout' => 'soon'],
    ['timeout' => -1.0],
    ['timeout' => 0],
    ['timeout' => NAN],
    ['timeout' => INF],
    ['persistent' => 1],
] as $options) {
    attempt(fn () => new Lock\Store\MemcachedStore('memcached://127.0.0.1:11211', $options));
}

echo "-- resources\n";
$store = lock_test_store('memcached');
attempt(fn () => $store->isLocked(''));
attempt(fn () => $store->forceRelease(str_repeat('x', 65537)));
attempt(fn () => $store->waitUntilFree('x', -1.0));
attempt(fn () => new Lock\Lock('', $store));

echo "-- Factory::fromDsn\n";
attempt(fn () => Lock\Factory::fromDsn('memcached://user:sekret@127.0.0.1'));
attempt(fn () => Lock\Factory::fromDsn('memcached://127.0.0.1?nope=1'));
$port = lock_test_memcached_port();
$port2 = lock_test_memcached_port(2);
$factory = Lock\Factory::fromDsn("memcached://127.0.0.1:$port,127.0.0.1:$port2?prefix=" . urlencode(lock_test_prefix()) . '&timeout=0.5&persistent=1');
echo get_class($factory->getStore()), "\n";
$lock = $factory->createLock('fromdsn');
var_dump($lock->acquire(), $factory->getStore()->isLocked('fromdsn'));
$lock->release();
// The default port, a single IPv6 host and an IPv6 host in a list parse.
foreach (['memcached://127.0.0.1', 'memcached://[::1]', 'memcached://[::1]:11211', 'memcached://[::1]:11211,127.0.0.1', 'memcached://127.0.0.1:11211/'] as $dsn) {
    attempt(fn () => var_dump(new Lock\Store\MemcachedStore($dsn) instanceof Lock\Store));
}
?>
--EXPECT--
-- DSNs
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must name at least one server, as memcached://host:11211
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must name at least one server, as memcached://host:11211
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must not carry credentials: memcached's text protocol has no authentication
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must not carry credentials: memcached's text protocol has no authentication
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) is not a valid DSN: memcached DSN has an invalid port at offset 22: expected a number from 1 to 65535
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) is not a valid DSN: memcached DSN has an invalid port at offset 22: expected a number from 1 to 65535
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) has an empty server in its list (server 2)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) has an invalid port (server 2): expected a number from 1 to 65535
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) names the server h1:11211 twice
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) has more than one ':' in server 2: write an IPv6 address in brackets
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) has an invalid IPv6 address (server 2)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must not have a path (memcached has no databases)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be a number
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "persistent" must be 0, 1, true or false
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "prefix" must be printable ASCII without spaces (a memcached key)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) query parameter "prefix" must be at most 128 bytes long
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #1 ($dsn) must use the memcached: scheme, "redis" given
-- options
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) contains unknown option "nope"
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) must contain only string keys, 0 given
TypeError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "prefix" must be of type string, int given
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "prefix" must be printable ASCII without spaces (a memcached key)
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "prefix" must be at most 128 bytes long
TypeError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "timeout" must be of type float, string given
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "timeout" must be greater than 0
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "timeout" must be greater than 0
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
ValueError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
TypeError: Lock\Store\MemcachedStore::__construct(): Argument #2 ($options) option "persistent" must be of type bool, int given
-- resources
ValueError: Lock\Store\MemcachedStore::isLocked(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\MemcachedStore::forceRelease(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\MemcachedStore::waitUntilFree(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Lock::__construct(): Argument #1 ($resource) must be between 1 and 65536 bytes long
-- Factory::fromDsn
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must not carry credentials: memcached's text protocol has no authentication
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent)
Lock\Store\MemcachedStore
bool(true)
bool(true)
bool(true)
no exception
bool(true)
no exception
bool(true)
no exception
bool(true)
no exception
bool(true)
no exception
