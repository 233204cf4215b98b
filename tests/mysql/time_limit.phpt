--TEST--
mysql: max_execution_time ends a blocked acquire(), acquireRead(), run() or waitUntilFree() with PHP's fatal error: the server's wait is killed (KILL QUERY) and nothing is left held or queued
--DESCRIPTION--
As tests/wait/interrupt_time_limit.phpt: the test delivers SIGPROF, the time limit's signal,
to a waiter blocked with a limit set, which is what the kernel does when the limit runs out.
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';
// Under valgrind the children are checked too: what they do is this test's subject.
lock_test_check_children();
lock_test_hang_guard(100);

$prefix = lock_test_prefix();
$store = lock_test_mysql_store(['prefix' => $prefix]);
$queued = static fn (): string => (string) count(lock_test_mysql_waiters($prefix, 'tl'));
$holder = new Lock\Lock('tl', $store);
foreach (['var_dump($lock->acquire(true));', 'var_dump($lock->acquireRead(true));',
    '$lock->run(function () { echo "callback ran\n"; });', 'var_dump($store->waitUntilFree("tl"));'] as $wait) {
    echo "-- $wait\n";
    var_dump($holder->acquire());
    $waiter = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
        . '$store = lock_test_mysql_store(["prefix" => ' . var_export($prefix, true) . ']);'
        . '$lock = new Lock\Lock("tl", $store);'
        . 'register_shutdown_function(function () use ($lock) { echo "at shutdown the waiter holds it: ", var_export($lock->isAcquired(), true), "\n"; });'
        . 'set_time_limit(60); echo "waiting\n";' . $wait . 'echo "wait returned\n";');
    $waiter->waitFor('waiting');
    lock_test_wait_until(static fn () => $queued() === '1', 30.0, 'the waiter to queue');
    $waiter->signal(SIGPROF);
    $waiter->wait();
    echo 'fatal error: ', var_export(str_contains($waiter->output(), 'Maximum execution time of 60 seconds exceeded'), true), "\n";
    echo 'wait returned: ', var_export(str_contains($waiter->output(), 'wait returned') || str_contains($waiter->output(), 'callback ran'), true), "\n";
    echo trim(substr($waiter->output(), strpos($waiter->output(), 'at shutdown'))), "\n";
    echo 'queued: ', $queued(), ', holders: ', (lock_test_mysql_holder($prefix, 'tl') === null ? 0 : 1), "\n";
    $holder->release();
    var_dump($store->isLocked('tl'));
}
?>
--EXPECT--
-- var_dump($lock->acquire(true));
bool(true)
fatal error: true
wait returned: false
at shutdown the waiter holds it: false
queued: 0, holders: 1
bool(false)
-- var_dump($lock->acquireRead(true));
bool(true)
fatal error: true
wait returned: false
at shutdown the waiter holds it: false
queued: 0, holders: 1
bool(false)
-- $lock->run(function () { echo "callback ran\n"; });
bool(true)
fatal error: true
wait returned: false
at shutdown the waiter holds it: false
queued: 0, holders: 1
bool(false)
-- var_dump($store->waitUntilFree("tl"));
bool(true)
fatal error: true
wait returned: false
at shutdown the waiter holds it: false
queued: 0, holders: 1
bool(false)
