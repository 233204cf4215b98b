--TEST--
redis: a waiting writer is not starved by readers that keep overlapping read holds
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_shared_writer_not_starved('redis');
?>
--EXPECT--
the writer got the lock within its timeout: true
readers inside while it writes: 0
the readers still ran: true
readers: all exited 0
isLocked at the end: false
