--TEST--
fork (pgsql): a lock inherited by a pcntl_fork() child never releases the parent's hold
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_fork_inherited('pgsql', lock_test_tmpdir());
?>
--EXPECT--
parent acquires: true
child release: exit 0; parent isAcquired true; outside sees locked/acquires true/false
child refresh: exit 0; parent isAcquired true; outside sees locked/acquires true/false
child acquire the same resource: exit 0; parent isAcquired true; outside sees locked/acquires true/false
child destruction: exit 0; parent isAcquired true; outside sees locked/acquires true/false
child exit: exit 0; parent isAcquired true; outside sees locked/acquires true/false
child SIGKILL: exit by signal; parent isAcquired true; outside sees locked/acquires true/false
child another resource: exit 0; parent isAcquired true; outside sees locked/acquires true/false
the child freed its own hold: true
concurrent use: child exit 0, parent saw its hold throughout: true
parent released; outside sees locked/acquires false/true
