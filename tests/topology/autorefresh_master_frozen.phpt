--TEST--
topology: an $autoRefresh hold of a 2 s TTL through redis+sentinel:// whose master is frozen (SIGSTOP) until the sentinels promote a replica, then woken: the refresher, retrying until the TTL would end, goes on at the promoted replica if the hold is there in time, or stops; what it sent the frozen master is lost with the demotion; the holder's isAcquired() and refresh() say which; never two holders, never a hold taken again by the refresher
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
 * Either outcome (autorefresh_failover.inc). The sentinels promote a replica a second
 * (down-after-milliseconds) and an election after the freeze; the refresher's refreshes
 * time out meanwhile, and it gives the hold up if the TTL passes first. Woken, the old
 * master runs the refreshes it received frozen and takes more until the sentinels demote
 * it (the failover window of docs/topologies.md); whatever it took then is gone with the
 * demotion. The contender starts after that.
 */
autorefresh_failover('the master frozen', lock_test_valgrind() ? 4.0 : 2.0);
?>
--EXPECTF--
-- the master frozen
bool(true)
held at the first master: true
the key at the new master only moved on (holder, nobody, contender): true
outcome: %s
the holder's isAcquired() says what the new master has: true
the contender holds it only where the new master says so: true
never two holders: true
the contender's hold was never broken: true
the holder's refresh() says so too: true
the holder's release: ok
the contender holds it now: true
the holder's isAcquired(): false
contender exited: 0
