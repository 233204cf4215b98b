--TEST--
pgsql table mode: the server stopped (immediate, as a crash) and started again: calls while it is down throw Lock\StorageException within the timeout + slack and keep the hold; a waiter gets a StorageException; after the restart the holds are still there (rows are durable), ours to refresh and release, and fencing tokens go on increasing
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

// Under valgrind a connection's SCRAM exchange alone can take longer than half a second.
$timeout = lock_test_valgrind() ? 5.0 : 0.5;
$bound = $timeout + lock_test_patience(LOCK_FAULT_SLACK);
$server = new LockTestPgServer();
$prefix = lock_test_prefix();
$dsn = $server->dsn('holds=table&prefix=' . rawurlencode($prefix));
$store = new Lock\Store\PostgresStore($dsn, ['timeout' => $timeout]);
$a = new Lock\Lock('a', $store, 60.0);
$n = new Lock\Lock('n', $store, null);
var_dump($a->acquire(), $n->acquire());
$token = $a->getFencingToken();

$waiter = new LockTestChild('require "' . __DIR__ . '/../inc/pgsql.inc";'
    . '$l = new Lock\Lock("a", new Lock\Store\PostgresStore(' . var_export($dsn, true) . ', ["timeout" => ' . $timeout . ']));'
    . 'echo "waiting\n"; try { var_dump($l->acquire(true, 60.0)); } catch (Lock\LockException $e) { echo get_class($e), "\n"; }'
    . 'echo "done\n";');
$waiter->waitFor('waiting');
lock_test_wait_until(static fn () => lock_test_pgsql_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'php-lock'"
    . " AND query LIKE 'SELECT CASE WHEN expires_at%'", $server->dsn) === '1', 30.0, 'the waiter to wait');

$server->stop();
echo "-- the server is down\n";
foreach (['refresh' => fn () => $a->refresh(), 'isAcquired' => fn () => $a->isAcquired(), 'isLocked' => fn () => $store->isLocked('a'),
    'acquire' => fn () => (new Lock\Lock('x', $store))->acquire(), 'release' => fn () => $n->release()] as $what => $call) {
    $t = hrtime(true);
    try {
        $call();
        echo "$what: no exception\n";
    } catch (Lock\LockException $e) {
        echo "$what: ", get_class($e), ', within the bound: ', var_export((hrtime(true) - $t) / 1e9 <= $bound, true), "\n";
    }
}
echo $waiter->waitFor('done');

$server->up();
echo "-- the server is back: the rows are still there\n";
var_dump($a->isAcquired(), $store->isLocked('n'), $store->isLocked('a'));
$a->refresh();
var_dump($a->getFencingToken() === $token);
$a->release();
$n->release();
$b = new Lock\Lock('a', $store);
var_dump($b->acquire(), $b->getFencingToken() > $token, $store->isLocked('n'));
$b->release();
?>
--EXPECT--
bool(true)
bool(true)
-- the server is down
refresh: Lock\StorageException, within the bound: true
isAcquired: Lock\StorageException, within the bound: true
isLocked: Lock\StorageException, within the bound: true
acquire: Lock\StorageException, within the bound: true
release: Lock\StorageException, within the bound: true
Lock\StorageException
done
-- the server is back: the rows are still there
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
