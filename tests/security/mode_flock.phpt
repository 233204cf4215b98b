--TEST--
flock: the store creates its directory, owner-only by default; the mode option sets the permissions
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

umask(0);
$root = lock_test_tmpdir();
$dir = $root . '/a/b/c';
$store = new Lock\Store\FlockStore($dir);
var_dump(is_dir($dir));
$lock = new Lock\Lock('r', $store);
$lock->acquire();
$files = glob($dir . '/*');
var_dump(count($files));
printf("directory group/other bits: %o\n", fileperms($dir) & 0077);
printf("lock file group/other bits: %o\n", fileperms($files[0]) & 0077);
$lock->release();

$dir2 = $root . '/shared';
$store = new Lock\Store\FlockStore($dir2, ['mode' => 0640]);
$lock = new Lock\Lock('r', $store);
$lock->acquire();
$files = glob($dir2 . '/*');
printf("lock file mode: %o\n", fileperms($files[0]) & 0777);
$lock->release();

// An existing directory is used as it is.
mkdir($root . '/existing', 0755);
$store = new Lock\Store\FlockStore($root . '/existing');
var_dump((new Lock\Lock('r', $store))->acquire());
printf("existing directory mode: %o\n", fileperms($root . '/existing') & 0777);

// No directory at all: the system temp dir.
$resource = lock_test_resource();
$lock = new Lock\Lock($resource, new Lock\Store\FlockStore());
$lock->acquire();
var_dump((new Lock\Store\FlockStore(sys_get_temp_dir()))->isLocked($resource));
var_dump((new Lock\Store\FlockStore(null))->isLocked($resource));
$lock->release();
foreach (glob(sys_get_temp_dir() . '/*' . $resource . '*') as $leftover) {
    @unlink($leftover);
}
?>
--EXPECT--
bool(true)
int(1)
directory group/other bits: 0
lock file group/other bits: 0
lock file mode: 640
bool(true)
existing directory mode: 755
bool(true)
bool(true)
