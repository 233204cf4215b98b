--TEST--
mysql table holds: a hold outlives its lock object, its connection and its process; restoreLock() in another process adopts it by its owner token, refreshes and releases it, and a waiter is then woken; a wrong token adopts nothing; a forked child never touches its parent's hold or connections
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$dsn = lock_test_mysql_dsn('holds=table&prefix=' . rawurlencode($prefix));
$factory = Lock\Factory::fromDsn($dsn);
$store = $factory->getStore();

echo "-- taken in a process that then ends\n";
[$code, $out] = lock_test_run_php('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$l = Lock\Factory::fromDsn(' . var_export($dsn, true) . ')->createLock("h", 60.0, false);'
    . 'var_dump($l->acquire()); echo $l->getOwner(), "\n";');
[$acquired, $owner] = explode("\n", trim($out));
echo "child exit $code: $acquired\n";
$row = lock_test_mysql_row($prefix, 'h');
var_dump($store->isLocked('h'), $row['live'], $row['owner'] === bin2hex($owner), lock_test_mysql_holder($prefix, 'h', null, true));
$mine = $factory->createLock('h');
var_dump($mine->acquire());

echo "-- a wrong token adopts nothing\n";
$wrong = $factory->restoreLock('h', 'not-the-owner');
var_dump($wrong->isAcquired());
lock_test_expect_throw(fn () => $factory->restoreLock('h', 'not-the-owner')->refresh());
lock_test_expect_throw(fn () => $factory->restoreLock('h', 'not-the-owner')->release());
var_dump($store->isLocked('h'));

echo "-- restored here by its token\n";
$restored = $factory->restoreLock('h', $owner, 30.0);
var_dump($restored->isAcquired(), $restored->getFencingToken() === $row['fence']);
$restored->refresh();
$row = lock_test_mysql_row($prefix, 'h');
var_dump($row['left'] > 25 && $row['left'] <= 30, $restored->getRemainingLifetime() > 25);
echo 'its session marks it now: ', var_export($row['conn'] !== null && $row['conn'] === lock_test_mysql_holder($prefix, 'h', null, true), true), "\n";

echo "-- a waiter in another process is woken by its release\n";
$waiter = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$l = Lock\Factory::fromDsn(' . var_export($dsn, true) . ')->createLock("h");'
    . 'echo "waiting\n"; var_dump($l->acquire(true, 60.0), $l->isAcquired()); echo "done\n"; fgets(STDIN);');
$waiter->waitFor('waiting');
lock_test_wait_until(fn () => lock_test_mysql_waiters($prefix, 'h', null, true) !== [], 30.0, 'the waiter to wait in GET_LOCK');
$restored->release();
echo $waiter->waitFor('done');
var_dump($store->isLocked('h'));
$waiter->send('go');
$waiter->wait();
var_dump($store->isLocked('h'), $mine->acquire());
$mine->release();

echo "-- handed the other way: taken here, released by another process\n";
$lock = $factory->createLock('q', 60.0, false);
var_dump($lock->acquire());
$owner = $lock->getOwner();
unset($lock);
var_dump($store->isLocked('q'));
[$code, $out] = lock_test_run_php('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$l = Lock\Factory::fromDsn(' . var_export($dsn, true) . ')->restoreLock("q", ' . var_export($owner, true) . ');'
    . 'var_dump($l->isAcquired()); $l->release(); var_dump($l->isAcquired());');
echo "child exit $code:\n$out";
var_dump($store->isLocked('q'));

echo "-- an owner of any bytes, and the same owner in another process\n";
$odd = "a'b\0`c\\" . str_repeat("\xff", 248);
$lock = $factory->createLock('o', 60.0, false, $odd);
var_dump(strlen($odd), $lock->acquire(), lock_test_mysql_row($prefix, 'o')['owner'] === bin2hex($odd));
unset($lock);
[$code, $out] = lock_test_run_php('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$f = Lock\Factory::fromDsn(' . var_export($dsn, true) . ');'
    . 'var_dump($f->createLock("o", 60.0, true, "someone")->acquire());'
    . '$l = $f->createLock("o", 60.0, false, ' . var_export($odd, true) . ');'
    // Under the same owner: a non-blocking acquire finds the hold there, a blocking one takes it as its own (as on Redis).
    . 'var_dump($l->acquire(), $l->acquire(true, 5.0), $l->isAcquired());');
echo "child exit $code:\n$out";
$back = $factory->restoreLock('o', $odd);
var_dump($back->isAcquired());
$back->release();
var_dump($store->isLocked('o'));

echo "-- a forked child\n";
$held = new Lock\Lock('f', $store, null);
var_dump($held->acquire());
$holder = lock_test_mysql_holder($prefix, 'f', null, true);
$idle = new Lock\Lock('g', $store);
$idle->acquire();
$idle->release();
$pid = lock_test_fork(static function () use ($held, $store): int {
    $ok = $held->isAcquired() === false && $held->getFencingToken() === null;
    $held->release();
    $mine = new Lock\Lock('g', $store);
    $ok = $ok && $mine->acquire() && $mine->isAcquired() && !$held->acquire() && $store->isLocked('f');
    $mine->release();
    unset($held);
    return $ok ? 0 : 1;
});
echo 'child exit: ', lock_test_wait_pid($pid), "\n";
var_dump($held->isAcquired(), lock_test_mysql_holder($prefix, 'f', null, true) === $holder, $idle->acquire());
$held->release();
$idle->release();
var_dump($store->isLocked('f'), $store->isLocked('g'));
?>
--EXPECT--
-- taken in a process that then ends
child exit 0: bool(true)
bool(true)
bool(true)
bool(true)
NULL
bool(false)
-- a wrong token adopts nothing
bool(false)
Lock\LostException: Lock "h": the hold was lost: somebody else holds the resource now
Lock\LostException: Lock "h": the hold was lost: somebody else holds the resource now
bool(true)
-- restored here by its token
bool(true)
bool(true)
bool(true)
bool(true)
its session marks it now: true
-- a waiter in another process is woken by its release
bool(true)
bool(true)
done
bool(true)
bool(false)
bool(true)
-- handed the other way: taken here, released by another process
bool(true)
bool(true)
child exit 0:
bool(true)
bool(false)
bool(false)
-- an owner of any bytes, and the same owner in another process
int(255)
bool(true)
bool(true)
child exit 0:
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
-- a forked child
bool(true)
child exit: 0
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
