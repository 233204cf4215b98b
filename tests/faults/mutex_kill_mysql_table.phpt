--TEST--
faults: 8 processes on one MariaDB table hold (holds => 'table') while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over once its row expires by the server's clock
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(120);

/*
 * A table hold outlives its process: a killed holder's row stays until its TTL
 * (1 s) runs out by the server's clock. The killed holder's session ends and
 * its GET_LOCK name with it, which wakes the waiters; they find the row still
 * live and wait for its expiry, looking again at least every 0.5 s, so the
 * bound is the TTL, that 0.5 s, one round trip and the usual slack.
 */
$dsn = lock_test_mysql_dsn('holds=table&prefix=' . rawurlencode(lock_test_prefix()));
lock_fault_mutex_kill(static fn () => new Lock\Store\MysqlStore($dsn), 1.0, 10.0, [50, 300], 1.0 + 0.5 + 0.5 + LOCK_FAULT_SLACK, 3);
?>
--EXPECT--
workers that were not killed exited 0: true
kills: at least 3
some kills landed between the read and the write: true
completed updates: plenty
completed holds that read the same value: 0
count at least every completed update: true
count at most completed + killed holds: true
every killed hold taken over within 2100 ms of the kill: true
