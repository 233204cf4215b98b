--TEST--
memcached: the server's TTL is the TTL in whole seconds rounded up plus 2 (memcached's clock), the local one is never longer; a TTL past 30 days goes as a unix time; no TTL is no expiry
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$port = lock_test_memcached_port();
$prefix = lock_test_prefix();
$store = lock_test_store('memcached', null, $prefix);

/**
 * Whether memcached's count of seconds left is $want, give or take its clock's second. A
 * unix time (past 30 days) is read against memcached's own clock, which ticks once a
 * second on a timer and lags the wall clock on a busy machine (valgrind): 3 s there.
 */
function about(?int $server, int $want): bool
{
    $slack = $want > 30 * 86400 ? 3 : 1;
    return $server !== null && ($want === -1 ? $server === -1 : abs($server - $want) <= $slack);
}

/** The seconds memcached still gives the item of $resource (meta get's t flag): -1 for none, null when absent. */
function server_ttl(int $port, string $prefix, string $resource): ?int
{
    $out = lock_test_memcached_cmd($port, 'mg ' . lock_test_memcached_key($prefix, $resource) . ' t', ['EN']);
    return preg_match('/^HD t(-?\d+)/', $out, $m) ? (int) $m[1] : null;
}

foreach ([0.2, 1.0, 1.5, 300.0, 40 * 86400.0, null] as $ttl) {
    $lock = new Lock\Lock('ttl', $store, $ttl);
    $lock->acquire();
    $took = hrtime(true);
    $server = server_ttl($port, $prefix, 'ttl');
    $local = $lock->getRemainingLifetime();
    $want = $ttl === null ? -1 : (int) ceil($ttl) + 2;
    printf("%s: server %s, local at most the TTL: %s\n", var_export($ttl, true),
        about($server, $want) ? 'ceil + 2' : var_export($server, true),
        var_export($ttl === null ? $local === null : $local <= $ttl, true));
    try {
        $lock->refresh();
    } catch (Lock\LockException $e) {
        // The item lives more than ceil(TTL) + 1 s: only a process stalled that long (a loaded machine) may see it gone.
        $after = (hrtime(true) - $took) / 1e9;
        if ($after < ceil($ttl) + 1) {
            printf("  refresh: %s after %.3f s\n", get_class($e), $after);
        }
        $lock->acquire();
    }
    $server = server_ttl($port, $prefix, 'ttl');
    echo '  refreshed: ', about($server, $want) ? 'ceil + 2' : var_export($server, true), "\n";
    try {
        $lock->release();
    } catch (Lock\ExpiredException $e) {
        // A short TTL may have run out by now: the release says so, as on every expiring store.
        if ($e instanceof Lock\LostException || $lock->getTtl() > 1.0) {
            echo '  release: ', get_class($e), "\n";
        }
    }
}
// release() with a delay: the cooldown item gets the delay, rounded the same way.
$lock = new Lock\Lock('ttl', $store, 30.0);
$lock->acquire();
$lock->release(2.5);
$server = server_ttl($port, $prefix, 'ttl');
echo 'cooldown of 2.5 s: ', about($server, 5) ? 'ceil + 2' : var_export($server, true), "\n";
$store->forceRelease('ttl');
?>
--EXPECT--
0.2: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
1.0: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
1.5: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
300.0: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
3456000.0: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
NULL: server ceil + 2, local at most the TTL: true
  refreshed: ceil + 2
cooldown of 2.5 s: ceil + 2
