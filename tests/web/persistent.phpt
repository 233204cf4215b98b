--TEST--
web: with persistent=1 the next request of the worker reuses the Redis connection; without it the connection closes at request end
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';

// A private Redis server, so that every connection on it is the worker's or ours.
$redis = new LockTestRedisServer();
$resp = $redis->client();
$web = new LockTestWebServer();
$pid = $web->workerPid();
$params = ['store' => 'redis', 'port' => $redis->port, 'prefix' => 'p:', 'resource' => 'r'];

echo "-- persistent=1\n";
echo trim($web->get(['action' => 'use', 'persistent' => '1'] + $params)), "\n";
$ids = $resp->otherClientIds();
var_dump(count($ids));
$same = true;
for ($i = 0; $i < 5; $i++) {
    echo trim($web->get(['action' => 'use', 'persistent' => '1'] + $params)), "\n";
    $same = $same && $resp->otherClientIds() === $ids;
}
echo 'the same connection across requests: ', var_export($same, true), "\n";
// It survives a request that dies, too.
$web->get(['action' => 'fatal', 'persistent' => '1'] + $params);
echo 'after a fatal request: ', var_export($resp->otherClientIds() === $ids, true), "\n";

echo "-- persistent=0\n";
$resp->ok('CLIENT', 'KILL', 'ID', (string) $ids[0]);
lock_test_wait_until(fn () => $resp->otherClientIds() === [], 30, 'the persistent connection to close');
for ($i = 0; $i < 3; $i++) {
    echo trim($web->get(['action' => 'use'] + $params)), "\n";
    lock_test_wait_until(fn () => $resp->otherClientIds() === [], 30, 'the connection to close at request end');
    echo "closed at request end\n";
}
var_dump($web->workerPid() === $pid);
?>
--EXPECT--
-- persistent=1
acquired=true
int(1)
acquired=true
acquired=true
acquired=true
acquired=true
acquired=true
the same connection across requests: true
after a fatal request: true
-- persistent=0
acquired=true
closed at request end
acquired=true
closed at request end
acquired=true
closed at request end
bool(true)
