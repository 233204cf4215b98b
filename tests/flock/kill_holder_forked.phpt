--TEST--
flock: a holder killed with SIGKILL frees the lock although a child it forked still lives
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();
$dir = lock_test_tmpdir();
$resource = lock_test_resource('forked');
$storeCode = lock_test_store_code('flock', $dir);

// The holder forks a child that outlives it; the child only sleeps.
$holder = new LockTestChild('$store = ' . $storeCode . ";\n"
    . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store);' . "\n"
    . '$kept = new Lock\Lock(' . var_export($resource . '-kept', true) . ', $store);' . "\n"
    . <<<'PHP'
$lock->acquire();
$kept->acquire();
$kept->release(); // its file stays open for the next hold
$pid = pcntl_fork();
if ($pid === 0) {
    fclose(STDOUT);
    sleep(60);
    exit(0);
}
echo "child $pid\n";
$kept->acquire();
echo "held\n";
sleep(60);
PHP);
$out = $holder->waitFor('held');
preg_match('/child (\d+)/', $out, $m);
$child = (int) $m[1];
$store = lock_test_store('flock', $dir);
echo 'locked while the holder lives: ', var_export($store->isLocked($resource), true), "\n";
// kill() waits for the process, not for the end of its output, which the child keeps open.
$holder->kill();
echo 'child alive: ', var_export(posix_kill($child, 0), true), "\n";
foreach (['', '-kept'] as $suffix) {
    $lock = new Lock\Lock($resource . $suffix, $store);
    echo "acquired$suffix: ", var_export($lock->acquire(true, 5.0), true), "\n";
    $lock->release();
}
echo 'child alive: ', var_export(posix_kill($child, 0), true), "\n";
posix_kill($child, SIGKILL);
?>
--EXPECT--
locked while the holder lives: true
child alive: true
acquired: true
acquired-kept: true
child alive: true
