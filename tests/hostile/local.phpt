--TEST--
hostile: random calls on Lock, Factory, FlockStore and SemaphoreStore with wrong types, extreme numbers, hostile names and the wrong order: no warning, only the allowed exceptions
--EXTENSIONS--
lock
pcntl
posix
--INI--
error_reporting=-1
display_errors=1
memory_limit=512M
--FILE--
<?php
require __DIR__ . '/driver.inc';
lock_test_hang_guard(120);
hostile_run(['flock', 'semaphore'],
    ['lock' => 70, 'factory' => 8, 'store' => 12, 'order' => 2, 'construct' => 5],
    35000, 1750);
?>
--EXPECTF--
seed: %d (set LOCK_TEST_SEED to replay)
calls: %d or more
ok
