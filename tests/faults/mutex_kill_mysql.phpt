--TEST--
faults: 8 processes on one MySQL (MariaDB) lock while holders are killed with SIGKILL inside the critical section: no lost update, each killed hold taken over within 1 s of the kill
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

/*
 * A killed holder's socket is closed by the kernel; its server session reads
 * the end of the stream, ends, and its GET_LOCK name goes to the first waiter
 * in the server's queue, whose statement then returns. No TTL is involved: the
 * bound covers the session's exit, the waiter's wake-up and its reply on a
 * loaded two-core machine. Session holds have no TTL (null).
 */
$dsn = lock_test_mysql_dsn('prefix=' . rawurlencode(lock_test_prefix()));
lock_fault_mutex_kill(static fn () => new Lock\Store\MysqlStore($dsn), null, 8.0, [50, 300], 1.0, 4);
?>
--EXPECT--
workers that were not killed exited 0: true
kills: at least 4
some kills landed between the read and the write: true
completed updates: plenty
completed holds that read the same value: 0
count at least every completed update: true
count at most completed + killed holds: true
every killed hold taken over within 1000 ms of the kill: true
