--TEST--
redis: acquire() on a read hold promotes it: it waits for the other readers like a writer; acquireRead() on a write hold demotes it
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_shared_promote('redis');
?>
--EXPECT--
a read: true
b acquireRead: true
-- a promotes while b reads
a write: false
a got in while b reads: false
b still reads: true
a: true
a check: true
isLocked: true
here, a reader: false
here, a writer: false
-- a demotes
a read: true
a check: true
a fence: NULL
here, a reader: true
here, a writer: false
a release: released
isLocked with b reading: true
here, a writer: false
here, a writer once b left: true
-- a demotes while a writer waits
a write: true
a read: true
w got in while a reads: false
a release: released
w: true
w release: released
isLocked at the end: false
