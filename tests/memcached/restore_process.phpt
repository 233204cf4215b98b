--TEST--
memcached: another process restores a hold by its owner token and refreshes or releases it, whether the process that took it ended or still runs; a wrong token restores nothing
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$prefix = lock_test_prefix();
$store = lock_test_store('memcached', null, $prefix);
$storeCode = lock_test_store_code('memcached', null, $prefix);
$factory = new Lock\Factory($store);
$resource = lock_test_resource('restore');
$factoryCode = '$factory = new Lock\Factory(' . $storeCode . ");\n";

echo "-- the process that took the hold ended; we restore it here\n";
[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->createLock(' . var_export($resource, true) . ", 30.0, false);\n"
    . 'echo "acquired ", var_export($lock->acquire(), true), "\n", "owner ", $lock->getOwner(), "\n";');
echo strtok($out, "\n"), "\n";
preg_match('/^owner ([0-9a-f]{32})$/m', $out, $m);
$owner = $m[1];
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
$wrong = $factory->restoreLock($resource, str_repeat('0', 32));
echo 'a wrong token: isAcquired ', var_export($wrong->isAcquired(), true), "\n";
try {
    $wrong->release();
} catch (Lock\LockException $e) {
    echo 'a wrong token: release: ', get_class($e), "\n";
}
echo 'still locked: ', var_export($store->isLocked($resource), true), "\n";
$restored = $factory->restoreLock($resource, $owner, 600.0);
echo 'isAcquired: ', var_export($restored->isAcquired(), true), "\n";
$restored->refresh();
$restored->release();
echo 'isLocked after release: ', var_export($store->isLocked($resource), true), "\n";

echo "-- the holder still runs; another process restores and releases its hold\n";
$owner = 'holder-' . bin2hex(random_bytes(16));
$holder = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $storeCode . ', 30.0, true, '
    . var_export($owner, true) . ");\n"
    . 'echo "held ", var_export($lock->acquire(), true), "\n";' . "\n"
    . 'while (($line = fgets(STDIN)) !== false) { echo "check ", var_export($lock->isAcquired(), true), "\n"; }');
echo trim($holder->waitFor('held true')), "\n";
[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->restoreLock(' . var_export($resource, true) . ', ' . var_export($owner, true) . ");\n"
    . 'echo "isAcquired: ", var_export($lock->isAcquired(), true), "\n";' . "\n"
    . '$lock->refresh();' . "\n"
    . 'echo "refreshed\n";' . "\n"
    . '$lock->release();' . "\n"
    . 'echo "released\n";');
echo $out;
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
$holder->send('check');
echo trim($holder->waitFor('check false')), "\n";
$holder->wait();
?>
--EXPECT--
-- the process that took the hold ended; we restore it here
acquired true
isLocked after it ended: true
a wrong token: isAcquired false
a wrong token: release: Lock\LostException
still locked: true
isAcquired: true
isLocked after release: false
-- the holder still runs; another process restores and releases its hold
held true
isAcquired: true
refreshed
released
isLocked: false
check false
