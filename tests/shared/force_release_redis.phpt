--TEST--
redis: forceRelease() breaks read holds and wakes the waiters: a writer waiting for readers, a reader waiting for a writer
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_shared_force_release('redis');
?>
--EXPECT--
-- in one process
isLocked: true
isLocked after forceRelease: false
readers isAcquired: false false
a writer acquires: true
an old reader releases: released
the writer still holds: true
an old reader acquireRead: false
isLocked: true
-- readers in other processes, a writer waits for them
a read: true
b read: true
writer got in while they read: false
writer: true
a check: false
b check: false
a release: released
writer check: true
isLocked: true
a read: false
-- a reader waits for the writer
a got in while it writes: false
a: true
writer check: false
writer release: released
a check: true
isLocked: true
a release: released
isLocked at the end: false
