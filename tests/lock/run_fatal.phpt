--TEST--
A fatal error or max_execution_time inside run()'s callback still releases the lock
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
// Under valgrind the children are checked too, what they do being this test's subject: each
// kind's child of one case, a different case from kind to kind, so that every case and every
// kind is checked and the test's valgrind run stays short.
lock_test_check_children();

$cases = [
    'user_error' => 'trigger_error("boom", E_USER_ERROR);',
    'memory' => 'ini_set("memory_limit", "16M"); $big = str_repeat("x", 64 * 1024 * 1024);',
    'time_limit' => 'set_time_limit(1); while (true) { }',
];
$dir = lock_test_tmpdir();
$prefix = lock_test_prefix();
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind) use ($cases, $dir, $prefix): void {
    $k = array_search($kind, LOCK_TEST_KINDS, true);
    foreach (array_keys($cases) as $c => $case) {
        $fatal = $cases[$case];
        $GLOBALS['lock_test_check_children'] = ($k + $c) % count($cases) === 0;
        echo "$case\n";
        $resource = lock_test_resource();
        // autoRelease=false: on Redis only run() itself can release the hold.
        $code = '$store = ' . lock_test_store_code($kind, $dir, $prefix) . ";\n"
            . '$resource = ' . var_export($resource, true) . ";\n"
            . '$lock = new Lock\Lock($resource, $store, 300.0, false);' . "\n"
            . 'register_shutdown_function(function () use ($store, $resource) {' . "\n"
            . '    echo "shutdown: locked=", var_export($store->isLocked($resource), true), "\n";' . "\n"
            . '    $other = new Lock\Lock($resource, $store);' . "\n"
            . '    echo "shutdown: other acquires=", var_export($other->acquire(), true), "\n";' . "\n"
            . '    $other->release();' . "\n"
            . "});\n"
            . '$lock->run(function () use ($store, $resource) {' . "\n"
            . '    echo "in callback: locked=", var_export($store->isLocked($resource), true), "\n";' . "\n"
            . "    $fatal\n"
            . "});\n"
            . 'echo "not reached\n";' . "\n";
        // memory_limit needs the Zend allocator, which the valgrind run turns off.
        [$exit, $out] = lock_test_run_php($code, [], 120.0, ['USE_ZEND_ALLOC' => null]);
        $ok = str_contains($out, "in callback: locked=true\n")
            && preg_match('/(PHP )?Fatal error: /', $out)
            && str_contains($out, "shutdown: locked=false\n")
            && str_contains($out, "shutdown: other acquires=true\n")
            && !str_contains($out, 'not reached');
        echo $ok ? "child ok\n" : "child output:\n$out\n";
        var_dump($exit !== 0);
        $store = lock_test_store($kind, $dir, $prefix);
        var_dump($store->isLocked($resource));
    }
});
?>
--EXPECT--
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
user_error
child ok
bool(true)
bool(false)
memory
child ok
bool(true)
bool(false)
time_limit
child ok
bool(true)
bool(false)
