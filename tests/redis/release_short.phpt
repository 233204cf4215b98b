--TEST--
redis: a write hold taken while nobody queued is released by the short script, and whatever arrived after the take (a waiter, a waitUntilFree() caller, another holder) is still served by the full release
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$storeCode = lock_test_store_code('redis', null, $prefix);
$store = lock_test_store('redis', null, $prefix);
$redis = new LockTestResp(lock_test_redis_port());
$key = $prefix . '{r}';

echo "-- nobody else\n";
$lock = new Lock\Lock('r', $store, 30.0);
var_dump($lock->acquire());
$lock->release();
var_dump($redis->ok('EXISTS', $key), $redis->ok('EXISTS', $key . ':q'), $store->isLocked('r'));

echo "-- a waiter queued after the take\n";
var_dump($lock->acquire());
$waiter = new LockTestChild('$lock = new Lock\Lock("r", ' . $storeCode . ", 30.0);\n" . <<<'PHP'
echo $lock->acquire(true, 30.0) ? "held\n" : "timed out\n";
fgets(STDIN);
PHP);
lock_test_wait_until(fn () => $redis->ok('LLEN', $key . ':q') > 0, 20, 'the waiter to queue');
$lock->release();
echo trim($waiter->waitFor('held')), "\n";
var_dump($store->isLocked('r'), $lock->acquire(false));
$waiter->send('go');
$waiter->wait();

echo "-- a waitUntilFree() caller that came after the take\n";
var_dump($lock->acquire());
$watcher = new LockTestChild('$store = ' . $storeCode . ";\n" . <<<'PHP'
echo "watching\n";
echo $store->waitUntilFree('r', 30.0) ? "free\n" : "timed out\n";
PHP);
$watcher->waitFor('watching');
lock_test_wait_until(fn () => $redis->ok('EXISTS', $key . ':fw') > 0, 20, 'the watcher to register');
$lock->release();
echo trim($watcher->waitFor('free')), "\n";
$watcher->kill();

echo "-- somebody else holds it now\n";
var_dump($lock->acquire());
$store->forceRelease('r');
$other = lock_test_holder($storeCode, 'r', 30.0);
try {
    $lock->release();
    echo "no exception\n";
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
$other->send('check');
echo trim($other->waitFor('acquired=true')), "\n";
var_dump($store->isLocked('r'), $lock->isAcquired());
$other->send('release');
$other->waitFor('released');
$other->kill();
var_dump($store->isLocked('r'));
?>
--EXPECT--
-- nobody else
bool(true)
int(0)
int(0)
bool(false)
-- a waiter queued after the take
bool(true)
held
bool(true)
bool(false)
-- a waitUntilFree() caller that came after the take
bool(true)
free
-- somebody else holds it now
bool(true)
Lock\LostException
acquired=true
bool(true)
bool(false)
bool(false)
