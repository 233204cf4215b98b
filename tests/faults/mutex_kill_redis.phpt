--TEST--
faults: 8 processes on one Redis lock while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over within its TTL + 100 ms
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

/*
 * A killed holder's key lives out its TTL; the waiters sleep in BLPOP until
 * then (each sleep is bounded by the key's remaining TTL) and take the lock
 * with their next step. Redis times a sleep out on its clock tick, up to 100
 * ms late at its default hz of 10; the waiters end an overdue sleep themselves
 * 10 ms past its time (docs/waiting.md, Redis). The bound's 100 ms then covers those
 * 10 ms, a new connection and a round trip, and waking the processes on a
 * loaded machine. The TTL is short enough for several kills in a few seconds,
 * and long enough that a holder, which needs a few milliseconds, never
 * outlives it. A private server: the test counts on no other client's load.
 */
$server = new LockTestRedisServer();
$dsn = $server->dsn('prefix=' . urlencode(lock_test_prefix()));
$ttl = 1.0;
lock_fault_mutex_kill(static fn () => new Lock\Store\RedisStore($dsn), $ttl, 8.0, [50, 300], $ttl + LOCK_FAULT_SLACK, 4);
?>
--EXPECT--
workers that were not killed exited 0: true
kills: at least 4
some kills landed between the read and the write: true
completed updates: plenty
completed holds that read the same value: 0
count at least every completed update: true
count at most completed + killed holds: true
every killed hold taken over within 1100 ms of the kill: true
