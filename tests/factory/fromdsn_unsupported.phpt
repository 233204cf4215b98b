--TEST--
Factory::fromDsn(): redlock: is a ValueError "not supported yet" (redis+sentinel: parses: dsn_topology.phpt)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$dsns = [
    'redlock' => 'redlock://h1:6379,h2:6379,h3:6379',
];
foreach ($dsns as $scheme => $dsn) {
    try {
        Lock\Factory::fromDsn($dsn);
        echo "no exception\n";
    } catch (ValueError $e) {
        echo get_class($e), "\n";
        var_dump(str_starts_with($e->getMessage(), 'Lock\Factory::fromDsn(): Argument #1 ($dsn) '));
        // "not supported yet" or "does not support yet": the scheme is known, just not here yet.
        var_dump(preg_match('/not supported yet|does not support yet/', $e->getMessage()) === 1);
        var_dump(str_contains($e->getMessage(), $scheme));
    }
}
?>
--EXPECT--
ValueError
bool(true)
bool(true)
bool(true)
