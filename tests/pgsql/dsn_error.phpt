--TEST--
pgsql: every bad DSN and option is a ValueError or TypeError naming the argument; none of them shows the password
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$secret = 'Pa55-secret';
$ok = "pgsql://u:$secret@127.0.0.1:5432/db";
$shown = false;
$try = static function (callable $fn) use ($secret, &$shown): void {
    $e = lock_test_expect_throw($fn);
    $shown = $shown || ($e !== null && str_contains($e->getMessage(), $secret));
};
echo "-- DSNs\n";
foreach ([
    '', 'pgsql:', 'pgsql://', "pgsql://u:$secret@/db", "pgsql://u:$secret@h1,h2/db", "pgsql://u:$secret@127.0.0.1:0/db",
    "pgsql://u:$secret@127.0.0.1:65536/db", "pgsql://u:$secret@127.0.0.1:port/db", "pgsql://u:$secret@127.0.0.1/db/x",
    "pgsql://u:$secret@127.0.0.1/db?nope=1", "pgsql://u:$secret@127.0.0.1/db?timeout=soon", "pgsql://u:$secret@127.0.0.1/db?timeout=0",
    "pgsql://u:$secret@127.0.0.1/db?timeout=-1", "pgsql://u:$secret@127.0.0.1/db?persistent=maybe", "pgsql://u:$secret@127.0.0.1/db?prefix",
    "pgsql://u:$secret@127.0.0.1/db?database=", "pgsql://u:$secret@%2Fno%zz/db", "pgsql://u:$secret@rel%2Fdir/db",
    "pgsql://u:$secret@%00/db", "redis://u:$secret@127.0.0.1/0", "mysql://u:$secret@127.0.0.1/db",
    "pgsql://u:$secret@127.0.0.1/db?timeout=1&timeout=2", "pgsql://u:$secret@[::1/db",
] as $dsn) {
    echo json_encode($dsn), ': ';
    $try(fn () => new Lock\Store\PostgresStore($dsn));
}
echo "-- Factory::fromDsn\n";
$try(fn () => Lock\Factory::fromDsn("pgsql://u:$secret@127.0.0.1/db?nope=1"));
$try(fn () => Lock\Factory::fromDsn("postgres://u:$secret@/db"));
echo "-- options\n";
$try(fn () => new Lock\Store\PostgresStore($ok, ['nope' => 1]));
$try(fn () => new Lock\Store\PostgresStore($ok, [1]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['prefix' => 1]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['timeout' => 'soon']));
$try(fn () => new Lock\Store\PostgresStore($ok, ['timeout' => 0]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['timeout' => NAN]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['timeout' => INF]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['persistent' => 1]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['password' => 1]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['password' => "a\0b"]));
$try(fn () => new Lock\Store\PostgresStore($ok, ['username' => '']));
$try(fn () => new Lock\Store\PostgresStore($ok, ['database' => []]));
$try(fn () => new Lock\Store\PostgresStore());
$try(fn () => new Lock\Store\PostgresStore(1.5));
echo "-- resources\n";
$store = new Lock\Store\PostgresStore($ok);
$try(fn () => $store->isLocked(''));
$try(fn () => $store->forceRelease(str_repeat('x', 65537)));
$try(fn () => $store->waitUntilFree('x', -1.0));
$try(fn () => $store->supports(3));
echo "-- the object shows nothing\n";
var_dump($store);
echo str_contains(print_r($store, true) . var_export($store, true), $secret) ? "shown\n" : "not shown\n";
try {
    serialize($store);
} catch (Exception $e) {
    echo get_class($e), "\n";
}
try {
    clone $store;
} catch (Error $e) {
    echo get_class($e), "\n";
}
echo 'password shown in a message: ', var_export($shown, true), "\n";
?>
--EXPECT--
-- DSNs
"": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: DSN is empty
"pgsql:": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must name a host, or a socket directory written as %2F... (pgsql://user@%2Fvar%2Frun%2Fpostgresql/db)
"pgsql:\/\/": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must name a host, or a socket directory written as %2F... (pgsql://user@%2Fvar%2Frun%2Fpostgresql/db)
"pgsql:\/\/u:Pa55-secret@\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must name a host, or a socket directory written as %2F... (pgsql://user@%2Fvar%2Frun%2Fpostgresql/db)
"pgsql:\/\/u:Pa55-secret@h1,h2\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must name one host
"pgsql:\/\/u:Pa55-secret@127.0.0.1:0\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"pgsql:\/\/u:Pa55-secret@127.0.0.1:65536\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"pgsql:\/\/u:Pa55-secret@127.0.0.1:port\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db\/x": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must have a database name as its path, with no '/' in it
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?nope=1": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent, username, password, database, holds, table)
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=soon": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be a number
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=0": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=-1": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?persistent=maybe": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "persistent" must be 0, 1, true or false
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?prefix": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN has a query item without '=' at offset 35
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?database=": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) query parameter "database" must be a non-empty string without NUL bytes
"pgsql:\/\/u:Pa55-secret@%2Fno%zz\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) has a bad percent escape in the host ('%' must be followed by two hex digits, not %00)
"pgsql:\/\/u:Pa55-secret@rel%2Fdir\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) has an invalid host: a socket directory must be an absolute path, written as %2F...
"pgsql:\/\/u:Pa55-secret@%00\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) has a bad percent escape in the host ('%' must be followed by two hex digits, not %00)
"redis:\/\/u:Pa55-secret@127.0.0.1\/0": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must use the pgsql: scheme, "redis" given
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) must use the pgsql: scheme, "mysql" given
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=1&timeout=2": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN repeats the query key 'timeout' at offset 45
"pgsql:\/\/u:Pa55-secret@[::1\/db": ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: pgsql DSN has an IPv6 address without its closing ']' at offset 22
-- Factory::fromDsn
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent, username, password, database, holds, table)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must name a host, or a socket directory written as %2F... (pgsql://user@%2Fvar%2Frun%2Fpostgresql/db)
-- options
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) contains unknown option "nope"
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) must contain only string keys, 0 given
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "prefix" must be of type string, int given
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "timeout" must be of type float, string given
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "timeout" must be greater than 0
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "persistent" must be of type bool, int given
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "password" must be of type ?string, int given
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "password" must be a non-empty string without NUL bytes
ValueError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "username" must be a non-empty string without NUL bytes
TypeError: Lock\Store\PostgresStore::__construct(): Argument #2 ($options) option "database" must be of type ?string, array given
ArgumentCountError: Lock\Store\PostgresStore::__construct() expects at least 1 argument, 0 given
ValueError: Lock\Store\PostgresStore::__construct(): Argument #1 ($dsn) is not a valid DSN: DSN has no scheme: expected a name followed by ':', such as 'redis:'
-- resources
ValueError: Lock\Store\PostgresStore::isLocked(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\PostgresStore::forceRelease(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\PostgresStore::waitUntilFree(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Store\PostgresStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
-- the object shows nothing
object(Lock\Store\PostgresStore)#2 (0) {
}
not shown
Exception
Error
password shown in a message: false
