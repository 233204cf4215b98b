--TEST--
hostile: random calls on Lock, Factory and PostgresStore against a private PostgreSQL that is stopped halfway and started again later (under valgrind: the shared one, not stopped): no warning, no hang, only the allowed exceptions, no password in a message
--EXTENSIONS--
lock
pcntl
posix
--INI--
error_reporting=-1
display_errors=1
memory_limit=512M
--FILE--
<?php
require __DIR__ . '/driver.inc';
lock_test_hang_guard(150);
// Under valgrind the server is the test command's (a private one would run under valgrind too): never stopped.
$stop = !lock_test_valgrind();
hostile_run(['pgsql'],
    ['lock' => 74, 'factory' => 8, 'store' => 14, 'order' => 4],
    20000, 600, killAt: $stop ? 0.5 : null, restartAt: $stop ? 0.75 : null);
?>
--EXPECTF--
seed: %d (set LOCK_TEST_SEED to replay)
calls: %d or more
ok
