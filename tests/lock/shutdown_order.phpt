--TEST--
flock, semaphore, Redis, memcached: locks that outlive the script (static property, static variable, reference cycle) end cleanly whatever the engine frees first
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/scenarios.inc';
// Under valgrind the children are checked too: what they do is this test's subject.
lock_test_check_children();

// The cases are in lock_test_shutdown_order(); tests/lock/shutdown_order*.phpt split the
// store kinds between them to keep each file's valgrind run short.
lock_test_shutdown_order(['flock', 'semaphore', 'redis', 'memcached']);
?>
--EXPECT--
-- flock, semaphore, redis, memcached
done
