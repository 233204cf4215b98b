--TEST--
redis: a holder killed with SIGKILL leaves the lock until its TTL runs out; a blocked waiter then gets it
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_kill_holder('redis', lock_test_tmpdir(), lock_test_prefix(), 0.5);
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
