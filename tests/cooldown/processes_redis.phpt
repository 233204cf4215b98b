--TEST--
redis: release($delay) keeps every other process out for the cooldown, also past the TTL; forceRelease() ends it, and a short one ends by itself and lets the waiter in
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
$code = lock_test_store_code('redis', null, $prefix);
$resource = lock_test_resource('cooldown');
$holder = new LockAgent('holder', $code, $resource);
$other = new LockAgent('other', $code, $resource);
$here = new Lock\Lock($resource, $store);

echo "-- a long cooldown\n";
echo 'holder write: ', $holder->ask('write'), "\n";
echo 'holder release 300: ', $holder->ask('release 300'), "\n";
echo 'holder check: ', $holder->ask('check'), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'other write: ', $other->ask('write'), "\n";
echo 'other write 0.2: ', $other->ask('write 0.2'), ' ', $other->result(), "\n";
echo 'holder write: ', $holder->ask('write'), "\n";
echo 'here, acquire: ', lock_shared_try(fn () => $here->acquire()), "\n";
$other->start('write 60');
echo 'other got in during the cooldown: ', var_export($other->answered(), true), "\n";
$store->forceRelease($resource);
echo 'after forceRelease, other: ', $other->result(), "\n";
echo 'other release: ', $other->ask('release'), "\n";

echo "-- a cooldown longer than the TTL counts from the release\n";
$short = new LockAgent('short', $code, $resource, 0.5);
echo 'short write: ', $short->ask('write'), "\n";
echo 'short release 300: ', $short->ask('release 300'), "\n";
// Twice the TTL: a cooldown cut short by the TTL would be over.
usleep(1000000);
echo 'isLocked past the TTL: ', var_export($store->isLocked($resource), true), "\n";
echo 'other write: ', $other->ask('write'), "\n";
$store->forceRelease($resource);
echo 'isLocked after forceRelease: ', var_export($store->isLocked($resource), true), "\n";
$short->stop();

echo "-- a short cooldown ends by itself: a waiter that waited before the release gets in\n";
echo 'holder write: ', $holder->ask('write'), "\n";
$other->start('write 60');
echo 'holder release 1: ', $holder->ask('release 1'), "\n";
echo 'other: ', $other->result(), "\n";
echo 'other release: ', $other->ask('release'), "\n";

echo "-- and a waiter that comes during the cooldown\n";
echo 'holder write: ', $holder->ask('write'), "\n";
echo 'holder release 1: ', $holder->ask('release 1'), "\n";
$other->start('write 60');
echo 'other: ', $other->result(), "\n";
echo 'other release: ', $other->ask('release'), "\n";

echo "-- without a delay, nothing is left behind\n";
echo 'holder write: ', $holder->ask('write'), "\n";
echo 'holder release: ', $holder->ask('release'), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'other write: ', $other->ask('write'), "\n";
echo 'other release: ', $other->ask('release'), "\n";
$holder->stop();
$other->stop();
?>
--EXPECT--
-- a long cooldown
holder write: true
holder release 300: released
holder check: false
isLocked: true
other write: false
other write 0.2: waiting false
holder write: false
here, acquire: false
other got in during the cooldown: false
after forceRelease, other: true
other release: released
-- a cooldown longer than the TTL counts from the release
short write: true
short release 300: released
isLocked past the TTL: true
other write: false
isLocked after forceRelease: false
-- a short cooldown ends by itself: a waiter that waited before the release gets in
holder write: true
holder release 1: released
other: true
other release: released
-- and a waiter that comes during the cooldown
holder write: true
holder release 1: released
other: true
other release: released
-- without a delay, nothing is left behind
holder write: true
holder release: released
isLocked: false
other write: true
other release: released
