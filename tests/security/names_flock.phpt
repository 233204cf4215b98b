--TEST--
flock: any resource name maps to its own lock file inside the store's directory, never outside
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$root = lock_test_tmpdir();
$dir = $root . '/locks';
$store = new Lock\Store\FlockStore($dir);
$names = [
    '../escape', '../../../../../../tmp/escape', '/etc/passwd', '.', '..', '...', '/', '//', "a\0b", "a\0c",
    "new\nline", 'a/b', 'a_b', 'a%2Fb', 'a\\b', 'A/B', 'ä/ö', "\xff\xfe", ' ', '*', '?', '~root',
    str_repeat('x', 255), str_repeat('x', 256), str_repeat('x', 4096), str_repeat('x', 65536),
    str_repeat('x', 65535) . 'y', str_repeat('/..', 1000),
];
$locks = [];
foreach ($names as $name) {
    $lock = new Lock\Lock($name, $store);
    if (!$lock->acquire()) {
        echo "not acquired: ", json_encode(substr($name, 0, 40)), "\n";
    }
    $locks[] = $lock;
}
// Every name is its own resource: none of them blocked another.
var_dump(count($locks) === count($names));
foreach ($names as $name) {
    if (!$store->isLocked($name)) {
        echo "not locked: ", json_encode(substr($name, 0, 40)), "\n";
    }
}
// Nothing was created beside the directory, and the directory holds plain files only.
var_dump(scandir($root));
$files = array_diff(scandir($dir), ['.', '..']);
var_dump(count($files) === count($names));
foreach ($files as $file) {
    if (!is_file("$dir/$file") || strlen($file) > 255) {
        echo "odd entry: ", json_encode($file), "\n";
    }
}
var_dump(file_exists('/etc/passwd.lock'), file_exists('/tmp/escape'), file_exists(dirname($root) . '/escape'));
foreach ($locks as $lock) {
    $lock->release();
}
foreach ($names as $name) {
    if ($store->isLocked($name)) {
        echo "still locked: ", json_encode(substr($name, 0, 40)), "\n";
    }
}
echo "done\n";
?>
--EXPECT--
bool(true)
array(3) {
  [0]=>
  string(1) "."
  [1]=>
  string(2) ".."
  [2]=>
  string(5) "locks"
}
bool(true)
bool(false)
bool(false)
bool(false)
done
