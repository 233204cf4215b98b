--TEST--
hostile: random calls on Lock, Factory and RedisStore against a private redis-server that is killed halfway and restarted later: no warning, no hang, only the allowed exceptions, no password in a message
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
hostile_run(['redis'],
    ['lock' => 74, 'factory' => 8, 'store' => 14, 'order' => 4],
    35000, 1750, killAt: 0.5, restartAt: 0.75);
?>
--EXPECTF--
seed: %d (set LOCK_TEST_SEED to replay)
calls: %d or more
ok
