--TEST--
pgsql table mode: a hold outlives its lock object and its process; restoreLock() by owner adopts it in another process (a queue job handing its lock on), refreshes and releases it; a wrong owner adopts nothing; a forked child never touches its parent's hold
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$dsn = lock_test_pgsql_dsn('holds=table&prefix=' . rawurlencode($prefix));
$child = fn (string $code): array => lock_test_run_php('require "' . __DIR__ . '/../inc/pgsql.inc";'
    . '$f = Lock\Factory::fromDsn(' . var_export($dsn, true) . ');' . $code);

echo "-- a process takes a hold without autoRelease and ends\n";
[$code, $owner] = $child('$l = $f->createLock("job", 60.0, false); if (!$l->acquire()) { exit(1); } echo $l->getOwner();');
var_dump($code, strlen($owner));
$factory = Lock\Factory::fromDsn($dsn);
$store = $factory->getStore();
var_dump($store->isLocked('job'), lock_test_pgsql_row($prefix, 'job')[0] === $owner);

echo "-- a wrong owner adopts nothing\n";
$wrong = $factory->restoreLock('job', 'not-the-owner');
var_dump($wrong->isAcquired());
$wrong = $factory->restoreLock('job', 'not-the-owner');
lock_test_expect_throw(fn () => $wrong->refresh());
$wrong = $factory->restoreLock('job', 'not-the-owner');
lock_test_expect_throw(fn () => $wrong->release());
var_dump($store->isLocked('job'));

echo "-- another process restores it by its owner and refreshes it\n";
[$code, $out] = $child('$l = $f->restoreLock("job", ' . var_export($owner, true) . ', 120.0);'
    . 'var_dump($l->isAcquired()); $l->refresh(); var_dump($l->getRemainingLifetime() > 100, $l->getFencingToken() > 0);'
    . 'var_dump($l->acquire(), (new Lock\Lock("job", $f->getStore()))->acquire());');
echo $out;
$row = lock_test_pgsql_row($prefix, 'job');
var_dump($row[0] === $owner, (int) $row[2] > 100000);

echo "-- this process restores it and releases it\n";
$restored = $factory->restoreLock('job', $owner);
var_dump($restored->isAcquired());
$restored->release();
var_dump($store->isLocked('job'), lock_test_pgsql_row($prefix, 'job'));
lock_test_expect_throw(fn () => $factory->restoreLock('job', $owner)->release());

echo "-- a restored hold with autoRelease goes at the end of the request\n";
[$code, $owner] = $child('$l = $f->createLock("auto", 60.0, false); $l->acquire(); echo $l->getOwner();');
var_dump($store->isLocked('auto'));
[$code, $out] = $child('$l = $f->restoreLock("auto", ' . var_export($owner, true) . ', false, true); var_dump($l->isAcquired());');
echo $out;
var_dump($store->isLocked('auto'));

echo "-- a forked child never touches its parent's hold\n";
$held = $factory->createLock('fork', 60.0);
var_dump($held->acquire());
$pid = lock_test_fork(static function () use ($held, $store): int {
    $ok = $held->isAcquired() === false && $held->getFencingToken() === null && $held->getRemainingLifetime() === null;
    $held->release();
    unset($held);
    return $ok && $store->isLocked('fork') ? 0 : 1;
});
echo 'child exit: ', lock_test_wait_pid($pid), "\n";
var_dump($held->isAcquired());
$held->release();
var_dump($store->isLocked('fork'));
?>
--EXPECTF--
-- a process takes a hold without autoRelease and ends
int(0)
int(32)
bool(true)
bool(true)
-- a wrong owner adopts nothing
bool(false)
Lock\LostException: %s
Lock\LostException: %s
bool(true)
-- another process restores it by its owner and refreshes it
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
-- this process restores it and releases it
bool(true)
bool(false)
NULL
Lock\ExpiredException: %s
-- a restored hold with autoRelease goes at the end of the request
bool(true)
bool(true)
bool(false)
-- a forked child never touches its parent's hold
bool(true)
child exit: 0
bool(true)
bool(false)
