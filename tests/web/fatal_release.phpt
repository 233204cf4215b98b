--TEST--
web: a request that dies (fatal error, time limit, uncaught exception, exit) still releases its lock, on every store
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
    foreach (['fatal', 'time_limit', 'exception', 'exit', 'run_fatal'] as $end) {
        $resource = lock_test_resource();
        $params = ['store' => $kind, 'dir' => $dir, 'port' => lock_test_redis_port(), 'prefix' => $prefix, 'resource' => $resource];
        $store = lock_test_store($kind, $dir, $prefix);
        $body = $web->get(['action' => $end] + $params);
        $died = $end === 'exit' || str_contains($body, 'Fatal error');
        printf("%s %s: acquired %s, died %s, locked afterwards %s, next request %s\n", $kind, $end,
            var_export(str_contains($body, 'acquired=true'), true), var_export($died, true),
            var_export($store->isLocked($resource), true), trim($web->get(['action' => 'use'] + $params)));
    }
}
// The same worker answered every request: no process died to free a lock.
var_dump($web->workerPid() === $pid);

// autoRelease=false on Redis: the hold outlives the request.
$resource = lock_test_resource();
$params = ['store' => 'redis', 'port' => lock_test_redis_port(), 'prefix' => $prefix, 'resource' => $resource, 'autoRelease' => '0'];
echo trim($web->get(['action' => 'hold'] + $params)), "\n";
$store = lock_test_store('redis', null, $prefix);
var_dump($store->isLocked($resource));
echo trim($web->get(['action' => 'check'] + $params)), "\n";
$store->forceRelease($resource);
// But run() releases it even after a fatal error.
echo trim(explode("\n", $web->get(['action' => 'run_fatal'] + $params))[0]), "\n";
var_dump($store->isLocked($resource));
?>
--EXPECT--
flock fatal: acquired true, died true, locked afterwards false, next request acquired=true
flock time_limit: acquired true, died true, locked afterwards false, next request acquired=true
flock exception: acquired true, died true, locked afterwards false, next request acquired=true
flock exit: acquired true, died true, locked afterwards false, next request acquired=true
flock run_fatal: acquired true, died true, locked afterwards false, next request acquired=true
semaphore fatal: acquired true, died true, locked afterwards false, next request acquired=true
semaphore time_limit: acquired true, died true, locked afterwards false, next request acquired=true
semaphore exception: acquired true, died true, locked afterwards false, next request acquired=true
semaphore exit: acquired true, died true, locked afterwards false, next request acquired=true
semaphore run_fatal: acquired true, died true, locked afterwards false, next request acquired=true
redis fatal: acquired true, died true, locked afterwards false, next request acquired=true
redis time_limit: acquired true, died true, locked afterwards false, next request acquired=true
redis exception: acquired true, died true, locked afterwards false, next request acquired=true
redis exit: acquired true, died true, locked afterwards false, next request acquired=true
redis run_fatal: acquired true, died true, locked afterwards false, next request acquired=true
bool(true)
acquired=true
bool(true)
locked=true
acquired=true
bool(false)
