--TEST--
redis: after acquire(true) waited, the local expiry (getRemainingLifetime(), isExpired()) counts from the hand-off, not from the start of the wait
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$storeCode = lock_test_store_code('redis', null, $prefix);
$store = lock_test_store('redis', null, $prefix);

/*
 * Another process holds the resource for $hold s, then releases; we wait with
 * a 3 s TTL and are handed the hold. The server gives us 3 s from the hand-off,
 * so right after it more than 2 s must be left (the wait's start would leave
 * 3 - $hold). 1.5 s hands over before our first 2 s sleep ends, 2.2 s after it.
 */
foreach ([['write', 1.5], ['write', 2.2], ['read', 1.5]] as [$mode, $hold]) {
    $resource = lock_test_resource('wait-expiry');
    $holder = lock_test_holder($storeCode, $resource, 3.0);
    $holder->send("sleep-release $hold");
    $lock = new Lock\Lock($resource, $store, 3.0);
    $got = $mode === 'write' ? $lock->acquire(true, 10.0) : $lock->acquireRead(true, 10.0);
    $left = $lock->getRemainingLifetime();
    printf("%s after %.1f s: acquired %s, more than 2 s left: %s, expired: %s\n", $mode, $hold,
        var_export($got, true), $left > 2.0 ? 'true' : sprintf('false (%.3f s)', $left),
        var_export($lock->isExpired(), true));
    $lock->release();
    $holder->send('exit');
    $holder->wait();
}
?>
--EXPECT--
write after 1.5 s: acquired true, more than 2 s left: true, expired: false
write after 2.2 s: acquired true, more than 2 s left: true, expired: false
read after 1.5 s: acquired true, more than 2 s left: true, expired: false
