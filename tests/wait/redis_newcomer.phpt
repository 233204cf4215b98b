--TEST--
Redis, fair: a newcomer does not jump the queue, neither at a release nor while the lock is held
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard();

$dir = lock_test_tmpdir();
$prefix = lock_test_prefix();
$resource = lock_test_resource('newcomer');
$storeCode = lock_wait_store_code('redis', $dir, $prefix);
$redis = new LockWaitRedis($prefix, $resource);
$store = lock_wait_store('redis', $dir, $prefix);

$holder = new Lock\Lock($resource, $store);
$newcomer = new Lock\Lock($resource, $store);
var_dump($holder->acquire());
[$first] = lock_wait_start_waiter('redis', $storeCode, $resource, 'first', $redis, 0, ['hold' => true]);
[$second] = lock_wait_start_waiter('redis', $storeCode, $resource, 'second', $redis, 1, ['hold' => true]);

echo "-- while the lock is held and two wait\n";
var_dump($newcomer->acquire());
// A newcomer that waits joins the back of the queue and leaves it when it gives up.
var_dump($newcomer->acquire(true, 0.3));
echo 'queue after the newcomer gave up: ', $redis->queueLength(), "\n";

echo "-- at the release: the lock goes to the head of the queue, not to whoever asks first\n";
$holder->release();
var_dump($newcomer->acquire());
$first->waitFor('acquired');
var_dump($newcomer->acquire());
echo 'queue: ', $redis->queueLength(), "\n";

echo "-- the head releases: the next waiter, not the newcomer\n";
$first->send('release');
$first->waitFor('released');
var_dump($newcomer->acquire());
$second->waitFor('acquired');
var_dump($newcomer->acquire());

echo "-- the queue is empty: the newcomer gets it once it is released\n";
$second->send('release');
$second->waitFor('released');
var_dump($newcomer->acquire());
$newcomer->release();
$first->wait();
$second->wait();
echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
?>
--EXPECT--
bool(true)
-- while the lock is held and two wait
bool(false)
bool(false)
queue after the newcomer gave up: 2
-- at the release: the lock goes to the head of the queue, not to whoever asks first
bool(false)
bool(false)
queue: 1
-- the head releases: the next waiter, not the newcomer
bool(false)
bool(false)
-- the queue is empty: the newcomer gets it once it is released
bool(true)
Redis keys that stay: none
