--TEST--
mysql table holds: rows free or expired for an hour are swept (at most 16 by a process's first release, and every 64th after it), rows younger than that and live rows stay, and a swept resource's next row starts its fencing tokens above its old ones
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$table = 'lks_' . bin2hex(random_bytes(6));
register_shutdown_function(static function () use ($table): void {
    lock_test_mysql_sql("DROP TABLE IF EXISTS `$table`");
});
$options = ['prefix' => $prefix, 'table' => $table];
$store = lock_test_mysql_table_store($options);
$count = fn (): int => (int) lock_test_mysql_sql("SELECT COUNT(*) FROM `$table`");
$age = function (string $resource, string $interval) use ($prefix, $table): void {
    $name = lock_test_mysql_name($prefix, $resource);
    lock_test_mysql_sql("UPDATE `$table` SET expires_at = UTC_TIMESTAMP(6) - INTERVAL $interval WHERE name = '$name'");
};

// 20 released rows, made an hour and a minute old; one released a minute ago; one expired
// unreleased long ago; one live without a TTL; one live for a day.
$tokens = [];
for ($i = 0; $i < 20; $i++) {
    $l = new Lock\Lock("old$i", $store);
    $l->acquire();
    $tokens["old$i"] = $l->getFencingToken();
    $l->release();
    $age("old$i", '61 MINUTE');
}
$young = new Lock\Lock('young', $store);
$young->acquire();
$young->release();
$age('young', '1 MINUTE');
$dead = new Lock\Lock('dead', $store, 60.0, false);
$dead->acquire();
$age('dead', '2 HOUR');
$forever = new Lock\Lock('forever', $store, null);
$forever->acquire();
$day = new Lock\Lock('day', $store, 86400.0);
$day->acquire();
echo 'rows: ', $count(), "\n";

// A new process: its first release sweeps 16 of the 21 old rows.
$release = function () use ($options): void {
    $child = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
        . '$l = new Lock\Lock("other", lock_test_mysql_table_store(' . var_export($options, true) . '));'
        . 'var_dump($l->acquire()); $l->release(); echo "done\n";');
    echo $child->waitFor('done');
    $child->wait();
};
$release();
echo 'rows after one sweep: ', $count(), "\n";
$release();
echo 'rows after two: ', $count(), "\n";
$row = fn (string $r) => lock_test_mysql_row($prefix, $r, $table);
var_dump($row('young') !== null, $row('dead'), $row('forever')['live'], $row('day')['live'], $row('other') !== null);
var_dump($forever->isAcquired(), $day->isAcquired());

// A swept resource starts a new row above its old tokens.
$l = new Lock\Lock('old0', $store);
var_dump($l->acquire(), $l->getFencingToken() > max($tokens));
$l->release();
$forever->release();
$day->release();
?>
--EXPECT--
rows: 24
bool(true)
done
rows after one sweep: 9
bool(true)
done
rows after two: 4
bool(true)
NULL
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
