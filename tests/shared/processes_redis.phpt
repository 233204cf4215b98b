--TEST--
redis: readers in three processes hold at once; a writer waits for the last of them; blocking reads wait for the writer
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_shared_processes('redis');
?>
--EXPECT--
-- three readers in three processes
a read: true
b read: true
c read: true
a check: true
b check: true
c check: true
isLocked: true
writer write: false
writer write 0.2: waiting false
here, a writer: false
here, a reader: true
-- a writer waits for the last reader
writer got in before the readers left: false
a release: released
writer got in before the readers left: false
b release: released
writer got in before the readers left: false
c release: released
writer: true
writer check: true
isLocked: true
-- readers are refused while it writes, and a blocking read waits
a read: false
a read 0.2: waiting false
readers got in while it writes: false
writer release: released
a: true
b: true
a check: true
b check: true
writer write: false
a release: released
b release: released
isLocked at the end: false
