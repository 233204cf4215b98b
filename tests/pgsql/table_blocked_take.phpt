--TEST--
pgsql table mode: a take that waits on a row lock past the store's timeout is a Lock\StorageException, and it is over on the server: once the row's locker lets go, the resource is not held by the failed lock (with and without TTL)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
// Under valgrind a statement takes longer: the timeout grows. The blocker holds the row until
// the test cancels its sleep, so that no machine is slow enough for it to let go first.
$timeout = lock_test_valgrind() ? 2.0 : 0.5;
$block = 300;
$store = lock_test_pgsql_table_store(['prefix' => $prefix, 'timeout' => $timeout]);
$other = lock_test_pgsql_table_store(['prefix' => $prefix]);
[$host, $port, $user, $pass, $db] = lock_test_pgsql_parts();

foreach (['ttl 300' => 300.0, 'no ttl' => null] as $what => $ttl) {
    echo "-- $what\n";
    $resource = "r-$what";
    // The table exists, and the store has a session at hand: the take below is one statement.
    // (A first connection may take longer than the short timeout on a loaded machine: it is tried again.)
    $warm = new Lock\Lock($resource, $store, $ttl);
    lock_test_wait_until(static function () use ($warm): bool {
        try {
            return $warm->acquire();
        } catch (Lock\StorageException) {
            return false;
        }
    }, 60.0, 'a first connection');
    var_dump($warm->isAcquired());
    $warm->release();
    $key = lock_test_pgsql_key($prefix, $resource);
    // Somebody's expired row, which a transaction of another session locks for a while. Expired
    // a minute ago, not an hour: a release of a test running beside this one sweeps rows expired
    // for an hour, and would delete this one before the blocker locks it.
    lock_test_pgsql_sql("INSERT INTO lock_holds (key, owner, expires_at) VALUES ($key, '\\x78'::bytea,"
        . " clock_timestamp() - interval '1 minute')");
    $sleep = "SELECT pg_sleep($block) /* $prefix $what */";
    $blocker = proc_open(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $host, '-p', (string) $port, '-U', $user, '-d', $db,
        '-c', 'BEGIN', '-c', "SELECT 1 FROM lock_holds WHERE key = $key FOR UPDATE", '-c', $sleep, '-c', 'COMMIT'],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['pipe', 'w']], $pipes,
        null, ['PGPASSWORD' => $pass, 'PATH' => getenv('PATH') ?: '/usr/bin:/bin']);
    lock_test_wait_until(static fn (): bool => lock_test_pgsql_sql('SELECT count(*) FROM pg_stat_activity WHERE query = '
        . "'" . str_replace("'", "''", $sleep) . "' AND state = 'active'") === '1', 30.0, 'the blocker to lock the row');

    $lock = new Lock\Lock($resource, $store, $ttl);
    $t = microtime(true);
    try {
        var_dump($lock->acquire());
    } catch (Lock\StorageException $e) {
        echo get_class($e), ': ', str_replace((string) ($timeout * 1000), 'T', $e->getMessage()), "\n";
    }
    // The store's timeout bounds the call: the cancel and its answer take one more at most
    // (and the margin is wider under valgrind, whose threads take turns on one core).
    echo 'within two timeouts and a margin: ', var_export(microtime(true) - $t < $timeout * 2 + (lock_test_valgrind() ? 4.0 : 1.0), true), "\n";

    // The blocker's transaction ends (its sleep cancelled, the transaction rolled back): the row is free.
    lock_test_pgsql_sql('SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE query = '
        . "'" . str_replace("'", "''", $sleep) . "'");
    $err = stream_get_contents($pipes[2]);
    echo 'blocker: ', proc_close($blocker) !== 0 && str_contains($err, 'canceling statement') ? 'ended' : "unexpected: $err", "\n";
    // A take still waiting would be granted the row now; nothing of ours may wait or run on the table.
    lock_test_wait_until(static fn (): bool => lock_test_pgsql_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'php-lock'"
        . " AND state = 'active' AND query LIKE 'INSERT INTO \"lock_holds\"%'") === '0', 30.0, 'our statements to end');
    // The row is the expired one of 'x' (the cancel came first), or none (the take won the race
    // with the cancel, and the failed lock's settling deleted its row): never the failed lock's.
    $row = lock_test_pgsql_row($prefix, $resource)[0] ?? null;
    var_dump($store->isLocked($resource), $row === 'x' || $row === null);
    $next = new Lock\Lock($resource, $other, $ttl);
    var_dump($next->acquire());
    // The failed lock's clean-up deletes only a row of its own.
    $lock->release();
    var_dump($next->isAcquired());
    $next->release();
    var_dump($store->isLocked($resource));
}
?>
--EXPECTF--
-- ttl 300
bool(true)
Lock\StorageException: %s: no answer within T ms
within two timeouts and a margin: true
blocker: ended
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
-- no ttl
bool(true)
Lock\StorageException: %s: no answer within T ms
within two timeouts and a margin: true
blocker: ended
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
