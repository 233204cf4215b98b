--TEST--
pgsql table mode: rows expired for an hour (holds whose process never released them) are swept, at most 16 by a process's first release and every 64th after it; rows expired more lately and live rows stay
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$table = 'sweep_' . bin2hex(random_bytes(4));
register_shutdown_function(static function () use ($table): void {
    lock_test_pgsql_sql("DROP TABLE IF EXISTS $table");
});
$options = ['prefix' => $prefix, 'table' => $table];
$store = lock_test_pgsql_table_store($options);
$count = fn (): int => (int) lock_test_pgsql_sql("SELECT count(*) FROM $table");
$age = function (string $resource, string $interval) use ($prefix, $table): void {
    $key = lock_test_pgsql_key($prefix, $resource);
    lock_test_pgsql_sql("UPDATE $table SET expires_at = now() - interval '$interval' WHERE key = $key");
};

// 20 holds never released (their lock objects let go without a release), made to have
// expired an hour and a minute ago; one expired a minute ago; one live without a TTL; one
// live for a day.
for ($i = 0; $i < 20; $i++) {
    $l = new Lock\Lock("old$i", $store, 60.0, false);
    $l->acquire();
    unset($l);
    $age("old$i", '61 minutes');
}
$young = new Lock\Lock('young', $store, 60.0, false);
$young->acquire();
unset($young);
$age('young', '1 minute');
$forever = new Lock\Lock('forever', $store, null);
$forever->acquire();
$day = new Lock\Lock('day', $store, 86400.0);
$day->acquire();
echo 'rows: ', $count(), "\n";

// A new process: its first release sweeps 16 of the 20 old rows.
$release = function () use ($options): void {
    $child = new LockTestChild('require "' . __DIR__ . '/../inc/pgsql.inc";'
        . '$l = new Lock\Lock("other", lock_test_pgsql_table_store(' . var_export($options, true) . '));'
        . 'var_dump($l->acquire()); $l->release(); echo "done\n";');
    echo $child->waitFor('done');
    $child->wait();
};
$release();
echo 'rows after one sweep: ', $count(), "\n";
$release();
echo 'rows after two: ', $count(), "\n";
$row = fn (string $r) => lock_test_pgsql_row($prefix, $r, $table);
var_dump($row('young') !== null, $row('old0'), $forever->isAcquired(), $day->isAcquired());
$forever->release();
$day->release();
?>
--EXPECT--
rows: 23
bool(true)
done
rows after one sweep: 7
bool(true)
done
rows after two: 3
bool(true)
NULL
bool(true)
bool(true)
