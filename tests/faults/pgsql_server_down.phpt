--TEST--
faults: PostgreSQL: a server that is down, silent, or refuses (password, database) is a Lock\StorageException within the timeout, naming the endpoint and never the password; a unix socket directory works; phpinfo() lists the store
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/redis.inc';

$secret = 'Wr0ng-secret';
[$host, $port, $user, $pass, $db] = lock_test_pgsql_parts();

/* Calls $fn and reports the exception, the endpoint in it, whether a password shows, and whether it came within $bound s. */
function down(string $what, callable $fn, string $endpoint, float $bound): void
{
    global $secret, $pass;
    $t = hrtime(true);
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Lock\LockException $e) {
        $s = (hrtime(true) - $t) / 1e9;
        echo "$what: ", get_class($e), ', names the endpoint: ', var_export(str_contains($e->getMessage(), $endpoint), true),
            ', shows a password: ', var_export(str_contains($e->getMessage(), $secret) || str_contains($e->getMessage(), $pass), true),
            ', within the bound: ', var_export($s <= $bound, true), "\n";
    }
}

$closed = lock_test_free_port();
$store = new Lock\Store\PostgresStore("pgsql://$user:$secret@127.0.0.1:$closed/$db", ['timeout' => 0.5]);
$lock = new Lock\Lock('r', $store);
down('nothing listens: acquire', fn () => $lock->acquire(), "127.0.0.1:$closed", 0.6);
down('nothing listens: acquire(true, 2.0)', fn () => $lock->acquire(true, 2.0), "127.0.0.1:$closed", 0.6);
down('nothing listens: isLocked', fn () => $store->isLocked('r'), "127.0.0.1:$closed", 0.6);
down('nothing listens: forceRelease', fn () => $store->forceRelease('r'), "127.0.0.1:$closed", 0.6);
down('nothing listens: waitUntilFree', fn () => $store->waitUntilFree('r', 2.0), "127.0.0.1:$closed", 0.6);
var_dump($lock->isAcquired());

// A listener that never accepts: the TCP handshake completes, and no answer ever comes.
$silent = stream_socket_server('tcp://127.0.0.1:0');
$silentPort = (int) substr(strrchr(stream_socket_get_name($silent, false), ':'), 1);
$store = new Lock\Store\PostgresStore("pgsql://$user:$secret@127.0.0.1:$silentPort/$db", ['timeout' => 0.5]);
down('silent server: acquire', fn () => (new Lock\Lock('r', $store))->acquire(), "127.0.0.1:$silentPort", 0.6);
down('silent server: run', fn () => (new Lock\Lock('r', $store))->run(fn () => 1, 5.0), "127.0.0.1:$silentPort", 0.6);

$store = new Lock\Store\PostgresStore("pgsql://$user:$secret@$host:$port/$db");
down('wrong password', fn () => (new Lock\Lock('r', $store))->acquire(), "$host:$port", 5.0);
$store = new Lock\Store\PostgresStore("pgsql://$host:$port/$db", ['username' => $user, 'password' => $secret]);
down('wrong password as an option', fn () => (new Lock\Lock('r', $store))->acquire(), "$host:$port", 5.0);
$store = new Lock\Store\PostgresStore("pgsql://$user:$pass@$host:$port/no_such_db");
down('unknown database', fn () => (new Lock\Lock('r', $store))->acquire(), "$host:$port", 5.0);
$store = new Lock\Store\PostgresStore("pgsql://nobody_here:$pass@$host:$port/$db");
down('unknown role', fn () => (new Lock\Lock('r', $store))->acquire(), "$host:$port", 5.0);

echo "-- the password as an option, the database from the query\n";
$store = new Lock\Store\PostgresStore("pgsql://$host:$port?database=$db&username=$user", ['password' => $pass, 'prefix' => lock_test_prefix()]);
$lock = new Lock\Lock('r', $store);
var_dump($lock->acquire(), $store->isLocked('r'));
$lock->release();

echo "-- a unix socket directory\n";
$dir = lock_test_env('LOCK_TEST_PGSQL_SOCKET_DIR');
$prefix = lock_test_prefix();
$store = new Lock\Store\PostgresStore("pgsql://$user@" . rawurlencode($dir) . ":$port/$db", ['prefix' => $prefix]);
$lock = new Lock\Lock('r', $store);
var_dump($lock->acquire(), count(lock_test_pgsql_holders($prefix, 'r')));
$other = new Lock\Lock('r', lock_test_pgsql_store(['prefix' => $prefix]));
var_dump($other->acquire());
$lock->release();
var_dump($other->acquire());
$other->release();
$store = new Lock\Store\PostgresStore("pgsql://$user@%2Fno%2Fsuch%2Fdir:$port/$db", ['timeout' => 0.5]);
down('missing socket directory', fn () => (new Lock\Lock('r', $store))->acquire(), '/no/such/dir', 0.6);

echo "-- phpinfo()\n";
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
preg_match('/^Stores => (.*)$/m', $info, $m);
echo str_contains($m[1], 'PostgresStore') ? 'built' : 'not built', "\n";
var_dump(preg_match('/^libpq version => \d+\.\d+$/m', $info) === 1, str_contains($info, $secret) || str_contains($info, $pass));
?>
--EXPECT--
nothing listens: acquire: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
nothing listens: acquire(true, 2.0): Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
nothing listens: isLocked: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
nothing listens: forceRelease: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
nothing listens: waitUntilFree: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
bool(false)
silent server: acquire: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
silent server: run: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
wrong password: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
wrong password as an option: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
unknown database: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
unknown role: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
-- the password as an option, the database from the query
bool(true)
bool(true)
-- a unix socket directory
bool(true)
int(1)
bool(false)
bool(true)
missing socket directory: Lock\StorageException, names the endpoint: true, shows a password: false, within the bound: true
-- phpinfo()
built
bool(true)
bool(false)
