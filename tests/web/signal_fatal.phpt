--TEST--
web: a bailout (fatal error, memory limit) in a signal handler that runs while a Redis wait is mid-exchange closes that persistent connection; the next request never reads its stale reply
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';

$redis = new LockTestRedisServer();
$params = ['store' => 'redis', 'port' => $redis->port, 'prefix' => 'p:', 'resource' => 'r', 'persistent' => '1'];

// Another owner holds the resource for the whole test.
$store = new Lock\Store\RedisStore('redis://127.0.0.1:' . $redis->port, ['prefix' => 'p:']);
$held = new Lock\Lock('r', $store, 300.0);
var_dump($held->acquire());

foreach (['error' => 'Fatal error', 'memory' => 'Allowed memory size'] as $how => $says) {
    echo "-- $how\n";
    // A worker of its own: after a bailout in a handler, pcntl runs no more handlers in that process.
    $web = new LockTestWebServer();
    // Leaves a pooled connection in the worker.
    echo trim($web->get(['action' => 'try'] + $params)), "\n";
    // The handler bails out after 1 s, while the waiter's BLPOP (a 2 s sleep) is unanswered.
    $body = $web->get(['action' => 'signal_fatal', 'how' => $how] + $params);
    if ($how === 'memory' && getenv('USE_ZEND_ALLOC') === '0') {
        // The valgrind pass turns PHP's allocator off, and with it the memory limit: the
        // handler's next line, a fatal error, is the bailout then.
        $says = 'Fatal error';
    }
    echo 'the request ended with a bailout: ', var_export(str_contains($body, $says) && !str_contains($body, 'bool('), true), "\n";
    // The abandoned BLPOP's reply comes once its sleep ends.
    usleep(1500000);
    for ($i = 0; $i < 3; $i++) {
        echo trim($web->get(['action' => 'try'] + $params)), "\n";
    }
    $web->stop();
}
var_dump($held->isAcquired());
$held->release();
?>
--EXPECT--
bool(true)
-- error
acquired=false locked=true
the request ended with a bailout: true
acquired=false locked=true
acquired=false locked=true
acquired=false locked=true
-- memory
acquired=false locked=true
the request ended with a bailout: true
acquired=false locked=true
acquired=false locked=true
acquired=false locked=true
bool(true)
