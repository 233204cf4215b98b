--TEST--
mysql table holds: the table is created when missing (InnoDB, the columns of docs/mysql.md) and reused by the next stores; the option "table" names it; stores on different tables do not share holds; a table made beforehand from the schema in docs/mysql.md serves as well; rows stay, free, after their release, and their fencing counters go on
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$table = 'lkt_' . bin2hex(random_bytes(6));
$other = $table . '_b';
$made = $table . '_m';
register_shutdown_function(static function () use ($table, $other, $made): void {
    lock_test_mysql_sql("DROP TABLE IF EXISTS `$table`, `$other`, `$made`");
});
$exists = fn (string $t): bool => lock_test_mysql_sql("SHOW TABLES LIKE '$t'") === $t;

echo "-- created by the first use\n";
$store = lock_test_mysql_table_store(['prefix' => $prefix, 'table' => $table]);
var_dump($exists($table));
$a = new Lock\Lock('x', $store);
var_dump($a->acquire(), $exists($table));
echo lock_test_mysql_sql("SELECT ENGINE FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '$table'"), "\n";
echo str_replace("\n", ' ', lock_test_mysql_sql("SELECT CONCAT(column_name, ':', column_type) FROM information_schema.columns"
    . " WHERE table_schema = DATABASE() AND table_name = '$table' ORDER BY ordinal_position")), "\n";
echo str_replace("\n", ' ', lock_test_mysql_sql("SELECT column_name FROM information_schema.key_column_usage"
    . " WHERE table_schema = DATABASE() AND table_name = '$table' AND constraint_name = 'PRIMARY'")), "\n";
var_dump(lock_test_mysql_row($prefix, 'x', $table)['owner'] === bin2hex($a->getOwner()));

echo "-- reused by another store, through the DSN\n";
$again = new Lock\Store\MysqlStore(lock_test_mysql_dsn("holds=table&table=$table&prefix=" . rawurlencode($prefix)));
$b = new Lock\Lock('x', $again);
var_dump($again->isLocked('x'), $b->acquire());

echo "-- another table is another namespace\n";
$elsewhere = lock_test_mysql_table_store(['prefix' => $prefix, 'table' => $other]);
$c = new Lock\Lock('x', $elsewhere);
var_dump($elsewhere->isLocked('x'), $c->acquire(), $exists($other));
$c->release();

echo "-- released rows stay, free\n";
$a->release();
var_dump(lock_test_mysql_row($prefix, 'x', $table)['owner'], lock_test_mysql_sql("SELECT COUNT(*) FROM `$table`"));
var_dump($b->acquire());
$b->release();

echo "-- a table made beforehand from the schema in docs/mysql.md\n";
$readme = file_get_contents(__DIR__ . '/../../docs/mysql.md');
if (!preg_match('/CREATE TABLE IF NOT EXISTS lock_holds \(.*?\) ENGINE=InnoDB;/s', $readme, $m)) {
    echo "FAIL: no schema in docs/mysql.md\n";
    exit(1);
}
lock_test_mysql_sql(str_replace('lock_holds', "`$made`", $m[0]));
$mstore = lock_test_mysql_table_store(['prefix' => $prefix, 'table' => $made]);
$d = new Lock\Lock('x', $mstore, 10.0);
$e = new Lock\Lock('x', $mstore, 10.0);
$row = fn () => lock_test_mysql_row($prefix, 'x', $made);
var_dump($d->acquire(), $e->acquire(), $d->getFencingToken() === $row()['fence'], $row()['left'] > 5);
$token = $d->getFencingToken();
$d->release();
// The row's counter goes on: one more.
var_dump($e->acquire(), $e->getFencingToken() === $token + 1);
$e->release();
?>
--EXPECT--
-- created by the first use
bool(false)
bool(true)
bool(true)
InnoDB
name:varchar(64) owner:varbinary(255) expires_at:datetime(6) fence:bigint(20) conn:bigint(20) unsigned
name
bool(true)
-- reused by another store, through the DSN
bool(true)
bool(false)
-- another table is another namespace
bool(false)
bool(true)
bool(true)
-- released rows stay, free
NULL
string(1) "1"
bool(true)
-- a table made beforehand from the schema in docs/mysql.md
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
