--TEST--
topology: an $autoRefresh hold of a 10 s TTL through redis+sentinel:// across SENTINEL FAILOVER with the replicas in step: the hold survives, the refresher refreshes it at the new master, and another process never gets the resource until the holder releases it
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_SENTINEL_PORTS', 'LOCK_TEST_TOPOLOGY_SCRIPT');
?>
--FILE--
<?php
require __DIR__ . '/autorefresh_failover.inc';
lock_test_hang_guard(100);

/*
 * The replicas have the hold (WAIT) before the switch, so the promoted one has it with at
 * least two thirds of the TTL left: time enough for the refresher, whose next refreshes ask
 * the sentinels first, to reach it there. Only one outcome is right here.
 */
autorefresh_failover('SENTINEL FAILOVER', 10.0, true);
?>
--EXPECT--
-- SENTINEL FAILOVER
bool(true)
held at the first master: true
the key at the new master only moved on (holder, nobody, contender): true
outcome: the hold survived, refreshed at the new master
the holder's isAcquired() says what the new master has: true
the contender holds it only where the new master says so: true
never two holders: true
the contender's hold was never broken: true
the holder's refresh() says so too: true
the holder's release: ok
the contender holds it now: true
the holder's isAcquired(): false
contender exited: 0
