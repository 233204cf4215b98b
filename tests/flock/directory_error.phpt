--TEST--
flock: a directory that cannot be made is a Lock\StorageException naming the store and the cause
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$root = lock_test_tmpdir();
file_put_contents($root . '/file', 'x');
// A path through a regular file fails even for root.
try {
    new Lock\Store\FlockStore($root . '/file/locks');
    echo "no exception\n";
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
    var_dump(str_contains($e->getMessage(), 'flock'));
    var_dump(str_contains($e->getMessage(), $root . '/file'));
    var_dump(str_contains($e->getMessage(), 'Not a directory'));
}
try {
    new Lock\Store\FlockStore($root . '/file');
    echo "no exception\n";
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
    var_dump(str_contains($e->getMessage(), 'flock'));
}
?>
--EXPECT--
Lock\StorageException
bool(true)
bool(true)
bool(true)
Lock\StorageException
bool(true)
