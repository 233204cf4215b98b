--TEST--
pgsql table mode: bad options (holds, table, a table without table mode) are ValueError or TypeError naming the argument; a server that is down or silent is a Lock\StorageException within the timeout, never showing the password
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/redis.inc';

$ok = lock_test_pgsql_dsn();
$try = static function (callable $fn): void {
    try {
        $fn();
        echo "no exception\n";
    } catch (Throwable $e) {
        lock_test_print_exception($e);
    }
};

echo "-- holds\n";
foreach (['x', 'Table', '', 'sessions'] as $holds) {
    $try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => $holds]));
}
$try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => 1]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => null]));
$try(fn () => new Lock\Store\PostgresStore($ok . '?holds=x'));
$try(fn () => Lock\Factory::fromDsn($ok . '?holds=rows'));

echo "-- table\n";
foreach (['', '1holds', 'a b', 'a.b.c', '.a', 'a.', '"a"', 'a;drop table x', 'a-b', "a\0b", 'ä', str_repeat('t', 64),
    str_repeat('s', 64) . '.t'] as $table) {
    $try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => 'table', 'table' => $table]));
}
$try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => 'table', 'table' => ['x']]));
$try(fn () => new Lock\Store\PostgresStore($ok . '?holds=table&table=a%20b'));
foreach (['_x', 'x$1', 'Schema_1.t_2', str_repeat('t', 63), str_repeat('s', 63) . '.' . str_repeat('t', 63)] as $table) {
    $try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => 'table', 'table' => $table]));
}

echo "-- a table without table mode\n";
$try(fn () => new Lock\Store\PostgresStore($ok, ['table' => 'x']));
$try(fn () => new Lock\Store\PostgresStore($ok, ['holds' => 'session', 'table' => 'x']));
$try(fn () => new Lock\Store\PostgresStore($ok . '?table=x'));

echo "-- a server down or silent\n";
$secret = 'Wr0ng-secret';
$closed = lock_test_free_port();
$silent = stream_socket_server('tcp://127.0.0.1:0');
$silentPort = (int) substr(strrchr(stream_socket_get_name($silent, false), ':'), 1);
foreach (["down" => $closed, "silent" => $silentPort] as $what => $port) {
    $store = new Lock\Store\PostgresStore("pgsql://u:$secret@127.0.0.1:$port/db", ['timeout' => 0.5, 'holds' => 'table']);
    $lock = new Lock\Lock('r', $store);
    foreach (['acquire' => fn () => $lock->acquire(), 'acquire(true, 3.0)' => fn () => $lock->acquire(true, 3.0),
        'isLocked' => fn () => $store->isLocked('r'), 'forceRelease' => fn () => $store->forceRelease('r'),
        'waitUntilFree' => fn () => $store->waitUntilFree('r', 3.0),
        'restored refresh' => fn () => (new Lock\Factory($store))->restoreLock('r', 'o')->refresh()] as $call => $fn) {
        $t = hrtime(true);
        try {
            $fn();
            echo "$what, $call: no exception\n";
        } catch (Lock\LockException $e) {
            $s = (hrtime(true) - $t) / 1e9;
            echo "$what, $call: ", get_class($e), ', names the endpoint: ', var_export(str_contains($e->getMessage(), "127.0.0.1:$port"), true),
                ', shows the password: ', var_export(str_contains($e->getMessage(), $secret), true),
                ', within the timeout: ', var_export($s <= lock_test_patience(0.5) + 0.3, true), "\n";
        }
    }
}
?>
--EXPECT--
-- holds
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be of type string, int given
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "holds" must be of type string, null given
ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "holds" must be "session" or "table"
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) query parameter "holds" must be "session" or "table"
-- table
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" must be of type string, array given
ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "table" must be a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes
no exception
no exception
no exception
no exception
no exception
-- a table without table mode
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" needs holds "table" (session holds use no table)
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "table" needs holds "table" (session holds use no table)
ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "table" needs holds "table" (session holds use no table)
-- a server down or silent
down, acquire: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
down, acquire(true, 3.0): Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
down, isLocked: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
down, forceRelease: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
down, waitUntilFree: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
down, restored refresh: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, acquire: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, acquire(true, 3.0): Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, isLocked: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, forceRelease: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, waitUntilFree: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
silent, restored refresh: Lock\StorageException, names the endpoint: true, shows the password: false, within the timeout: true
