--TEST--
mysql table holds: bad options (holds, table, no database) are a ValueError or TypeError; a server that is down is a Lock\StorageException within the timeout
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/redis.inc';

[$host, $port, $user, $pass, $db] = lock_test_mysql_parts();
$ok = lock_test_mysql_dsn();
$nodb = "mysql://$user:$pass@$host:$port";

echo "-- options\n";
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'x']));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'TABLE']));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok . '?holds=tables'));
foreach (['', 'a b', 'x`y', 'db.t', "t\0", str_repeat('t', 65), 'lock-holds', "t'"] as $bad) {
    lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'table', 'table' => $bad]));
}
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok . '?holds=table&table=a%20b'));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'table', 'table' => 5]));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($nodb, ['holds' => 'table']));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($nodb . '?holds=table'));
lock_test_expect_throw(fn () => Lock\Factory::fromDsn($nodb . '/?holds=table'));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($nodb, ['holds' => 'table', 'database' => null]));
echo "-- accepted\n";
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($nodb, ['holds' => 'table', 'database' => $db, 'table' => str_repeat('t', 64)]));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok, ['holds' => 'session', 'table' => 'ignored_here']));
lock_test_expect_throw(fn () => new Lock\Store\MysqlStore($ok . '?holds=table&table=Lock_$1'));

echo "-- nothing listens\n";
$closed = lock_test_free_port();
$store = new Lock\Store\MysqlStore("mysql://$user:$pass@127.0.0.1:$closed/$db", ['timeout' => 0.5, 'holds' => 'table']);
$lock = new Lock\Lock('r', $store);
foreach (['acquire' => fn () => $lock->acquire(), 'acquire(true, 2.0)' => fn () => $lock->acquire(true, 2.0),
    'isLocked' => fn () => $store->isLocked('r'), 'forceRelease' => fn () => $store->forceRelease('r'),
    'waitUntilFree' => fn () => $store->waitUntilFree('r', 2.0)] as $what => $call) {
    $t = hrtime(true);
    try {
        $call();
        echo "$what: no exception\n";
    } catch (Lock\LockException $e) {
        echo "$what: ", get_class($e), ', names the endpoint: ', var_export(str_contains($e->getMessage(), "127.0.0.1:$closed"), true),
            ', within the timeout: ', var_export(hrtime(true) - $t < 1.5e9, true), "\n";
    }
}
var_dump($lock->isAcquired());

?>
--EXPECT--
-- options
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "holds" must be "session" or "table"
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "holds" must be "session" or "table"
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) query parameter "table" must be a table name of 1 to 64 characters from [A-Za-z0-9_$]
TypeError: Lock\Store\MysqlStore::__construct(): Argument #2 ($options) option "table" must be of type string, int given
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a database (its path, or the "database" option) for holds => "table": the table of holds lives there
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a database (its path, or the "database" option) for holds => "table": the table of holds lives there
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) must name a database (its path, or the "database" option) for holds => "table": the table of holds lives there
ValueError: Lock\Store\MysqlStore::__construct(): Argument #1 ($dsn) must name a database (its path, or the "database" option) for holds => "table": the table of holds lives there
-- accepted
no exception
no exception
no exception
-- nothing listens
acquire: Lock\StorageException, names the endpoint: true, within the timeout: true
acquire(true, 2.0): Lock\StorageException, names the endpoint: true, within the timeout: true
isLocked: Lock\StorageException, names the endpoint: true, within the timeout: true
forceRelease: Lock\StorageException, names the endpoint: true, within the timeout: true
waitUntilFree: Lock\StorageException, names the endpoint: true, within the timeout: true
bool(false)
