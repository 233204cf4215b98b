--TEST--
redis: a script that acquires and ends without releasing (normally, on exit() or a fatal error) leaves the resource free; autoRelease=false keeps it
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
// Under valgrind the children are checked too (every other one): what they do is this test's subject.

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$ends = [
    'end of script' => '',
    'exit()' => 'exit(0);',
    'uncaught exception' => 'throw new RuntimeException("boom");',
    'fatal error' => 'trigger_error("boom", E_USER_ERROR);',
    'time limit' => 'set_time_limit(1); while (true) { }',
    'held by a global' => '$GLOBALS["keep"] = $lock;',
    'held in a cycle' => '$o = new stdClass(); $o->self = $o; $o->lock = $lock; unset($lock);',
];
$n = 0;
foreach ([true, false] as $autoRelease) {
    foreach ($ends as $what => $end) {
        // Under valgrind every other child is checked, each way of ending checked once either way.
        $GLOBALS['lock_test_check_children'] = !lock_test_valgrind() || $n++ % 2 === 0;
        $resource = lock_test_resource();
        [$exit, $out] = lock_test_run_php(
            '$store = ' . lock_test_store_code('redis', null, $prefix) . ";\n"
            . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store, 300.0, ' . var_export($autoRelease, true) . ");\n"
            . 'echo "acquired: ", var_export($lock->acquire(), true), "\n";' . "\n"
            . $end . "\n");
        $acquired = str_contains($out, 'acquired: true');
        printf("autoRelease=%s, %s: %s\n", var_export($autoRelease, true), $what,
            $acquired ? ($store->isLocked($resource) ? 'still locked' : 'free') : "child failed:\n$out");
        $store->forceRelease($resource);
    }
}
?>
--EXPECT--
autoRelease=true, end of script: free
autoRelease=true, exit(): free
autoRelease=true, uncaught exception: free
autoRelease=true, fatal error: free
autoRelease=true, time limit: free
autoRelease=true, held by a global: free
autoRelease=true, held in a cycle: free
autoRelease=false, end of script: still locked
autoRelease=false, exit(): still locked
autoRelease=false, uncaught exception: still locked
autoRelease=false, fatal error: still locked
autoRelease=false, time limit: still locked
autoRelease=false, held by a global: still locked
autoRelease=false, held in a cycle: still locked
