--TEST--
faults: 8 processes on one semaphore lock while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over at once
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

/*
 * "At once": SEM_UNDO gives a dead process's semaphore back as it exits,
 * which wakes the waiters; no timer is involved. 250 ms is far beyond that
 * path (a fraction of a millisecond when idle) yet covers waking two processes
 * on a loaded two-core machine; a hold the kernel did not free would never be
 * taken over at all, a semaphore having no TTL.
 */
lock_fault_mutex_kill(static fn () => new Lock\Store\SemaphoreStore(), null, 4.0, [20, 120], 0.25, 10);
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
