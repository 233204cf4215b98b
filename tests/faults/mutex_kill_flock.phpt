--TEST--
faults: 8 processes on one flock lock while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over at once
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$dir = lock_test_tmpdir('flock');
/*
 * "At once": the kernel drops a dead process's flock when it closes its files,
 * which wakes the waiters; no timer is involved. 250 ms is far beyond that
 * path (a fraction of a millisecond when idle) yet covers waking two processes
 * on a loaded two-core machine; a hold the kernel did not free would never be
 * taken over at all, flock having no TTL.
 */
lock_fault_mutex_kill(static fn () => new Lock\Store\FlockStore($dir), null, 4.0, [20, 120], 0.25, 10);
?>
--EXPECT--
workers that were not killed exited 0: true
kills: at least 10
some kills landed between the read and the write: true
completed updates: plenty
completed holds that read the same value: 0
count at least every completed update: true
count at most completed + killed holds: true
every killed hold taken over within 250 ms of the kill: true
