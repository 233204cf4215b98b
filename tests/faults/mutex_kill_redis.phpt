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
 * with their next step. Redis ends a blocked command's timeout on its timer,
 * hz times a second, so a sleep meant to end at the key's expiry ends up to
 * 1000/hz ms late: 100 ms at the default hz of 10, which alone would use up
 * the bound. This server runs at hz 100 (10 ms), which leaves the bound's
 * 100 ms for the round trip and for waking the processes on a loaded machine.
 * The TTL is short enough for several kills in a few seconds, and long enough
 * that a holder, which needs a few milliseconds, never outlives it.
 */
$server = new LockTestRedisServer(['--hz', '100']);
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
