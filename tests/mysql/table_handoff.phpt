--TEST--
mysql table holds: a release through restoreLock() in another process wakes the waiters at once, while the process that took the hold still has its Lock object (whose session marks the hold); that object then finds the hold gone
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

lock_test_hang_guard(120);
$prefix = lock_test_prefix();
$code = 'lock_test_mysql_table_store(["prefix" => ' . var_export($prefix, true) . '])';
$inc = 'require "' . __DIR__ . '/../inc/mysql.inc";';
$store = lock_test_mysql_table_store(['prefix' => $prefix]);

foreach (['a TTL of 30 s' => 30.0, 'no TTL' => null] as $what => $ttl) {
    echo "-- $what\n";
    $resource = 'job-' . ($ttl === null ? 'forever' : 'ttl');
    // The web request: takes the hold and keeps its Lock object (and with it the session that marks the hold).
    $taker = new LockTestChild($inc . '$s = ' . $code . '; $l = new Lock\Lock(' . var_export($resource, true) . ', $s, '
        . var_export($ttl, true) . ', false); var_dump($l->acquire()); echo $l->getOwner(), "\n"; echo "held\n";'
        . 'fgets(STDIN); try { $l->release(); echo "released\n"; } catch (Lock\LockException $e) { echo get_class($e), "\n"; }');
    $out = $taker->waitFor('held');
    $owner = explode("\n", trim($out))[1];
    var_dump(lock_test_mysql_holder($prefix, $resource, null, true) !== null);
    $waiter = new LockTestChild($inc . '$s = ' . $code . '; $l = new Lock\Lock(' . var_export($resource, true) . ', $s);'
        . 'echo "waiting\n"; $ok = $l->acquire(true, 20.0); echo "acquired=", var_export($ok, true), "\n"; if ($ok) { $l->release(); }');
    $waiter->waitFor('waiting');
    lock_test_wait_until(fn () => lock_test_mysql_waiters($prefix, $resource, null, true) !== [], 30.0, 'the waiter to wait in GET_LOCK');
    // The worker: adopts the hold by its owner token and gives it up.
    $worker = Lock\Factory::fromDsn(lock_test_mysql_dsn('holds=table&prefix=' . rawurlencode($prefix)))->restoreLock($resource, $owner, $ttl);
    $t = hrtime(true);
    $worker->release();
    echo $waiter->waitFor('acquired=true', 20.0);
    $s = (hrtime(true) - $t) / 1e9;
    // Woken by the release, not by the expiry or a look every 0.5 s at most: well within 2 s.
    echo 'the waiter got it within 2 s of the release: ', var_export($s < lock_test_patience(2.0), true), "\n";
    $waiter->wait();
    // The taker's object no longer holds it.
    $taker->send('go');
    echo $taker->wait();
    var_dump($store->isLocked($resource));
}
?>
--EXPECT--
-- a TTL of 30 s
bool(true)
acquired=true
the waiter got it within 2 s of the release: true
Lock\ExpiredException
bool(false)
-- no TTL
bool(true)
acquired=true
the waiter got it within 2 s of the release: true
Lock\ExpiredException
bool(false)
