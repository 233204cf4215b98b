--TEST--
fork (pgsql, table holds): a lock object the parent made but did not hold is the child's own when the child acquires it
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
lock_test_hang_guard();
lock_test_fork_unheld('pgsql-table', lock_test_tmpdir());
?>
--EXPECT--
child: held
parent object acquires: false
parent object isAcquired: false
a new object acquires: false
child exit: 0
parent object acquires after the child ended: true
