--TEST--
redis: a lock from restoreLock() does not release at its request end unless autoRelease is asked for
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
// Under valgrind the children are checked too: what they do is this test's subject.
lock_test_check_children();

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$resource = lock_test_resource('restore');
$factoryCode = '$factory = new Lock\Factory(' . lock_test_store_code('redis', null, $prefix) . ");\n";

[, $out] = lock_test_run_php($factoryCode
    . '$lock = $factory->createLock(' . var_export($resource, true) . ", 300.0, false);\n"
    . 'var_dump($lock->acquire());' . "\n"
    . 'echo $lock->getOwner(), "\n";');
[$acquired, $owner] = explode("\n", trim($out));
echo $acquired, "\n";
echo 'isLocked after the taking process ended: ', var_export($store->isLocked($resource), true), "\n";

/** Runs a child that restores the hold with $args after the owner, refreshes it and ends without releasing. */
$restoreIn = static function (string $args) use ($factoryCode, $resource, $owner): string {
    [, $out] = lock_test_run_php($factoryCode
        . '$lock = $factory->restoreLock(' . var_export($resource, true) . ', ' . var_export($owner, true) . $args . ");\n"
        . '$lock->refresh();' . "\n"
        . 'echo "refreshed\n";');
    return trim($out);
};
echo 'default: ', $restoreIn(''), "\n";
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
echo 'autoRelease false: ', $restoreIn(', 300.0, false'), "\n";
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
echo 'autoRelease true: ', $restoreIn(', 300.0, true'), "\n";
echo 'isLocked after it ended: ', var_export($store->isLocked($resource), true), "\n";
?>
--EXPECT--
bool(true)
isLocked after the taking process ended: true
default: refreshed
isLocked after it ended: true
autoRelease false: refreshed
isLocked after it ended: true
autoRelease true: refreshed
isLocked after it ended: false
