--TEST--
faults: 8 processes on one lock over three Redis servers (CombinedStore) while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over within its TTL + 100 ms
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

/*
 * A killed holder's parts live out their TTL on every server. The waiters
 * sleep in the queue of one member (the first, in the resource's order, that
 * refused them), which hands the hold over once the killed one's part there
 * runs out; they then take the other two, whose parts ran out at the same
 * time give or take the few milliseconds between the first take's answers,
 * or queue where one of them still refuses. The 100 ms cover those, the
 * member's own 10 ms past an overdue sleep (docs/waiting.md) and a loaded
 * machine. Private servers: the test counts on no other client's load.
 */
$servers = [new LockTestRedisServer(), new LockTestRedisServer(), new LockTestRedisServer()];
$dsn = 'redlock://' . implode(',', array_map(fn ($s) => '127.0.0.1:' . $s->port, $servers)) . '?prefix=' . urlencode(lock_test_prefix());
$ttl = 1.0;
lock_fault_mutex_kill(static fn () => Lock\Factory::fromDsn($dsn)->getStore(), $ttl, 8.0, [50, 300], $ttl + LOCK_FAULT_SLACK, 4);
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
