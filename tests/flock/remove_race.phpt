--TEST--
flock: processes racing on a lock file that every release removes never hold it together (nobody locks an unlinked file)
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard(120);
$dir = lock_test_tmpdir();
$rounds = lock_test_scale(300, 30);
$pids = [];
for ($p = 0; $p < 4; $p++) {
    $pids[] = lock_test_fork(function () use ($dir, $rounds, $p): int {
        // Half without a cache (every release removes the file), half with one (a dead file stays open).
        $store = new Lock\Store\FlockStore($dir, ['cache' => $p % 2]);
        $overlaps = 0;
        $last = 0;
        for ($i = 0; $i < $rounds; $i++) {
            $lock = new Lock\Lock('raced', $store);
            if (!$lock->acquire(true, 60.0)) {
                return 2;
            }
            $token = $lock->getFencingToken();
            $inside = @fopen("$dir/inside", 'x');
            if ($inside === false || $token <= $last) {
                $overlaps++;
            } else {
                fclose($inside);
                usleep($i % 3 * 100);
                unlink("$dir/inside");
            }
            $last = $token;
            $lock->release();
        }
        return $overlaps === 0 ? 0 : 1;
    });
}
$codes = array_map(fn ($pid) => lock_test_wait_pid($pid), $pids);
echo 'exit codes: ', implode(' ', $codes), "\n";
echo 'lock files left: ', count(glob("$dir/*.lock")), "\n";
?>
--EXPECT--
exit codes: 0 0 0 0
lock files left: 0
