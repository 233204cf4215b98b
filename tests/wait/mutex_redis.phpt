--TEST--
Redis: mutual exclusion among 8 processes that wait in acquire(true) and run(): fair, fair => false, and both on one resource
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
$dir = lock_test_tmpdir();
foreach ([['redis'], ['redis-unfair'], ['redis', 'redis-unfair']] as $kinds) {
    echo '-- ', implode(' and ', $kinds), "\n";
    lock_wait_mutex($kinds, $dir, lock_test_prefix());
}
?>
--EXPECT--
-- redis
children: all exited 0
count: exact
two inside at once: 0 time(s)
isLocked afterwards: false
Redis keys that stay: none
-- redis-unfair
children: all exited 0
count: exact
two inside at once: 0 time(s)
isLocked afterwards: false
Redis keys that stay: none
-- redis and redis-unfair
children: all exited 0
count: exact
two inside at once: 0 time(s)
isLocked afterwards: false
Redis keys that stay: none
