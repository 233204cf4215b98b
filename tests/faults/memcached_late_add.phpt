--TEST--
faults: memcached: an acquire whose add was answered too late (the server frozen with SIGSTOP past the give-back) leaves nothing for nobody: the store settles it at its next call, with and without a TTL; a take the store could not settle (the store gone meanwhile) runs out within its first expiry, never stays for ever
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(120);

$timeout = lock_test_valgrind() ? 1.0 : 0.3;
$bound = $timeout + (lock_test_valgrind() ? 1.0 : LOCK_FAULT_SLACK);
$server = new LockTestMemcachedServer();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));

/** What memcached keeps for $resource: [value, seconds left (-1: no expiry)], or null. */
function late_item(int $port, string $prefix, string $resource): ?array
{
    $out = lock_test_memcached_cmd($port, 'mg ' . lock_test_memcached_key($prefix, $resource) . ' t v', ['EN']);
    if (preg_match('/^VA (\d+) t(-?\d+)\r\n/', $out, $m) !== 1) {
        return null;
    }
    return [substr($out, strlen($m[0]), (int) $m[1]), (int) $m[2]];
}

/** Freezes the server, lets $lock's acquire time out and its give-back fail, then wakes the server: the add runs now. */
function late_add(LockTestMemcachedServer $server, Lock\Lock $lock, float $bound, string $prefix): string
{
    $server->pause();
    lock_fault_call('acquire on the frozen server', fn () => $lock->acquire(), $bound, ['StorageException']);
    $owner = $lock->getOwner();
    // The give-back of what the add may have taken: the server is still frozen.
    $lock->release();
    usleep(400000);
    $server->resume();
    $item = null;
    lock_test_wait_until(function () use ($server, $prefix, $lock, &$item): bool {
        return ($item = late_item($server->port, $prefix, $lock->getResource())) !== null;
    }, 10, 'the late add to land');
    echo 'the late add stored our token: ', var_export($item[0] === 'o' . $owner, true), "\n";
    return $owner;
}

$store = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout]);
var_dump($store->isLocked('warm-up'));

foreach (['ttl 30' => 30.0, 'no ttl' => null] as $name => $ttl) {
    echo "-- $name: the store settles it at its next call\n";
    $resource = "settled $name";
    late_add($server, new Lock\Lock($resource, $store, $ttl), $bound, $prefix);
    $other = new Lock\Lock($resource, $store, 30.0);
    lock_fault_call('another lock: acquire', fn () => $other->acquire(), $bound, ['ok'], true);
    $other->release();
    var_dump(late_item($server->port, $prefix, $resource));
}

echo "-- no ttl, the store gone before the add landed\n";
$resource = 'orphaned';
$gone = new Lock\Store\MemcachedStore($dsn, ['timeout' => $timeout]);
$lock = new Lock\Lock($resource, $gone, null);
$server->pause();
lock_fault_call('acquire on the frozen server', fn () => $lock->acquire(), $bound, ['StorageException']);
$owner = $lock->getOwner();
// The store's end waits a bounded time for the frozen server, then lets go.
$t = hrtime(true);
unset($lock, $gone);
echo 'the store let go within its bound: ', var_export(lock_fault_since($t) <= 1.0 + 2 * $bound, true), "\n";
$server->resume();
$item = null;
lock_test_wait_until(function () use ($server, $prefix, $resource, &$item): bool {
    return ($item = late_item($server->port, $prefix, $resource)) !== null;
}, 10, 'the late add to land');
echo 'the late add stored our token: ', var_export($item[0] === 'o' . $owner, true), "\n";
echo 'it expires by itself within 5 s: ', var_export($item[1] >= 0 && $item[1] <= 5, true), "\n";
lock_fault_call('another store: waitUntilFree(7.0)', fn () => $store->waitUntilFree($resource, 7.0), 7.0 + LOCK_FAULT_SLACK, ['ok'], true);
$other = new Lock\Lock($resource, $store, 30.0);
var_dump($other->acquire());
$other->release();
?>
--EXPECT--
bool(false)
-- ttl 30: the store settles it at its next call
acquire on the frozen server: StorageException
the late add stored our token: true
another lock: acquire: ok: true
NULL
-- no ttl: the store settles it at its next call
acquire on the frozen server: StorageException
the late add stored our token: true
another lock: acquire: ok: true
NULL
-- no ttl, the store gone before the add landed
acquire on the frozen server: StorageException
the store let go within its bound: true
the late add stored our token: true
it expires by itself within 5 s: true
another store: waitUntilFree(7.0): ok: true
bool(true)
