--TEST--
web: a request that ends holding a lock releases it at request end (php -S, one worker), on every store
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';

$web = new LockTestWebServer();
$dir = lock_test_tmpdir();
$prefix = lock_test_prefix();
$pid = $web->workerPid();
foreach (['flock', 'semaphore', 'redis'] as $kind) {
    echo "-- $kind\n";
    $resource = lock_test_resource();
    $params = ['store' => $kind, 'dir' => $dir, 'port' => lock_test_redis_port(), 'prefix' => $prefix, 'resource' => $resource];
    $store = lock_test_store($kind, $dir, $prefix);
    echo trim($web->get(['action' => 'hold'] + $params)), "\n";
    // The worker lives on, so only request shutdown can have released it.
    var_dump($store->isLocked($resource));
    echo trim($web->get(['action' => 'check'] + $params)), "\n";
    echo trim($web->get(['action' => 'hold'] + $params)), "\n";
    echo trim($web->get(['action' => 'hold'] + $params)), "\n";
    var_dump($store->isLocked($resource));
    // A lock we hold is seen as busy by the next request.
    $ours = new Lock\Lock($resource, $store);
    $ours->acquire();
    echo trim($web->get(['action' => 'hold'] + $params)), "\n";
    $ours->release();
}
var_dump($web->workerPid() === $pid);
?>
--EXPECT--
-- flock
acquired=true
bool(false)
locked=false
acquired=true
acquired=true
bool(false)
acquired=false
-- semaphore
acquired=true
bool(false)
locked=false
acquired=true
acquired=true
bool(false)
acquired=false
-- redis
acquired=true
bool(false)
locked=false
acquired=true
acquired=true
bool(false)
acquired=false
bool(true)
