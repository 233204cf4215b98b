--TEST--
inspect() on the stores of one machine (flock, semaphore): free, a writer (its pid on flock), readers, three waiters counted, a killed holder's hold gone; the last fencing token on flock; what the kernel does not keep (owner tokens, the order) is null
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard(90);

lock_test_each_kind(['flock', 'semaphore'], function (string $kind): void {
    $dir = $kind === 'flock' ? lock_test_tmpdir('inspect') : null;
    $store = lock_test_store($kind, $dir);
    $code = lock_test_store_code($kind, $dir);
    $resource = lock_test_resource('inspect');
    /** The answer, the fencing token named rather than given. */
    $seen = function () use ($store, $resource): string {
        $a = $store->inspect($resource);
        if (is_int($a['fencing'])) {
            $a['fencing'] = 'a token';
        }
        // flock: the kernel's pids of the holders (this process, once a hold).
        if (is_array($a['holders']) && $a['holders'] !== []) {
            $a['holders'] = array_map(fn (int $pid): string => $pid === getmypid() ? 'this process' : 'another', $a['holders']);
        }
        return json_encode($a) . "\n";
    };

    echo "- free\n", $seen();
    echo "- a writer\n";
    $w = new Lock\Lock($resource, $store);
    $w->acquire();
    echo $seen();
    echo "- three waiters\n";
    $waiters = [];
    for ($i = 0; $i < 3; $i++) {
        $waiters[] = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $code . ");\n" . <<<'PHP'
echo "waiting\n";
echo $lock->acquire(true, 60.0) ? "held\n" : "timed out\n";
$lock->release();
fgets(STDIN);
PHP);
        $waiters[$i]->waitFor('waiting');
    }
    lock_test_wait_until(fn () => $store->inspect($resource)['waiters'] === 3, 20, 'three waiters to show');
    echo "3 waiters\n";
    $w->release();
    foreach ($waiters as $child) {
        $child->waitFor('held');
        $child->kill();
    }
    lock_test_wait_until(fn () => $store->inspect($resource)['waiters'] === 0, 20, 'the waiters to go');
    echo "- readers\n";
    $r1 = new Lock\Lock($resource, $store);
    $r2 = new Lock\Lock($resource, $store);
    $r1->acquireRead();
    $r2->acquireRead();
    echo $seen();
    $r1->release();
    $r2->release();
    echo "- a holder killed\n";
    $holder = lock_test_holder($code, $resource);
    echo json_encode($store->inspect($resource)['mode']), "\n";
    $holder->kill();
    lock_test_wait_until(fn () => $store->inspect($resource)['mode'] === null, 20, 'the kernel to free it');
    echo json_encode($store->inspect($resource)['held']), "\n";
});
?>
--EXPECT--
-- flock
- free
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":[]}
- a writer
{"held":true,"mode":"write","owners":null,"ttl":null,"fencing":"a token","waiters":0,"queue":null,"holders":["this process"]}
- three waiters
3 waiters
- readers
{"held":true,"mode":"read","owners":null,"ttl":null,"fencing":"a token","waiters":0,"queue":null,"holders":["this process","this process"]}
- a holder killed
"write"
false
-- semaphore
- free
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":null}
- a writer
{"held":true,"mode":"write","owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":null}
- three waiters
3 waiters
- readers
{"held":true,"mode":"read","owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":null}
- a holder killed
"write"
false
