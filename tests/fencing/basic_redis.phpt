--TEST--
redis: getFencingToken() is null unless held exclusively, and greater at every exclusive acquisition: another object, process or store, a promotion, after forceRelease()
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_fence_basic('redis');
?>
--EXPECT--
not held: NULL
held: int
first: greater
the same when asked again: true
released: NULL
the next acquisition: greater
another lock object: greater
the other object, not holding: NULL
another process: greater
another store object: greater
-- read holds
read hold: NULL
promoted: greater
demoted: NULL
promoted again: greater
-- forceRelease
before: greater
after forceRelease: greater
a new holder: greater
the broken holder, asking late, gets no token above it: true
isLocked at the end: false
