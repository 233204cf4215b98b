--TEST--
mysql: every bad DSN and option is a ValueError or TypeError naming the argument; none of them shows the password
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$secret = 'Pa55-secret';
$ok = "mysql://u:$secret@127.0.0.1:3306/db";
$shown = false;
$try = static function (callable $fn) use ($secret, &$shown): void {
    $e = lock_test_expect_throw($fn);
    $shown = $shown || ($e !== null && str_contains($e->getMessage(), $secret));
};
echo "-- DSNs\n";
foreach ([
    '', 'mysql:', 'mysql://', "mysql://u:$secret@/db", "mysql://u:$secret@h1,h2/db", "mysql://u:$secret@127.0.0.1:0/db",
    "mysql://u:$secret@127.0.0.1:65536/db", "mysql://u:$secret@127.0.0.1:port/db", "mysql://u:$secret@127.0.0.1/db/x",
    "mysql://u:$secret@127.0.0.1/db?nope=1", "mysql://u:$secret@127.0.0.1/db?timeout=soon", "mysql://u:$secret@127.0.0.1/db?timeout=0",
    "mysql://u:$secret@127.0.0.1/db?timeout=-1", "mysql://u:$secret@127.0.0.1/db?persistent=maybe", "mysql://u:$secret@127.0.0.1/db?prefix",
    "mysql://u:$secret@127.0.0.1/db?database=", "mysql://u:$secret@%2Fno%zz/db", "mysql://u:$secret@rel%2Fdir/db",
    "mysql://u:$secret@%00/db", "redis://u:$secret@127.0.0.1/0", "pgsql://u:$secret@127.0.0.1/db",
    "mysql://u:$secret@127.0.0.1/db?timeout=1&timeout=2", "mysql://u:$secret@[::1/db", "mysql://u:$secret@%2Frun%2Fmysqld.sock:3306/db",
    "mysql://u:$secret@127.0.0.1/db?holds=x", "mysql://u:$secret@127.0.0.1/db?holds=",
] as $dsn) {
    echo json_encode($dsn), ': ';
    $try(fn () => new Lock\Store\MysqlStore($dsn));
}
echo "-- Factory::fromDsn\n";
$try(fn () => Lock\Factory::fromDsn("mysql://u:$secret@127.0.0.1/db?nope=1"));
$try(fn () => Lock\Factory::fromDsn("mariadb://u:$secret@/db"));
echo "-- options\n";
$try(fn () => new Lock\Store\MysqlStore($ok, ['nope' => 1]));
$try(fn () => new Lock\Store\MysqlStore($ok, [1]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['prefix' => 1]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['timeout' => 'soon']));
$try(fn () => new Lock\Store\MysqlStore($ok, ['timeout' => 0]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['timeout' => NAN]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['timeout' => INF]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['persistent' => 1]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['password' => 1]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['password' => "a\0b"]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['username' => '']));
$try(fn () => new Lock\Store\MysqlStore($ok, ['database' => []]));
$try(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'x']));
$try(fn () => new Lock\Store\MysqlStore($ok, ['holds' => null]));
$try(fn () => new Lock\Store\MysqlStore());
$try(fn () => new Lock\Store\MysqlStore(1.5));
echo "-- resources\n";
$store = new Lock\Store\MysqlStore($ok);
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
"": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: DSN is empty
"mysql:": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a host, or a socket path written as %2F... (mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db)
"mysql:\/\/": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a host, or a socket path written as %2F... (mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db)
"mysql:\/\/u:Pa55-secret@\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a host, or a socket path written as %2F... (mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db)
"mysql:\/\/u:Pa55-secret@h1,h2\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name one host
"mysql:\/\/u:Pa55-secret@127.0.0.1:0\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"mysql:\/\/u:Pa55-secret@127.0.0.1:65536\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"mysql:\/\/u:Pa55-secret@127.0.0.1:port\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN has an invalid port at offset 32: expected a number from 1 to 65535
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db\/x": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must have a database name as its path, with no '/' in it
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?nope=1": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent, username, password, database, holds, table)
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=soon": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be a number
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=0": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=-1": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "timeout" must be greater than 0
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?persistent=maybe": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "persistent" must be 0, 1, true or false
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?prefix": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN has a query item without '=' at offset 35
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?database=": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "database" must be a non-empty string without NUL bytes
"mysql:\/\/u:Pa55-secret@%2Fno%zz\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) has a bad percent escape in the host ('%' must be followed by two hex digits, not %00)
"mysql:\/\/u:Pa55-secret@rel%2Fdir\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) has an invalid host: a socket path must be an absolute path, written as %2F...
"mysql:\/\/u:Pa55-secret@%00\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) has a bad percent escape in the host ('%' must be followed by two hex digits, not %00)
"redis:\/\/u:Pa55-secret@127.0.0.1\/0": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must use the mysql: scheme, "redis" given
"pgsql:\/\/u:Pa55-secret@127.0.0.1\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must use the mysql: scheme, "pgsql" given
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?timeout=1&timeout=2": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN repeats the query key 'timeout' at offset 45
"mysql:\/\/u:Pa55-secret@[::1\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: mysql DSN has an IPv6 address without its closing ']' at offset 22
"mysql:\/\/u:Pa55-secret@%2Frun%2Fmysqld.sock:3306\/db": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must not have a port with a socket path
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?holds=x": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "holds" must be "session" or "table"
"mysql:\/\/u:Pa55-secret@127.0.0.1\/db?holds=": ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "holds" must be "session" or "table"
-- Factory::fromDsn
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown query parameter "nope" (known: prefix, timeout, persistent, username, password, database, holds, table)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must name a host, or a socket path written as %2F... (mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db)
-- options
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) contains unknown option "nope"
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) must contain only string keys, 0 given
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "prefix" must be of type string, int given
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "timeout" must be of type float, string given
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "timeout" must be greater than 0
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "persistent" must be of type bool, int given
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "password" must be of type ?string, int given
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "password" must be a non-empty string without NUL bytes
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "username" must be a non-empty string without NUL bytes
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "database" must be of type ?string, array given
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "holds" must be of type string, null given
ArgumentCountError: Lock\Store\MysqlStore::__construct() expects at least 1 argument, 0 given
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) is not a valid DSN: DSN has no scheme: expected a name followed by ':', such as 'redis:'
-- resources
ValueError: Lock\Store\MysqlStore::isLocked(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\MysqlStore::forceRelease(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\MysqlStore::waitUntilFree(): Argument #2 ($timeout) must be greater than or equal to 0
ValueError: Lock\Store\MysqlStore::supports(): Argument #1 ($capability) must be one of the Lock\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants
-- the object shows nothing
object(Lock\Store\MysqlStore)#4 (0) {
}
not shown
Exception
Error
password shown in a message: false
