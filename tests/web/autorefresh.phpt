--TEST--
web: $autoRefresh in a php-fpm worker that serves many requests: a hold released at request end leaves its refreshing; one without autoRelease goes on being refreshed after its request, within its bound, and a later request adopts it; a worker that the master replaces (pm.max_requests) refreshes nothing after it
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';

$redis = new LockTestRedisServer();
$web = new LockTestFpmServer();
$pid = $web->workerPid();
$ttl = lock_test_valgrind() ? 2.0 : 0.5;
$store = new Lock\Store\RedisStore('redis://127.0.0.1:' . $redis->port, ['prefix' => 'p:']);
$params = ['store' => 'redis', 'port' => $redis->port, 'prefix' => 'p:', 'ttl' => (string) $ttl, 'autoRefresh' => '1'];

echo "-- released at request end\n";
echo trim($web->get(['action' => 'hold', 'resource' => 'a'] + $params)), "\n";
var_dump($store->isLocked('a'));
echo trim($web->get(['action' => 'refreshing'] + $params)), "\n";

echo "-- kept after its request\n";
$out = trim($web->get(['action' => 'keep', 'resource' => 'b', 'autoRelease' => '0'] + $params));
echo substr($out, 0, strpos($out, ' ')), "\n";
$owner = substr($out, strpos($out, 'owner=') + 6);
usleep((int) (4 * $ttl * 1e6));
echo 'after four TTLs: locked ', var_export($store->isLocked('b'), true), "\n";
echo trim($web->get(['action' => 'refreshing'] + $params)), "\n";
// Another request of the worker adopts it and releases it.
echo trim($web->get(['action' => 'restore', 'resource' => 'b', 'owner' => $owner] + $params)), "\n";
var_dump($store->isLocked('b'));
echo trim($web->get(['action' => 'refreshing'] + $params)), "\n";

echo "-- kept after its request, within a bound\n";
$bound = 3 * $ttl;
$start = microtime(true);
$out = trim($web->get(['action' => 'keep', 'resource' => 'c', 'autoRelease' => '0', 'autoRefresh' => (string) $bound] + $params));
echo substr($out, 0, strpos($out, ' ')), "\n";
usleep((int) (2 * $ttl * 1e6));
echo 'within the bound: locked ', var_export($store->isLocked('c'), true), "\n";
$lock = new Lock\Lock('c', $store, 10.0);
var_dump($lock->acquire(true, 10 * $ttl));
echo 'gone by bound + TTL: ', var_export(microtime(true) - $start <= $bound + $ttl + lock_test_patience(0.5), true), "\n";
$lock->release();
echo trim($web->get(['action' => 'refreshing'] + $params)), "\n";
var_dump($web->workerPid() === $pid);
$web->stop();

echo "-- kept after its request by a worker that then ends\n";
$web = new LockTestFpmServer(2);
$out = trim($web->get(['action' => 'keep', 'resource' => 'd', 'autoRelease' => '0'] + $params));
echo substr($out, 0, strpos($out, ' ')), "\n";
usleep((int) (3 * $ttl * 1e6));
echo 'after three TTLs: locked ', var_export($store->isLocked('d'), true), "\n";
// Its second request: the master replaces it afterwards.
$pid = $web->workerPid();
$ended = microtime(true);
$deadline = $ended + 30;
while (file_exists("/proc/$pid") && microtime(true) < $deadline) {
    usleep(5000);
}
$ended = microtime(true);
$lock = new Lock\Lock('d', $store, 10.0);
var_dump($lock->acquire(true, 10 * $ttl));
echo 'free within a TTL of its end: ', var_export(microtime(true) - $ended <= $ttl + lock_test_patience(0.5), true), "\n";
$lock->release();
var_dump($web->workerPid() !== $pid);
?>
--EXPECT--
-- released at request end
acquired=true
bool(false)
refreshing=0
-- kept after its request
acquired=true
after four TTLs: locked true
refreshing=1
held=true
bool(false)
refreshing=0
-- kept after its request, within a bound
acquired=true
within the bound: locked true
bool(true)
gone by bound + TTL: true
refreshing=0
bool(true)
-- kept after its request by a worker that then ends
acquired=true
after three TTLs: locked true
bool(true)
free within a TTL of its end: true
bool(true)
