--TEST--
pgsql table mode: mutual exclusion: several processes, two lock objects each, increment a counter in a file under the lock with a blocking acquire; no update is lost and no two holders overlap
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$dir = lock_test_tmpdir('pgt-mutex');
$counter = "$dir/counter";
$inside = "$dir/inside";
file_put_contents($counter, '0');
$procs = lock_test_scale(5, 3);
$rounds = lock_test_scale(40, 8);

$pids = [];
for ($p = 0; $p < $procs; $p++) {
    $pids[] = lock_test_fork(static function () use ($prefix, $counter, $inside, $rounds): int {
        $store = lock_test_pgsql_table_store(['prefix' => $prefix]);
        $locks = [new Lock\Lock('counter', $store, 30.0), new Lock\Lock('counter', $store, 30.0)];
        $overlaps = 0;
        for ($i = 0; $i < $rounds; $i++) {
            $lock = $locks[$i % 2];
            if (!$lock->acquire(true, 60.0)) {
                return 2;
            }
            // A second holder would find the marker: the lock must keep everyone else out.
            if (!@mkdir($inside)) {
                $overlaps++;
            }
            $n = (int) file_get_contents($counter);
            usleep(random_int(0, 2000));
            file_put_contents($counter, (string) ($n + 1));
            @rmdir($inside);
            $lock->release();
        }
        return $overlaps === 0 ? 0 : 3;
    });
}
$codes = array_map(fn (int $pid): int => lock_test_wait_pid($pid, 300.0), $pids);
echo 'children: ', implode(',', array_unique($codes)), "\n";
$lost = $procs * $rounds - (int) file_get_contents($counter);
echo "lost updates: $lost\n";
var_dump(lock_test_pgsql_table_store(['prefix' => $prefix])->isLocked('counter'));
lock_test_rmdir($dir);
?>
--EXPECT--
children: 0
lost updates: 0
bool(false)
