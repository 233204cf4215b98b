--TEST--
mysql: a bailout (fatal error, memory limit) in a signal handler that runs while a web request waits in GET_LOCK leaves no queued session in the worker: once the holder releases, a third party acquires, and the worker's next request finds the resource free
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';
require __DIR__ . '/../inc/mysql.inc';

foreach (['error' => 'Fatal error', 'memory' => 'Allowed memory size'] as $how => $says) {
    echo "-- $how\n";
    $prefix = lock_test_prefix();
    $store = lock_test_mysql_store(['prefix' => $prefix]);
    $params = ['store' => 'mysql', 'dsn' => lock_test_mysql_dsn(), 'prefix' => $prefix, 'resource' => 'r'];
    $held = new Lock\Lock('r', $store, null);
    var_dump($held->acquire());
    // A worker of its own: after a bailout in a handler, pcntl runs no more handlers in that process.
    $web = new LockTestWebServer();
    $pid = $web->workerPid();
    // The handler bails out after 1 s, while the request's acquire(true, 5.0) waits in GET_LOCK.
    $body = $web->get(['action' => 'signal_fatal', 'how' => $how] + $params);
    if ($how === 'memory' && getenv('USE_ZEND_ALLOC') === '0') {
        // Without PHP's allocator (the valgrind pass) there is no memory limit: the handler's fatal error is the bailout.
        $says = 'Fatal error';
    }
    echo 'the request ended with a bailout: ', var_export(str_contains($body, $says) && !str_contains($body, 'bool('), true), "\n";
    echo 'nobody waits for the resource: ', var_export(lock_test_mysql_waiters($prefix, 'r') === [], true), "\n";
    $held->release();
    // The interrupted wait's GET_LOCK, had it stayed queued, would be granted now and kept by the worker.
    $third = new Lock\Lock('r', $store, null);
    var_dump($third->acquire(true, lock_test_patience(3.0)));
    $third->release();
    echo trim($web->get(['action' => 'try'] + $params)), "\n";
    var_dump(lock_test_mysql_holder($prefix, 'r'), $web->workerPid() === $pid);
    $web->stop();
}
?>
--EXPECT--
-- error
bool(true)
the request ended with a bailout: true
nobody waits for the resource: true
bool(true)
acquired=true locked=true
NULL
bool(true)
-- memory
bool(true)
the request ended with a bailout: true
nobody waits for the resource: true
bool(true)
acquired=true locked=true
NULL
bool(true)
