--TEST--
redis: every read hold has a TTL of its own: one reader's hold expires while another's lasts, and refresh() extends only its own
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';

$store = lock_test_store('redis');
$resource = lock_test_resource('readttl');
$short = new Lock\Lock($resource, $store, 0.3);
$long = new Lock\Lock($resource, $store, 300.0);
$writer = new Lock\Lock($resource, $store);

echo 'short acquireRead: ', lock_shared_try(fn () => $short->acquireRead()), "\n";
echo 'long acquireRead: ', lock_shared_try(fn () => $long->acquireRead()), "\n";
$left = $long->getRemainingLifetime();
echo 'long remaining lifetime: ', var_export(is_float($left) && $left > 0 && $left <= 300.0, true), "\n";
lock_test_wait_until(fn () => !$short->isAcquired(), 30, 'the short read hold to expire');
echo 'short isExpired: ', var_export($short->isExpired(), true), "\n";
echo 'long isAcquired: ', lock_shared_try(fn () => $long->isAcquired()), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'writer acquire: ', lock_shared_try(fn () => $writer->acquire()), "\n";
try {
    $short->refresh();
    echo "short refresh: no exception\n";
} catch (Lock\ExpiredException) {
    echo "short refresh: the hold is gone\n";
}
echo 'short acquireRead again: ', lock_shared_try(fn () => $short->acquireRead()), "\n";
$short->release();
$long->release();
echo 'isLocked after both released: ', var_export($store->isLocked($resource), true), "\n";

echo "-- refresh() extends one read hold\n";
$short->acquireRead();
$long->acquireRead();
$short->refresh(300.0);
$long->refresh(0.3);
lock_test_wait_until(fn () => !$long->isAcquired(), 30, 'the shortened read hold to expire');
// Past the first TTL of the short lock: only the refresh keeps it.
usleep(500000);
echo 'refreshed reader isAcquired: ', lock_shared_try(fn () => $short->isAcquired()), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'writer acquire: ', lock_shared_try(fn () => $writer->acquire()), "\n";
$short->release();
echo 'writer acquire once it left: ', lock_shared_try(fn () => $writer->acquire()), "\n";
$writer->release();
?>
--EXPECT--
short acquireRead: true
long acquireRead: true
long remaining lifetime: true
short isExpired: true
long isAcquired: true
isLocked: true
writer acquire: false
short refresh: the hold is gone
short acquireRead again: true
isLocked after both released: false
-- refresh() extends one read hold
refreshed reader isAcquired: true
isLocked: true
writer acquire: false
writer acquire once it left: true
