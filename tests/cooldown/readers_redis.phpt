--TEST--
redis: a cooldown keeps readers out too, from a write hold and from a read hold
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
$reader = new LockAgent('reader', $code, $resource);

echo "-- after a write hold\n";
echo 'holder write: ', $holder->ask('write'), "\n";
echo 'holder release 300: ', $holder->ask('release 300'), "\n";
echo 'reader read: ', $reader->ask('read'), "\n";
echo 'reader read 0.2: ', $reader->ask('read 0.2'), ' ', $reader->result(), "\n";
$reader->start('read 60');
echo 'reader got in during the cooldown: ', var_export($reader->answered(), true), "\n";
$store->forceRelease($resource);
echo 'after forceRelease, reader: ', $reader->result(), "\n";
echo 'reader release: ', $reader->ask('release'), "\n";

echo "-- after the last read hold\n";
echo 'holder read: ', $holder->ask('read'), "\n";
echo 'holder release 300: ', $holder->ask('release 300'), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
echo 'reader read: ', $reader->ask('read'), "\n";
echo 'reader write: ', $reader->ask('write'), "\n";
$store->forceRelease($resource);
echo 'after forceRelease, reader read: ', $reader->ask('read'), "\n";
echo 'reader release: ', $reader->ask('release'), "\n";
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";
$holder->stop();
$reader->stop();
?>
--EXPECT--
-- after a write hold
holder write: true
holder release 300: released
reader read: false
reader read 0.2: waiting false
reader got in during the cooldown: false
after forceRelease, reader: true
reader release: released
-- after the last read hold
holder read: true
holder release 300: released
isLocked: true
reader read: false
reader write: false
after forceRelease, reader read: true
reader release: released
isLocked: false
