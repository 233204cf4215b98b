--TEST--
faults: memcached: 8 processes on one lock while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over once its item expires (TTL rounded up to whole seconds plus memcached's 2 s of clock slack) and the waiters' next poll
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(120);

/*
 * A killed holder's item lives out its expiry: a TTL of 1 s is sent as 3 s
 * (docs/memcached.md: TTL), which memcached's once-a-second clock ends
 * after 1 to 3 s. The waiters poll at most 100 ms apart, so the bound is 3 s,
 * one poll and the usual slack. A private server: the test counts on no other
 * client's load.
 */
$server = new LockTestMemcachedServer();
$dsn = $server->dsn('prefix=' . urlencode(lock_test_prefix()));
$ttl = 1.0;
lock_fault_mutex_kill(static fn () => new Lock\Store\MemcachedStore($dsn), $ttl, 10.0, [50, 300], 3.0 + 0.1 + LOCK_FAULT_SLACK, 3);
?>
--EXPECT--
workers that were not killed exited 0: true
kills: at least 3
some kills landed between the read and the write: true
completed updates: plenty
completed holds that read the same value: 0
count at least every completed update: true
count at most completed + killed holds: true
every killed hold taken over within 3200 ms of the kill: true
