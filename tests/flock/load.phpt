--TEST--
flock: mutual exclusion under load (8 processes x 500 increments of a shared counter)
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_counter_load('flock', lock_test_tmpdir());
?>
--EXPECT--
children: all exited 0
count: exact
