--TEST--
flock: a holder killed with SIGKILL frees the lock at once; a blocked waiter gets it
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_kill_holder('flock', lock_test_tmpdir());
?>
--EXPECT--
locked while the holder lives: true
busy: true
waiting
holder killed: true
waiter acquired: true
waiter holds: true
waiter exited: true
free afterwards: true
