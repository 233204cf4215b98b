--TEST--
memcached: with two servers each resource's item lives on exactly one, the same whatever the order of the list; when one server is down its resources throw Lock\StorageException and are never re-hashed to the other, whose resources keep working
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
require __DIR__ . '/../inc/faults.inc';

$one = new LockTestMemcachedServer();
$two = new LockTestMemcachedServer();
$prefix = lock_test_prefix();
$list = "127.0.0.1:{$one->port},127.0.0.1:{$two->port}";
$store = new Lock\Store\MemcachedStore("memcached://$list?prefix=" . urlencode($prefix), ['timeout' => 0.5]);
$reversed = new Lock\Store\MemcachedStore("memcached://127.0.0.1:{$two->port},127.0.0.1:{$one->port}?prefix=" . urlencode($prefix));

/** Which server (1 or 2) keeps the item of $resource; 0 for none, 3 for both. */
function server_of(string $prefix, string $resource, LockTestMemcachedServer $one, LockTestMemcachedServer $two): int
{
    $key = lock_test_memcached_key($prefix, $resource);
    return (lock_test_memcached_get($one->port, $key) !== null ? 1 : 0) | (lock_test_memcached_get($two->port, $key) !== null ? 2 : 0);
}

$where = [];
$sameOrder = true;
for ($i = 0; $i < 40; $i++) {
    $resource = "resource-$i";
    $lock = new Lock\Lock($resource, $store, 30.0);
    $lock->acquire();
    $where[$resource] = server_of($prefix, $resource, $one, $two);
    // The reversed list sends the resource to the same server: it sees the hold.
    $sameOrder = $sameOrder && $reversed->isLocked($resource);
    $lock->release();
}
$counts = array_count_values($where);
echo 'every item on exactly one server: ', var_export(!isset($counts[0]) && !isset($counts[3]), true), "\n";
echo 'both servers used: ', var_export(($counts[1] ?? 0) > 0 && ($counts[2] ?? 0) > 0, true), "\n";
echo 'the list in another order maps the same: ', var_export($sameOrder, true), "\n";

echo "-- server two is down\n";
$two->kill();
$results = ['1' => [], '2' => []];
foreach ($where as $resource => $server) {
    $lock = new Lock\Lock($resource, $store, 30.0);
    $t = hrtime(true);
    try {
        $outcome = $lock->acquire() ? 'acquired' : 'busy';
        $lock->release();
    } catch (Lock\StorageException $e) {
        $outcome = 'StorageException';
    }
    if (lock_fault_since($t) > 0.5 + (lock_test_valgrind() ? 2.0 : LOCK_FAULT_SLACK)) {
        $outcome .= ' (too slow)';
    }
    $results[(string) $server][$outcome] = true;
}
echo 'resources of server one: ', implode(', ', array_keys($results['1'])), "\n";
echo 'resources of server two: ', implode(', ', array_keys($results['2'])), "\n";
$moved = 0;
foreach ($where as $resource => $server) {
    if ($server === 2) {
        $lock = new Lock\Lock($resource, $store, 30.0);
        try {
            $lock->acquire();
        } catch (Lock\StorageException) {
        }
        $moved += lock_test_memcached_get($one->port, lock_test_memcached_key($prefix, $resource)) !== null ? 1 : 0;
    }
}
echo 'items of server two written to server one: ', $moved, "\n";
echo 'isLocked on server two: ';
try {
    $store->isLocked(array_search(2, $where, true));
} catch (Lock\StorageException $e) {
    echo get_class($e), ': names the server: ', var_export(str_contains($e->getMessage(), "127.0.0.1:{$two->port}"), true), "\n";
}

echo "-- server two is back\n";
$two->restart();
$ok = true;
foreach ($where as $resource => $server) {
    $lock = new Lock\Lock($resource, $store, 30.0);
    $ok = $ok && $lock->acquire() && server_of($prefix, $resource, $one, $two) === $server;
    $lock->release();
}
echo 'every resource works again, on its own server: ', var_export($ok, true), "\n";
?>
--EXPECT--
every item on exactly one server: true
both servers used: true
the list in another order maps the same: true
-- server two is down
resources of server one: acquired
resources of server two: StorageException
items of server two written to server one: 0
isLocked on server two: Lock\StorageException: names the server: true
-- server two is back
every resource works again, on its own server: true
