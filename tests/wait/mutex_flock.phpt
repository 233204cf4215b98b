--TEST--
flock: mutual exclusion among 8 processes that wait in acquire(true) and run()
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_wait_mutex(['flock'], lock_test_tmpdir(), lock_test_prefix());
?>
--EXPECT--
children: all exited 0
count: exact
two inside at once: 0 time(s)
isLocked afterwards: false
