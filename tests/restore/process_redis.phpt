--TEST--
redis: another process restores a hold by its owner token and refreshes or releases it, whether the process that took it ended or still runs
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$storeCode = lock_test_store_code('redis', null, $prefix);
$factory = new Lock\Factory($store);
$resource = lock_test_resource('restore');
$factoryCode = '$factory = new Lock\Factory(' . $storeCode . ");\n";

/** The token a child printed on a line "owner TOKEN". */
function owner_of(string $out): string
{
    if (!preg_match('/^owner ([0-9a-f]{32})$/m', $out, $m)) {
        echo "FAIL: no owner in:\n$out";
        exit(1);
    }
    return $m[1];
}

echo "-- the process that took the hold ended; we restore it here\n";
$ttl = lock_test_patience(2.0);
[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->createLock(' . var_export($resource, true) . ', ' . var_export($ttl, true) . ", false);\n"
    . 'echo "acquired ", var_export($lock->acquire(), true), "\n", "owner ", $lock->getOwner(), "\n";');
echo strtok($out, "\n"), "\n";
$owner = owner_of($out);
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
$restored = $factory->restoreLock($resource, $owner, 600.0);
echo 'isAcquired: ', var_export($restored->isAcquired(), true), "\n";
$restored->refresh();
// Past the TTL it was taken with: only the refresh keeps it.
usleep((int) (($ttl + 0.5) * 1e6));
echo 'isLocked past its first TTL: ', var_export($store->isLocked($resource), true), "\n";
echo 'still ours: ', var_export($restored->isAcquired(), true), "\n";
$restored->release();
echo 'isLocked after release: ', var_export($store->isLocked($resource), true), "\n";

echo "-- the holder still runs; another process restores and releases its hold\n";
$holder = new LockAgent('holder', $storeCode, $resource);
echo 'holder write: ', $holder->ask('write'), "\n";
$owner = $holder->ask('owner');
[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->restoreLock(' . var_export($resource, true) . ', ' . var_export($owner, true) . ");\n"
    . 'echo "owner matches: ", var_export($lock->getOwner() === ' . var_export($owner, true) . ', true), "\n";' . "\n"
    . 'echo "isAcquired: ", var_export($lock->isAcquired(), true), "\n";' . "\n"
    . '$lock->refresh();' . "\n"
    . 'echo "refreshed\n";' . "\n"
    . '$lock->release();' . "\n"
    . 'echo "released\n";');
echo $out;
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'holder check: ', $holder->ask('check'), "\n";
echo 'holder release: ', $holder->ask('release'), "\n";

echo "-- another process restores and refreshes; the holder keeps its hold\n";
echo 'holder write: ', $holder->ask('write'), "\n";
$owner = $holder->ask('owner');
[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->restoreLock(' . var_export($resource, true) . ', ' . var_export($owner, true) . ");\n"
    . '$lock->refresh(600.0);' . "\n"
    . 'echo "refreshed\n";');
echo $out;
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
echo 'holder check: ', $holder->ask('check'), "\n";
echo 'holder release: ', $holder->ask('release'), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
$holder->stop();
?>
--EXPECT--
-- the process that took the hold ended; we restore it here
acquired true
isLocked after it ended: true
isAcquired: true
isLocked past its first TTL: true
still ours: true
isLocked after release: false
-- the holder still runs; another process restores and releases its hold
holder write: true
owner matches: true
isAcquired: true
refreshed
released
isLocked: false
holder check: false
holder release: Lock\ExpiredException
-- another process restores and refreshes; the holder keeps its hold
holder write: true
refreshed
isLocked after it ended: true
holder check: true
holder release: released
isLocked: false
