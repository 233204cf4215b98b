--TEST--
mysql: a session killed from outside (KILL, forceRelease()) mid-hold and mid-wait: the hold is gone (ExpiredException, or LostException when somebody else holds it), a waiter gets a Lock\StorageException, and the store goes on with new sessions
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';

$prefix = lock_test_prefix();
$store = lock_test_mysql_store(['prefix' => $prefix]);
$kill = static function (?int $id) use ($prefix): void {
    if ($id === null) {
        echo "FAIL: nobody to kill\n";
        return;
    }
    lock_test_mysql_sql("KILL $id");
};
// KILL returns before the server has ended the session: wait until its lock is free.
$killHolder = static function (string $resource) use ($prefix, $kill): void {
    $id = lock_test_mysql_holder($prefix, $resource);
    $kill($id);
    lock_test_wait_until(static fn () => lock_test_mysql_holder($prefix, $resource) !== $id, 10.0, 'the killed session to end');
};

echo "-- mid-hold, nobody else takes it\n";
$a = new Lock\Lock('a', $store);
var_dump($a->acquire());
$killHolder('a');
var_dump($store->isLocked('a'), $a->isAcquired());
lock_fault_call('a: refresh', fn () => $a->refresh(), 5.0, ['ExpiredException']);
var_dump($a->acquire(), $a->isAcquired(), $a->getFencingToken() > 0);
$killHolder('a');
lock_fault_call('a: release', fn () => $a->release(), 5.0, ['ExpiredException']);

echo "-- mid-hold, somebody else takes it\n";
$b = new Lock\Lock('b', $store);
$other = new Lock\Lock('b', lock_test_mysql_store(['prefix' => $prefix]));
var_dump($b->acquire());
$killHolder('b');
var_dump($other->acquire());
lock_fault_call('b: release', fn () => $b->release(), 5.0, ['LostException']);
$other->release();
var_dump($b->acquire());
$killHolder('b');
var_dump($other->acquire());
lock_fault_call('b: acquire again', fn () => $b->acquire(), 5.0, ['ok'], true);
lock_fault_call('b: release', fn () => $b->release(), 5.0, ['ok']);
$other->release();

echo "-- forceRelease() from another store\n";
$c = new Lock\Lock('c', $store);
var_dump($c->acquire());
lock_test_mysql_store(['prefix' => $prefix])->forceRelease('c');
var_dump($store->isLocked('c'), $c->isAcquired());
lock_fault_call('c: getFencingToken', fn () => $c->getFencingToken(), 5.0, ['ok'], true);
// Asking for the token found the hold gone: the lock holds nothing now.
lock_fault_call('c: release', fn () => $c->release(), 5.0, ['ok']);
var_dump($c->acquire(), $c->getFencingToken() > 0);
lock_test_mysql_store(['prefix' => $prefix])->forceRelease('c');
lock_fault_call('c: release after forceRelease', fn () => $c->release(), 5.0, ['ExpiredException']);
lock_test_mysql_store(['prefix' => $prefix])->forceRelease('nobody-holds-this');
echo "another user without CONNECTION ADMIN: ";
$d = new Lock\Lock('d', $store);
$d->acquire();
[$host, $port, , , $db] = lock_test_mysql_parts();
lock_test_expect_throw(fn () => (new Lock\Store\MysqlStore("mysql://lockother:Lo-my-51c2@$host:$port/$db",
    ['prefix' => $prefix]))->forceRelease('d'));
var_dump($d->isAcquired());
$d->release();

echo "-- mid-wait\n";
$e = new Lock\Lock('e', $store);
// Held before the waiter starts: a quick child must find it taken.
var_dump($e->acquire());
$waiter = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$l = new Lock\Lock("e", lock_test_mysql_store(["prefix" => ' . var_export($prefix, true) . ']));'
    . 'echo "waiting\n"; try { var_dump($l->acquire(true, 60.0)); } catch (Lock\LockException $e) { echo get_class($e), "\n"; }'
    . 'var_dump($l->acquire()); echo "done\n";');
$waiter->waitFor('waiting');
lock_test_wait_until(static fn () => count(lock_test_mysql_waiters($prefix, 'e')) === 1, 30.0, 'the waiter to queue');
$kill(lock_test_mysql_waiters($prefix, 'e')[0]);
echo $waiter->waitFor('done');
var_dump($e->isAcquired());
$e->release();
?>
--EXPECTF--
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
b: acquire again: ok: false
b: release: ok
-- forceRelease() from another store
bool(true)
bool(false)
bool(false)
c: getFencingToken: ok: NULL
c: release: ok
bool(true)
bool(true)
c: release after forceRelease: ExpiredException
another user without CONNECTION ADMIN: Lock\StorageException: MySQL at 127.0.0.1:%d: You are not owner of thread %d
bool(true)
-- mid-wait
bool(true)
Lock\StorageException
bool(false)
done
bool(true)
