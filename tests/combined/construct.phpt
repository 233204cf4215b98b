--TEST--
combined: CombinedStore's constructor and redlock: DSNs refuse what cannot make a majority of independent Redis servers (empty, unknown strategy, not a store, a store that cannot expire, a store that is not Redis, one server twice), with a ValueError or TypeError that says why; supports() says expiring, shared and fencing
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

function attempt(string $what, callable $fn): void
{
    try {
        $fn();
        echo "$what: ok\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), ': ', $e->getMessage(), "\n";
    }
}

$r = fn (int $port, string $q = '') => new Lock\Store\RedisStore("redis://127.0.0.1:$port" . ($q !== '' ? "?$q" : ''));
$a = $r(7001);
$b = $r(7002);
$c = $r(7003);

attempt('three', fn () => new Lock\Store\CombinedStore([$a, $b, $c]));
attempt('unanimous', fn () => new Lock\Store\CombinedStore([$a, $b, $c], 'unanimous'));
attempt('one', fn () => new Lock\Store\CombinedStore([$a]));
attempt('keys kept', fn () => new Lock\Store\CombinedStore(['x' => $a, 'y' => $b, 'z' => $c]));
attempt('empty', fn () => new Lock\Store\CombinedStore([]));
attempt('strategy', fn () => new Lock\Store\CombinedStore([$a, $b, $c], 'majority'));
attempt('strategy NUL', fn () => new Lock\Store\CombinedStore([$a, $b, $c], "consensus\0x"));
attempt('not a store', fn () => new Lock\Store\CombinedStore([$a, 'redis://127.0.0.1:7004', $c]));
attempt('flock', fn () => new Lock\Store\CombinedStore([$a, new Lock\Store\FlockStore(sys_get_temp_dir()), $c]));
attempt('semaphore', fn () => new Lock\Store\CombinedStore([new Lock\Store\SemaphoreStore(), $b]));
if (class_exists(Lock\Store\PostgresStore::class)) {
    attempt('pgsql table', fn () => new Lock\Store\CombinedStore([$a, new Lock\Store\PostgresStore('pgsql://127.0.0.1/x', ['holds' => 'table']), $c]));
} else {
    echo "pgsql table: ValueError: Lock\\Store\\CombinedStore::__construct(): Argument #1 (\$stores) store 1 is a PostgreSQL store: a combined store is made of Redis stores\n";
}
attempt('same object', fn () => new Lock\Store\CombinedStore([$a, $b, $a]));
attempt('same server', fn () => new Lock\Store\CombinedStore([$a, $b, $r(7001, 'prefix=other')]));
attempt('localhost and its address', fn () => new Lock\Store\CombinedStore([$a, $b, new Lock\Store\RedisStore('redis://localhost:7002')]));
attempt('IPv6 loopback and localhost', fn () => new Lock\Store\CombinedStore([new Lock\Store\RedisStore('redis://[::1]:7001'), $b, new Lock\Store\RedisStore('redis://localhost:7001')]));
attempt('two loopback addresses', fn () => new Lock\Store\CombinedStore([$a, new Lock\Store\RedisStore('redis://127.0.0.2:7001'), $c]));
attempt('same server, other db', fn () => new Lock\Store\CombinedStore([$a, $b, new Lock\Store\RedisStore('redis://127.0.0.1:7002/3')]));
attempt('too many', fn () => new Lock\Store\CombinedStore(array_map($r, range(7001, 7017))));

$s = new Lock\Store\CombinedStore([$a, $b, $c]);
var_dump($s->supports(Lock\Store::EXPIRING), $s->supports(Lock\Store::SHARED), $s->supports(Lock\Store::FENCING),
    $s->supports(Lock\Store::PROCESS_BOUND));
attempt('clone', fn () => clone $s);
attempt('serialize', fn () => serialize($s));

echo "-- redlock:\n";
foreach ([
    'redlock://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003',
    'redlock://u:secret@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003/2?prefix=app&timeout=0.5&strategy=unanimous',
    'redlock://127.0.0.1:7001?strategy=consensus',
    'redlock://127.0.0.1:7001,127.0.0.1:7002?strategy=all',
    'redlock://127.0.0.1:7001,,127.0.0.1:7003',
    'redlock://127.0.0.1:7001,127.0.0.1:7002,',
    'redlock://',
    'redlock:///tmp/redis.sock',
    'redlock://127.0.0.1:7001,127.0.0.1:7001',
    'redlock://127.0.0.1:7001,127.0.0.1:7002?color=blue',
    'redlock://127.0.0.1:7001,127.0.0.1:99999',
] as $dsn) {
    attempt($dsn, function () use ($dsn) {
        $store = Lock\Factory::fromDsn($dsn)->getStore();
        echo get_class($store), ' ';
    });
}
?>
--EXPECT--
three: ok
unanimous: ok
one: ok
keys kept: ok
empty: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) must not be empty
strategy: ValueError: Lock\Store\CombinedStore::__construct(): Argument #2 ($strategy) must be "consensus" or "unanimous"
strategy NUL: ValueError: Lock\Store\CombinedStore::__construct(): Argument #2 ($strategy) must be "consensus" or "unanimous"
not a store: TypeError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) must hold Lock\Store objects, string given
flock: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) store 1 cannot expire (flock): a combined store's holds must expire on every server
semaphore: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) store 0 cannot expire (semaphore): a combined store's holds must expire on every server
pgsql table: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) store 1 is a PostgreSQL store: a combined store is made of Redis stores
same object: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) stores 0 and 2 reach the same Redis server (127.0.0.1:7001): a majority must be of independent servers
same server: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) stores 0 and 2 reach the same Redis server (127.0.0.1:7001): a majority must be of independent servers
localhost and its address: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) stores 1 and 2 reach the same Redis server (localhost:7002): a majority must be of independent servers
IPv6 loopback and localhost: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) stores 0 and 2 reach the same Redis server (localhost:7001): a majority must be of independent servers
two loopback addresses: ok
same server, other db: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) stores 1 and 2 reach the same Redis server (127.0.0.1:7002): a majority must be of independent servers
too many: ValueError: Lock\Store\CombinedStore::__construct(): Argument #1 ($stores) must hold at most 16 stores
bool(true)
bool(true)
bool(true)
bool(false)
clone: Error: Trying to clone an uncloneable object of class Lock\Store\CombinedStore
serialize: Exception: Serialization of 'Lock\Store\CombinedStore' is not allowed
-- redlock:
Lock\Store\CombinedStore redlock://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003: ok
Lock\Store\CombinedStore redlock://u:secret@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003/2?prefix=app&timeout=0.5&strategy=unanimous: ok
Lock\Store\CombinedStore redlock://127.0.0.1:7001?strategy=consensus: ok
redlock://127.0.0.1:7001,127.0.0.1:7002?strategy=all: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must be "consensus" or "unanimous"
redlock://127.0.0.1:7001,,127.0.0.1:7003: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has an empty host in its list
redlock://127.0.0.1:7001,127.0.0.1:7002,: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has an empty host in its list
redlock://: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must name the Redis servers: redlock://host1,host2,host3
redlock:///tmp/redis.sock: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must name the Redis servers: redlock://host1,host2,host3
redlock://127.0.0.1:7001,127.0.0.1:7001: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) stores 0 and 1 reach the same Redis server (127.0.0.1:7001): a majority must be of independent servers
redlock://127.0.0.1:7001,127.0.0.1:7002?color=blue: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown query parameter "color" (known: prefix, timeout, persistent, username, password, database, fair, tls_ca_file, tls_ca_dir, tls_cert, tls_key, tls_server_name, tls_verify, sentinel_username, sentinel_password, replicas, replicas_timeout)
redlock://127.0.0.1:7001,127.0.0.1:99999: ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis DSN has an invalid port at offset 18: expected a number from 1 to 65535
