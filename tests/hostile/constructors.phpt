--TEST--
hostile: store constructors, options and Factory::fromDsn with malformed DSNs (random bytes, truncations, flipped bytes, bad ports and escapes, NUL bytes, huge), isLocked and forceRelease on every store: no warning, only the allowed exceptions, no password in a message
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
hostile_run(['flock', 'semaphore', 'redis'],
    ['construct' => 30, 'dsn' => 35, 'store' => 20, 'factory' => 8, 'lock' => 7],
    30000, 1500);
?>
--EXPECTF--
seed: %d (set LOCK_TEST_SEED to replay)
calls: %d or more
ok
