--TEST--
$autoRefresh: a holder SIGKILLed frees the lock within its TTL and 0.5 s; a forked child that outlives it keeps nothing
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

lock_test_hang_guard(120);
$ttl = 1.0;
lock_test_each_kind(['redis', 'combined', 'pgsql-table', 'mysql-table'], function (string $kind) use ($ttl): void {
    foreach ([false, true] as $fork) {
        $resource = lock_test_resource();
        $prefix = lock_test_prefix();
        $holder = new LockTestChild('$store = ' . lock_test_store_code($kind, null, $prefix) . ";\n"
            . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store, ' . var_export($ttl, true) . ', true, null, true);' . "\n"
            . '$fork = ' . var_export($fork, true) . ";\n"
            . <<<'PHP'
if (!$lock->acquire()) {
    echo "not acquired\n";
    exit(1);
}
if ($fork) {
    // The child outlives its parent; it never refreshes (nor releases) the parent's hold.
    $pid = pcntl_fork();
    if ($pid === 0) {
        sleep(20);
        exit(0);
    }
    echo "child $pid\n";
}
echo "held\n";
sleep(60);
PHP);
        $out = $holder->waitFor('held');
        // Not preg_match(): PCRE's JIT code reads bytes valgrind takes for uninitialised.
        $child = str_starts_with($out, 'child ') ? (int) substr($out, 6) : 0;
        $lock = new Lock\Lock($resource, lock_test_store($kind, null, $prefix), 10.0);
        // Two TTLs held by the thread alone.
        usleep((int) (2 * $ttl * 1e6));
        echo $fork ? 'with a forked child: ' : '', 'held after two TTLs: ', var_export(!$lock->acquire(), true), "\n";
        $holder->kill();
        $killed = microtime(true);
        $got = $lock->acquire(true, 10.0);
        $after = microtime(true) - $killed;
        echo 'free within TTL + 0.5 s of the kill: ', var_export($got && $after < $ttl + lock_test_patience(0.5), true), "\n";
        if ($child > 0) {
            echo 'the forked child still lives: ', var_export(posix_kill($child, 0), true), "\n";
            posix_kill($child, SIGKILL);
        }
        $lock->release();
    }
});
?>
--EXPECT--
-- redis, combined, pgsql-table, mysql-table
held after two TTLs: true
free within TTL + 0.5 s of the kill: true
with a forked child: held after two TTLs: true
free within TTL + 0.5 s of the kill: true
the forked child still lives: true
