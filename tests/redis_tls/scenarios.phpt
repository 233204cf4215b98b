--TEST--
redis_tls: over verified TLS the store keeps its contract: 8 processes exclude each other, a waiter is woken by the release, shared holds, fencing tokens across processes, a killed holder is taken over
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
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard();
echo "-- mutual exclusion\n";
lock_test_counter_load('redis-tls', lock_test_tmpdir());
echo "-- shared holds across processes\n";
lock_shared_processes('redis-tls');
echo "-- fencing across processes\n";
lock_fence_processes('redis-tls');
echo "-- a killed holder\n";
lock_test_kill_holder('redis-tls', lock_test_tmpdir(), '', 2.0);
?>
--EXPECT--
-- mutual exclusion
children: all exited 0
count: exact
-- shared holds across processes
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
-- fencing across processes
children: all exited 0
tokens: one per acquisition
strictly increasing in acquisition order: true
all different: true
the next one is greater than all: true
-- a killed holder
locked while the holder lives: true
busy: true
waiting
holder killed: true
waiter acquired: true
waiter holds: true
waiter exited: true
free afterwards: true
