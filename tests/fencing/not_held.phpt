--TEST--
fencing: once a hold is known gone (broken by forceRelease(), or run out by the clock), getFencingToken() is null, never the token of the hold that was; on every store with fencing tokens
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/mysql.inc';

$stores = [
    'redis' => fn (string $p) => lock_test_store('redis', null, $p),
    'pgsql session' => fn (string $p) => lock_test_pgsql_store(['prefix' => $p]),
    'pgsql table' => fn (string $p) => lock_test_pgsql_table_store(['prefix' => $p]),
    'mysql session' => fn (string $p) => lock_test_mysql_store(['prefix' => $p]),
    'mysql table' => fn (string $p) => lock_test_mysql_table_store(['prefix' => $p]),
];
foreach ($stores as $kind => $make) {
    $prefix = lock_test_prefix();
    $store = $make($prefix);
    $other = $make($prefix);
    echo "-- $kind: fencing ", var_export($store->supports(Lock\Store::FENCING), true), "\n";
    $lock = new Lock\Lock('f', $store, 30.0);
    $lock->acquire();
    echo 'token while held: ', get_debug_type($lock->getFencingToken()), "\n";
    $other->forceRelease('f');
    echo 'isAcquired after forceRelease: ', var_export($lock->isAcquired(), true), "\n";
    echo 'token then: ', var_export($lock->getFencingToken(), true), "\n";
    // Known gone already: a release has nothing to say.
    $lock->release();
    if ($store->supports(Lock\Store::EXPIRING)) {
        $short = new Lock\Lock('g', $store, 0.3);
        $short->acquire();
        $token = $short->getFencingToken();
        lock_test_wait_until(fn () => !$other->isLocked('g'), 30, 'the hold to expire');
        usleep(100000);
        echo 'token after the TTL ran out: ', var_export($short->getFencingToken(), true), ' (had ', get_debug_type($token), ")\n";
    }
}
?>
--EXPECT--
-- redis: fencing true
token while held: int
isAcquired after forceRelease: false
token then: NULL
token after the TTL ran out: NULL (had int)
-- pgsql session: fencing true
token while held: int
isAcquired after forceRelease: false
token then: NULL
-- pgsql table: fencing true
token while held: int
isAcquired after forceRelease: false
token then: NULL
token after the TTL ran out: NULL (had int)
-- mysql session: fencing true
token while held: int
isAcquired after forceRelease: false
token then: NULL
-- mysql table: fencing true
token while held: int
isAcquired after forceRelease: false
token then: NULL
token after the TTL ran out: NULL (had int)
