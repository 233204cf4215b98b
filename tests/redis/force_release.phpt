--TEST--
redis: isLocked() and forceRelease()
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_force_release('redis', lock_test_tmpdir());
?>
--EXPECT--
-- in one process
isLocked before: false
isLocked held: true
isLocked after forceRelease: false
old holder isAcquired: false
other acquires: true
old holder isAcquired: false
new holder isAcquired: true
third is refused: true
-- across processes, the old holder ends with release
isLocked: true
we acquire: true
still ours: true
isLocked: true
third is refused: true
-- across processes, the old holder ends with exit
isLocked: true
we acquire: true
still ours: true
isLocked: true
third is refused: true
-- across processes, the old holder ends with kill
isLocked: true
we acquire: true
still ours: true
isLocked: true
third is refused: true
