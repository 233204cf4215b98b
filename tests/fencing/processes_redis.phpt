--TEST--
redis: fencing tokens strictly increase over 8 processes x 200 exclusive acquisitions
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(240);
lock_fence_processes('redis');
?>
--EXPECT--
children: all exited 0
tokens: one per acquisition
strictly increasing in acquisition order: true
all different: true
the next one is greater than all: true
