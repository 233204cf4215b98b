--TEST--
redis: after a holder's TTL ran out, the next holder's fencing token is greater, and the expired holder never gets one above it
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$resource = lock_test_resource('expiring');
$storeCode = lock_test_store_code('redis', null, $prefix);

/** Whether the expired holder $lock gets no token at all, or one below $newer. */
function stale_below(Lock\Lock $lock, ?int $newer): bool
{
    if ($newer === null) {
        return false;
    }
    try {
        $token = $lock->getFencingToken();
    } catch (Lock\ExpiredException) {
        return true;
    }
    return $token === null || $token < $newer;
}

echo "-- the expired holder took its token in time\n";
$a = new Lock\Lock($resource, $store, 0.3);
$a->acquire();
$ta = $a->getFencingToken();
echo 'a: ', get_debug_type($ta), "\n";
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the hold to expire');
$b = new Lock\Lock($resource, lock_test_store('redis', null, $prefix));
var_dump($b->acquire());
$tb = $b->getFencingToken();
echo 'b greater than a: ', var_export(is_int($tb) && $tb > $ta, true), "\n";
echo 'a never above b: ', var_export(stale_below($a, $tb), true), "\n";
$b->release();

echo "-- the expired holder asks only after another took over\n";
$a = new Lock\Lock($resource, $store, 0.3);
$a->acquire();
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the hold to expire');
var_dump($b->acquire());
$tb2 = $b->getFencingToken();
echo 'b greater than before: ', var_export(is_int($tb2) && $tb2 > $tb, true), "\n";
echo 'a never above b: ', var_export(stale_below($a, $tb2), true), "\n";
$b->release();

echo "-- a holder in another process ended without releasing\n";
[$code, $out] = lock_test_run_php('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $storeCode . ", 0.5, false);\n"
    . 'var_dump($lock->acquire());' . "\n"
    . 'echo "token ", var_export($lock->getFencingToken(), true), "\n";');
echo $out;
$child = (int) substr(strstr($out, 'token '), 6);
lock_test_wait_until(fn () => !$store->isLocked($resource), 30, 'the hold to expire');
var_dump($b->acquire());
echo 'b greater than the child: ', var_export($b->getFencingToken() > $child && $child > $tb2, true), "\n";
$b->release();
var_dump($store->isLocked($resource));
?>
--EXPECTF--
-- the expired holder took its token in time
a: int
bool(true)
b greater than a: true
a never above b: true
-- the expired holder asks only after another took over
bool(true)
b greater than before: true
a never above b: true
-- a holder in another process ended without releasing
bool(true)
token %d
bool(true)
b greater than the child: true
bool(false)
