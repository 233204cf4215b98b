--TEST--
pgsql table mode: the table is created when missing (named, schema-qualified, case kept), by several first users at once; a table made beforehand (a team's own migration, the schema of docs/pgsql.md with bigserial) is used as it is; a missing schema is a StorageException
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$tag = bin2hex(random_bytes(4));
$columns = fn (string $schema, string $table): string => lock_test_pgsql_sql("SELECT string_agg(column_name || ' ' || data_type"
    . " || CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END || CASE WHEN is_identity = 'YES' THEN ' identity' ELSE '' END, ', '"
    . " ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = '$schema' AND table_name = '$table'");

echo "-- created when missing, on first use\n";
$store = lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => "holds_$tag"]);
var_dump($columns('public', "holds_$tag"));
$lock = new Lock\Lock('r', $store);
var_dump($lock->acquire());
echo $columns('public', "holds_$tag"), "\n";
echo lock_test_pgsql_sql("SELECT count(*) FROM holds_$tag"), "\n";
$lock->release();
echo lock_test_pgsql_sql("SELECT count(*) FROM holds_$tag"), "\n";

echo "-- schema-qualified, case kept\n";
lock_test_pgsql_sql("CREATE SCHEMA s_$tag");
$store = lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => "s_$tag.Holds_$tag"]);
var_dump($store->isLocked('r'));
echo $columns("s_$tag", "Holds_$tag"), "\n";
var_dump((new Lock\Lock('r', $store))->acquire());

echo "-- several first users at once\n";
$pids = [];
for ($i = 0; $i < 4; $i++) {
    $pids[] = lock_test_fork(static function () use ($prefix, $tag): int {
        $lock = new Lock\Lock('race', lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => "race_$tag"]));
        return $lock->acquire(true, 30.0) && $lock->isAcquired() ? 0 : 1;
    });
}
echo 'children: ', implode(',', array_unique(array_map(fn (int $pid): int => lock_test_wait_pid($pid), $pids))), "\n";

echo "-- a table made beforehand is used as it is\n";
lock_test_pgsql_sql("CREATE TABLE own_$tag (key bigint PRIMARY KEY, owner bytea NOT NULL, expires_at timestamptz, fence bigserial);"
    . " INSERT INTO own_$tag (key, owner, expires_at) VALUES (" . lock_test_pgsql_key($prefix, 'taken') . ", 'someone', NULL)");
$store = lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => "own_$tag"]);
$lock = new Lock\Lock('free', $store);
$taken = new Lock\Lock('taken', $store);
var_dump($store->isLocked('taken'), $taken->acquire(), $lock->acquire(), $lock->getFencingToken() > 0);
$restored = (new Lock\Factory($store))->restoreLock('taken', 'someone');
var_dump($restored->isAcquired());
$restored->release();
var_dump($taken->acquire());
$taken->release();
$lock->release();
echo lock_test_pgsql_sql("SELECT count(*) FROM own_$tag"), "\n";

echo "-- a missing schema\n";
$store = lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => "nope_$tag.holds"]);
try {
    (new Lock\Lock('r', $store))->acquire();
} catch (Lock\StorageException $e) {
    echo get_class($e), ': ', str_contains($e->getMessage(), "nope_$tag") ? 'names the schema' : $e->getMessage(), "\n";
}

lock_test_pgsql_sql("DROP TABLE holds_$tag, race_$tag, own_$tag; DROP SCHEMA s_$tag CASCADE");
?>
--EXPECT--
-- created when missing, on first use
string(0) ""
bool(true)
key bigint not null, owner bytea not null, expires_at timestamp with time zone, fence bigint not null identity
1
0
-- schema-qualified, case kept
bool(false)
key bigint not null, owner bytea not null, expires_at timestamp with time zone, fence bigint not null identity
bool(true)
-- several first users at once
children: 0
-- a table made beforehand is used as it is
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
0
-- a missing schema
Lock\StorageException: names the schema
