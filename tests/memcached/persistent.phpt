--TEST--
memcached: persistent => true reuses one connection for the next stores of the process with the same servers and timeout; without it each store connects; a failed call's connection is never reused
--EXTENSIONS--
lock
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$server = new LockTestMemcachedServer();

/** Connections the server accepted, besides the ones that asked. */
function accepted(LockTestMemcachedServer $server): int
{
    static $asked = 0;
    preg_match('/^STAT total_connections (\d+)/m', lock_test_memcached_cmd($server->port, 'stats'), $m);
    return (int) $m[1] - ++$asked;
}

foreach ([true, false] as $persistent) {
    $start = accepted($server);
    for ($i = 0; $i < 5; $i++) {
        $store = new Lock\Store\MemcachedStore($server->dsn(), ['persistent' => $persistent, 'timeout' => 0.5]);
        $lock = new Lock\Lock('p', $store, 30.0);
        $lock->acquire();
        $lock->release();
        unset($lock, $store);
    }
    echo $persistent ? 'persistent' : 'not persistent', ': ', accepted($server) - $start, " connections for 5 stores\n";
}
// Another timeout is another pool entry.
$start = accepted($server);
$a = new Lock\Store\MemcachedStore($server->dsn(), ['persistent' => true, 'timeout' => 0.7]);
$a->isLocked('p');
echo 'another timeout: ', accepted($server) - $start, " new connection\n";
unset($a);

echo "-- a frozen server: the timed-out connection goes, the next call connects anew\n";
$store = new Lock\Store\MemcachedStore($server->dsn(), ['persistent' => true, 'timeout' => 0.3]);
$store->isLocked('p');
$server->pause();
try {
    $store->isLocked('p');
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
}
$server->resume();
$start = accepted($server);
var_dump($store->isLocked('p'));
echo 'reconnected: ', accepted($server) - $start, "\n";
?>
--EXPECT--
persistent: 1 connections for 5 stores
not persistent: 5 connections for 5 stores
another timeout: 1 new connection
-- a frozen server: the timed-out connection goes, the next call connects anew
Lock\StorageException
bool(false)
reconnected: 1
