--TEST--
faults: MySQL (MariaDB) table holds: a take whose answer does not come within the timeout (its row locked by another transaction for longer) throws Lock\StorageException and leaves the row free: release(), the Lock object's end and the end of the process each kill the take's statement and give back what it took
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = lock_test_valgrind() ? 2.0 : 0.5;
$rowLock = 3 * $timeout;
$prefix = lock_test_prefix();
$store = lock_test_mysql_table_store(['prefix' => $prefix, 'timeout' => $timeout]);

/** Locks the row of $resource in a transaction of another client for $seconds; returns when the row is locked. */
function lock_row(string $prefix, string $resource, float $seconds): array
{
    [$host, $port, $user, $pass, $db] = lock_test_mysql_parts();
    $name = lock_test_mysql_name($prefix, $resource);
    $tag = 'row-lock-' . bin2hex(random_bytes(4));
    $proc = proc_open(['mariadb', '--no-defaults', '-N', '-B', '-h', $host, '-P', (string) $port, '-u', $user, $db],
        [0 => ['pipe', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes,
        null, ['MYSQL_PWD' => $pass, 'PATH' => getenv('PATH') ?: '/usr/bin:/bin']);
    fwrite($pipes[0], "BEGIN; SELECT name FROM lock_holds WHERE name = '$name' FOR UPDATE; SELECT SLEEP($seconds) AS `$tag`; COMMIT;\n");
    fclose($pipes[0]);
    lock_test_wait_until(fn () => lock_test_mysql_sql("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE '%AS `$tag`%'"
        . ' AND id <> CONNECTION_ID()') === '1', 30.0, 'the row to be locked');
    return [$proc, $pipes];
}

foreach (['release()' => 'release', 'the end of the Lock object' => 'unset', 'the end of the process' => 'exit'] as $what => $how) {
    echo "-- $what\n";
    $resource = "r-$how";
    // The row exists, free.
    $l = new Lock\Lock($resource, $store, null);
    $l->acquire();
    $l->release();
    [$proc] = lock_row($prefix, $resource, $rowLock);
    if ($how === 'exit') {
        $child = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
            . '$s = lock_test_mysql_table_store(["prefix" => ' . var_export($prefix, true) . ', "timeout" => ' . var_export($timeout, true) . ']);'
            . '$l = new Lock\Lock(' . var_export($resource, true) . ', $s, null);'
            . 'try { var_dump($l->acquire()); } catch (Lock\StorageException $e) { echo "StorageException\n"; } $GLOBALS["kept"] = $l;');
        echo $child->wait();
    } else {
        $lock = new Lock\Lock($resource, $store, null);
        lock_fault_call('acquire', fn () => $lock->acquire(), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
        if ($how === 'release') {
            lock_fault_call('release', fn () => $lock->release(), 3 * $timeout + LOCK_FAULT_SLACK, ['ok']);
        } else {
            unset($lock);
        }
    }
    proc_close($proc);
    // The row lock is gone: a take that still ran would have taken the row by now.
    $row = lock_test_mysql_row($prefix, $resource);
    echo 'the row is free: ', var_export(!$row['live'], true), "\n";
    $other = new Lock\Lock($resource, $store, 5.0);
    var_dump($other->acquire());
    $other->release();
}
?>
--EXPECT--
-- release()
acquire: StorageException
release: ok
the row is free: true
bool(true)
-- the end of the Lock object
acquire: StorageException
the row is free: true
bool(true)
-- the end of the process
StorageException
the row is free: true
bool(true)
