--TEST--
pgsql table mode: the API contract: supports(), acquire/refresh/release/isLocked/isAcquired, TTL by the server's clock, null TTL, two lock objects conflict, fencing tokens, release with a delay, forceRelease, prefixes, binary names, the DSN's ?holds=table
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$store = lock_test_pgsql_table_store(['prefix' => $prefix]);

echo "-- supports\n";
foreach (['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED, 'FENCING' => Lock\Store::FENCING,
    'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND] as $name => $cap) {
    echo $name, ': ', var_export($store->supports($cap), true), ' (session mode: ',
        var_export(lock_test_pgsql_store()->supports($cap), true), ")\n";
}

echo "-- acquire, a row by the server's clock\n";
$lock = new Lock\Lock('r', $store, 30.0);
var_dump($lock->acquire(), $lock->isAcquired(), $store->isLocked('r'));
$row = lock_test_pgsql_row($prefix, 'r');
var_dump($row[0] === $lock->getOwner(), $row[1], (int) $row[2] > 25000 && (int) $row[2] <= 30000);
$left = $lock->getRemainingLifetime();
var_dump($left > 25.0 && $left <= 30.0, $lock->isExpired());

echo "-- another lock object conflicts, even with the same owner\n";
$other = new Lock\Lock('r', $store, 30.0);
$same = new Lock\Lock('r', $store, 30.0, true, $lock->getOwner());
var_dump($other->acquire(), $same->acquire(), $other->acquire(true, 0.2), $store->waitUntilFree('r', 0.1));

echo "-- refresh and acquire again extend the hold on the server\n";
$lock->refresh(100.0);
$row = lock_test_pgsql_row($prefix, 'r');
var_dump((int) $row[2] > 95000);
var_dump($lock->acquire());
$row = lock_test_pgsql_row($prefix, 'r');
var_dump((int) $row[2] > 25000 && (int) $row[2] <= 30000);

echo "-- fencing tokens increase with every acquisition\n";
$t1 = $lock->getFencingToken();
var_dump($t1 > 0, $lock->getFencingToken() === $t1);
$lock->release();
var_dump($lock->isAcquired(), $store->isLocked('r'), lock_test_pgsql_row($prefix, 'r'), $lock->getFencingToken());
var_dump($other->acquire());
$t2 = $other->getFencingToken();
var_dump($t2 > $t1);
$other->release();

echo "-- the server's clock decides: a row made expired from outside is free\n";
var_dump($lock->acquire());
$key = lock_test_pgsql_key($prefix, 'r');
lock_test_pgsql_sql("UPDATE lock_holds SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $key");
var_dump($lock->isExpired(), $store->isLocked('r'));
lock_test_expect_throw(fn () => $lock->refresh());
var_dump($lock->acquire());
lock_test_pgsql_sql("UPDATE lock_holds SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $key");
var_dump($other->acquire(), $other->getFencingToken() > $t2);
lock_test_expect_throw(fn () => $lock->release());
var_dump($lock->isAcquired());
$other->release();

echo "-- a short TTL runs out\n";
$short = new Lock\Lock('short', $store, 0.3);
var_dump($short->acquire(), (new Lock\Lock('short', $store))->acquire());
lock_test_wait_until(fn () => !$store->isLocked('short'), 30.0, 'the hold to expire');
var_dump($short->isExpired());
lock_test_expect_throw(fn () => $short->release());

echo "-- a null TTL never expires\n";
$forever = new Lock\Lock('forever', $store, null);
var_dump($forever->acquire(), $forever->getRemainingLifetime(), lock_test_pgsql_row($prefix, 'forever')[2]);
$forever->refresh();
var_dump($forever->isAcquired());
$forever->release();

echo "-- acquireRead takes an exclusive hold\n";
$reader = new Lock\Lock('read', $store);
$reader2 = new Lock\Lock('read', $store);
var_dump($reader->acquireRead(), $reader2->acquireRead(), $reader->getFencingToken() > 0);
$reader->release();

echo "-- release with a delay keeps it blocked, by nobody\n";
var_dump($lock->acquire());
$lock->release(lock_test_valgrind() ? 10.0 : 5.0); // long enough for psql to start on a loaded machine
var_dump($store->isLocked('r'), lock_test_pgsql_row($prefix, 'r')[0], $lock->acquire(), $other->acquire());
lock_test_wait_until(fn () => $other->acquire(), 30.0, 'the delay to end');
var_dump($other->isAcquired());
$other->release();

echo "-- forceRelease breaks the hold\n";
var_dump($lock->acquire());
$store->forceRelease('r');
var_dump($store->isLocked('r'));
lock_test_expect_throw(fn () => $lock->release());
var_dump($lock->acquire());
$store->forceRelease('r');
var_dump($other->acquire());
lock_test_expect_throw(fn () => $lock->release());
$other->release();
$store->forceRelease('nobody');

echo "-- prefixes are namespaces; names of any bytes\n";
$elsewhere = lock_test_pgsql_table_store(['prefix' => $prefix . 'x']);
$name = "a\0b\xff" . str_repeat('n', 70000 - 5);
$name = substr($name, 0, 65536);
$a = new Lock\Lock($name, $store);
$b = new Lock\Lock($name, $elsewhere);
var_dump($a->acquire(), $b->acquire(), $store->isLocked($name), $store->isLocked("a\0b"));
$a->release();
$b->release();

echo "-- the DSN query\n";
$dsnStore = new Lock\Store\PostgresStore(lock_test_pgsql_dsn('holds=table&prefix=' . rawurlencode($prefix)));
$c = new Lock\Lock('dsn', $dsnStore);
var_dump($c->acquire(), $store->isLocked('dsn'), $dsnStore->supports(Lock\Store::PROCESS_BOUND));
$c->release();
$sessionStore = new Lock\Store\PostgresStore(lock_test_pgsql_dsn('holds=session&prefix=' . rawurlencode($prefix)));
var_dump($sessionStore->supports(Lock\Store::PROCESS_BOUND));
?>
--EXPECTF--
-- supports
EXPIRING: true (session mode: false)
SHARED: false (session mode: true)
FENCING: true (session mode: true)
PROCESS_BOUND: false (session mode: true)
-- acquire, a row by the server's clock
bool(true)
bool(true)
bool(true)
bool(true)
string(4) "true"
bool(true)
bool(true)
bool(false)
-- another lock object conflicts, even with the same owner
bool(false)
bool(false)
bool(false)
bool(false)
-- refresh and acquire again extend the hold on the server
bool(true)
bool(true)
bool(true)
-- fencing tokens increase with every acquisition
bool(true)
bool(true)
bool(false)
bool(false)
NULL
NULL
bool(true)
bool(true)
-- the server's clock decides: a row made expired from outside is free
bool(true)
bool(false)
bool(false)
Lock\ExpiredException: %s
bool(true)
bool(true)
bool(true)
Lock\LostException: %s
bool(false)
-- a short TTL runs out
bool(true)
bool(false)
bool(true)
Lock\ExpiredException: %s
-- a null TTL never expires
bool(true)
NULL
string(0) ""
bool(true)
-- acquireRead takes an exclusive hold
bool(true)
bool(false)
bool(true)
-- release with a delay keeps it blocked, by nobody
bool(true)
bool(true)
string(0) ""
bool(false)
bool(false)
bool(true)
-- forceRelease breaks the hold
bool(true)
bool(false)
Lock\ExpiredException: %s
bool(true)
bool(true)
Lock\LostException: %s
-- prefixes are namespaces; names of any bytes
bool(true)
bool(true)
bool(true)
bool(false)
-- the DSN query
bool(true)
bool(true)
bool(false)
bool(true)
