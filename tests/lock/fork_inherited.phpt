--TEST--
A lock inherited by a pcntl_fork() child never releases, refreshes or otherwise touches the parent's hold, on every store; a hold the child takes is the child's
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard(120);

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    lock_test_fork_inherited($kind, lock_test_tmpdir());
    echo "- a lock object made by the parent, held by the child\n";
    lock_test_fork_unheld($kind, lock_test_tmpdir());
});
?>
--EXPECT--
-- flock, semaphore, redis, pgsql, pgsql-table, mysql, mysql-table, memcached
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
- a lock object made by the parent, held by the child
child: held
parent object acquires: false
parent object isAcquired: false
a new object acquires: false
child exit: 0
parent object acquires after the child ended: true
