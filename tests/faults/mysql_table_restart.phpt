--TEST--
faults: MySQL table holds: a server killed under a hold is a Lock\StorageException within the timeout; the hold survives the restart (its row is the hold, committed before the kill), and its holder refreshes and releases it on a new session
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

echo "-- the server restarts under a hold\n";
$server = new LockTestMyServer();
$store = new Lock\Store\MysqlStore($server->dsn('holds=table'), ['timeout' => 2.0]);
$lock = new Lock\Lock('r', $store, 120.0);
var_dump($lock->acquire());
$server->stop();
try {
    $lock->refresh();
    echo "no exception\n";
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
}
$server->up();
$other = new Lock\Lock('r', $store);
var_dump($store->isLocked('r'), $other->acquire(), $lock->isAcquired());
$lock->refresh();
$lock->release();
var_dump($store->isLocked('r'), $other->acquire());
$other->release();
?>
--EXPECT--
-- the server restarts under a hold
bool(true)
Lock\StorageException
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
