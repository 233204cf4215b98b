--TEST--
faults: MySQL (MariaDB): a server frozen (SIGSTOP) during session and table holds: every call returns within its bound (the timeout, plus the wait for a call that waits), also when the hold's own session timed out and a new session would have to ask whether it is gone; after SIGCONT the stores work again
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$storage = ['StorageException'];
$server = new LockTestMyServer();
$pid = (int) trim((string) file_get_contents(lock_test_mysql_sql('SELECT @@pid_file', $server->dsn)));
$prefix = lock_test_prefix();
$stores = [
    'session' => new Lock\Store\MysqlStore($server->dsn('prefix=' . rawurlencode($prefix)), ['timeout' => $timeout]),
    'table' => new Lock\Store\MysqlStore($server->dsn('prefix=' . rawurlencode($prefix)), ['timeout' => $timeout, 'holds' => 'table']),
];
$locks = [];
foreach ($stores as $kind => $store) {
    foreach (['refresh', 'fence', 'release', 'isAcquired'] as $call) {
        $locks[$kind][$call] = new Lock\Lock("$kind-$call", $store, 60.0);
        $locks[$kind][$call]->acquire();
    }
    // Idle sessions: a second look must not find a fresh connection refused at once.
    var_dump($store->isLocked('x'), $store->waitUntilFree('x', 0.1));
}

lock_fault_stop($pid);
foreach ($stores as $kind => $store) {
    echo "-- $kind\n";
    $l = $locks[$kind];
    lock_fault_call('refresh', fn () => $l['refresh']->refresh(), $bound, $storage);
    // A table hold's token came with the take: nothing to ask.
    lock_fault_call('getFencingToken', fn () => $l['fence']->getFencingToken(), $bound, ['StorageException', 'ok']);
    lock_fault_call('release', fn () => $l['release']->release(), $bound, $storage);
    lock_fault_call('isAcquired', fn () => $l['isAcquired']->isAcquired(), $bound, $storage);
    lock_fault_call('isLocked', fn () => $store->isLocked('x'), $bound, $storage);
    lock_fault_call('forceRelease', fn () => $store->forceRelease('x'), $bound, $storage);
    lock_fault_call('waitUntilFree(0.5)', fn () => $store->waitUntilFree('x', 0.5), $bound + 0.5, $storage);
    lock_fault_call('acquire', fn () => (new Lock\Lock('n', $store))->acquire(), $bound, $storage);
    lock_fault_call('acquire(true, 0.5)', fn () => (new Lock\Lock('n', $store))->acquire(true, 0.5), $bound + 0.5, $storage);
}
lock_fault_stop($pid, false);

echo "-- after SIGCONT\n";
foreach ($stores as $kind => $store) {
    $n = new Lock\Lock('n', $store);
    lock_test_wait_until(fn () => $n->acquire(), 30.0, "a $kind acquire to work again");
    echo "$kind: acquired, ", var_export($n->isAcquired(), true), "\n";
    $n->release();
}
?>
--EXPECT--
bool(false)
bool(true)
bool(false)
bool(true)
-- session
refresh: StorageException
getFencingToken: StorageException
release: StorageException
isAcquired: StorageException
isLocked: StorageException
forceRelease: StorageException
waitUntilFree(0.5): StorageException
acquire: StorageException
acquire(true, 0.5): StorageException
-- table
refresh: StorageException
getFencingToken: ok
release: StorageException
isAcquired: StorageException
isLocked: StorageException
forceRelease: StorageException
waitUntilFree(0.5): StorageException
acquire: StorageException
acquire(true, 0.5): StorageException
-- after SIGCONT
session: acquired, true
table: acquired, true
