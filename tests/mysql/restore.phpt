--TEST--
mysql: without autoRelease a hold keeps its session (its connection) after its lock and store objects are gone; restoreLock() adopts it in the same process only; a forked child never touches its parent's hold or connections
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$dsn = lock_test_mysql_dsn('prefix=' . rawurlencode($prefix));

echo "-- the hold outlives its objects\n";
$factory = Lock\Factory::fromDsn($dsn);
$lock = $factory->createLock('k', null, false);
var_dump($lock->acquire());
$owner = $lock->getOwner();
$holder = [lock_test_mysql_holder($prefix, 'k')];
unset($lock, $factory);
gc_collect_cycles();
var_dump([lock_test_mysql_holder($prefix, 'k')] === $holder, $holder[0] !== null);

echo "-- restored in this process, through another factory\n";
$factory = Lock\Factory::fromDsn($dsn);
$other = $factory->createLock('k');
var_dump($other->acquire());
try {
    $factory->restoreLock('k', 'somebody-else');
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
$restored = $factory->restoreLock('k', $owner);
var_dump($restored->isAcquired(), $restored->getFencingToken() > 0);
$restored->release();
var_dump($factory->getStore()->isLocked('k'), $other->acquire());
$other->release();

echo "-- another process cannot restore it\n";
$lock = $factory->createLock('p', null, false);
$lock->acquire();
$owner = $lock->getOwner();
unset($lock);
[$code, $out] = lock_test_run_php('require "' . __DIR__ . '/../inc/mysql.inc";'
    . 'try { Lock\Factory::fromDsn(' . var_export($dsn, true) . ')->restoreLock("p", ' . var_export($owner, true) . '); echo "restored\n"; }'
    . ' catch (Lock\LockException $e) { echo get_class($e), "\n"; }');
echo $out;
var_dump($factory->getStore()->isLocked('p'));
$factory->restoreLock('p', $owner)->release();

echo "-- a forked child\n";
$store = $factory->getStore();
$held = new Lock\Lock('f', $store, null);
var_dump($held->acquire());
$holder = [lock_test_mysql_holder($prefix, 'f')];
// The store keeps idle connections: the child must open its own, never use the parent's.
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
var_dump($held->isAcquired(), [lock_test_mysql_holder($prefix, 'f')] === $holder, $idle->acquire(), $held->getFencingToken() > 0);
$held->release();
$idle->release();
var_dump($store->isLocked('f'), $store->isLocked('g'));
?>
--EXPECT--
-- the hold outlives its objects
bool(true)
bool(true)
bool(true)
-- restored in this process, through another factory
bool(false)
Lock\LockException
bool(true)
bool(true)
bool(false)
bool(true)
-- another process cannot restore it
Lock\LockException
bool(true)
-- a forked child
bool(true)
child exit: 0
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
