--TEST--
redis_tls: a lock inherited by a pcntl_fork() child over TLS never releases the parent's hold, and the child's calls never write on the parent's TLS session
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_REDIS_TLS_PORT', 'LOCK_TEST_TLS_DIR');
?>
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_fork_inherited('redis-tls', lock_test_tmpdir());
echo "-- unheld\n";
lock_test_fork_unheld('redis-tls', lock_test_tmpdir());
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
-- unheld
child: held
parent object acquires: false
parent object isAcquired: false
a new object acquires: false
child exit: 0
parent object acquires after the child ended: true
