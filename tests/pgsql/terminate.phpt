--TEST--
pgsql: a session ended from outside (pg_terminate_backend, forceRelease()) mid-hold and mid-wait: the hold is gone (ExpiredException, or LostException when somebody else holds it), a waiter gets a Lock\StorageException, and the store goes on with new sessions
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/faults.inc';

$prefix = lock_test_prefix();
$store = lock_test_pgsql_store(['prefix' => $prefix]);
$terminate = static function (array $pids): void {
    lock_test_pgsql_sql('SELECT pg_terminate_backend(pid, 5000) FROM unnest(ARRAY[' . implode(',', $pids) . ']::int[]) AS pid');
};

echo "-- mid-hold, nobody else takes it\n";
$a = new Lock\Lock('a', $store);
var_dump($a->acquire());
$terminate(lock_test_pgsql_holders($prefix, 'a'));
var_dump($store->isLocked('a'), $a->isAcquired());
lock_fault_call('a: refresh', fn () => $a->refresh(), 5.0, ['ExpiredException']);
var_dump($a->acquire(), $a->isAcquired(), $a->getFencingToken() > 0);
$terminate(lock_test_pgsql_holders($prefix, 'a'));
lock_fault_call('a: release', fn () => $a->release(), 5.0, ['ExpiredException']);

echo "-- mid-hold, somebody else takes it\n";
$b = new Lock\Lock('b', $store);
$other = new Lock\Lock('b', lock_test_pgsql_store(['prefix' => $prefix]));
var_dump($b->acquireRead());
$terminate(lock_test_pgsql_holders($prefix, 'b'));
var_dump($other->acquire());
lock_fault_call('b: release', fn () => $b->release(), 5.0, ['LostException']);
$other->release();
var_dump($b->acquireRead());
$terminate(lock_test_pgsql_holders($prefix, 'b'));
var_dump($other->acquire());
lock_fault_call('b: promote', fn () => $b->acquire(), 5.0, ['LostException']);
lock_fault_call('b: release', fn () => $b->release(), 5.0, ['LostException']);
$other->release();

echo "-- forceRelease() from another store\n";
$c = new Lock\Lock('c', $store);
$c2 = new Lock\Lock('c', $store);
var_dump($c->acquireRead(), $c2->acquireRead());
lock_test_pgsql_store(['prefix' => $prefix])->forceRelease('c');
var_dump($store->isLocked('c'), $c->isAcquired(), $c2->isAcquired());
lock_fault_call('c: getFencingToken', fn () => $c->getFencingToken(), 5.0, ['ok'], true);
lock_fault_call('c: release', fn () => $c->release(), 5.0, ['ExpiredException']);
var_dump($c->acquire(), $c->getFencingToken() > 0);
lock_test_pgsql_store(['prefix' => $prefix])->forceRelease('c');
lock_fault_call('c: getFencingToken after forceRelease', fn () => $c->getFencingToken(), 5.0, ['ok'], true);
lock_test_pgsql_store(['prefix' => $prefix])->forceRelease('nobody-holds-this');

echo "-- mid-wait\n";
$d = new Lock\Lock('d', $store);
// Held before the waiter starts: a quick child must find it taken.
var_dump($d->acquire());
$waiter = new LockTestChild('require "' . __DIR__ . '/../inc/pgsql.inc";'
    . '$l = new Lock\Lock("d", lock_test_pgsql_store(["prefix" => ' . var_export($prefix, true) . ']));'
    . 'echo "waiting\n"; try { var_dump($l->acquire(true, 60.0)); } catch (Lock\LockException $e) { echo get_class($e), "\n"; }'
    . 'var_dump($l->acquire()); echo "done\n";');
$waiter->waitFor('waiting');
$waiting = static fn (): string => lock_test_pgsql_sql("SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    . ' AND ((classid::int8 << 32) | objid::int8) = (' . lock_test_pgsql_key($prefix, 'd') . ')::bit(64)::int8');
lock_test_wait_until(static fn () => $waiting() !== '', 30.0, 'the waiter to queue');
$terminate(explode(',', $waiting()));
echo $waiter->waitFor('done');
var_dump($d->isAcquired());
$d->release();
?>
--EXPECT--
-- mid-hold, nobody else takes it
bool(true)
bool(false)
bool(false)
a: refresh: ExpiredException
bool(true)
bool(true)
bool(true)
a: release: ExpiredException
-- mid-hold, somebody else takes it
bool(true)
bool(true)
b: release: LostException
bool(true)
bool(true)
b: promote: LostException
b: release: LostException
-- forceRelease() from another store
bool(true)
bool(true)
bool(false)
bool(false)
bool(false)
c: getFencingToken: ok: NULL
c: release: ExpiredException
bool(true)
bool(true)
c: getFencingToken after forceRelease: ok: 1
-- mid-wait
bool(true)
Lock\StorageException
bool(false)
done
bool(true)
