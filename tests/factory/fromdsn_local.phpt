--TEST--
Factory::fromDsn() with flock:, flock:///dir and semaphore:
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$factory = Lock\Factory::fromDsn('flock:');
var_dump($factory instanceof Lock\Factory);
var_dump(get_class($factory->getStore()));
$resource = lock_test_resource();
$lock = $factory->createLock($resource);
var_dump($lock->acquire());
// Another store on the system temp directory sees it.
var_dump((new Lock\Store\FlockStore())->isLocked($resource));
var_dump((new Lock\Store\FlockStore(sys_get_temp_dir()))->isLocked($resource));
$lock->release();
// The lock file in the shared temp directory is ours to remove (its name shows the resource).
foreach (glob(sys_get_temp_dir() . '/*' . $resource . '*') as $leftover) {
    @unlink($leftover);
}

// flock:///dir uses (and creates) that directory.
$dir = lock_test_tmpdir() . '/made/by/the store';
$factory = Lock\Factory::fromDsn('flock://' . $dir);
var_dump(get_class($factory->getStore()));
var_dump(is_dir($dir));
$lock = $factory->createLock('r');
var_dump($lock->acquire());
var_dump(count(glob($dir . '/*')) >= 1);
var_dump((new Lock\Store\FlockStore($dir))->isLocked('r'));
$lock->release();

// Percent-encoded paths are decoded.
$dir2 = lock_test_tmpdir() . '/with space';
$factory = Lock\Factory::fromDsn('flock://' . str_replace(' ', '%20', $dir2));
$lock = $factory->createLock('r');
$lock->acquire();
var_dump(is_dir($dir2), (new Lock\Store\FlockStore($dir2))->isLocked('r'));
$lock->release();

$factory = Lock\Factory::fromDsn('semaphore:');
var_dump(get_class($factory->getStore()));
$resource = lock_test_resource();
$lock = $factory->createLock($resource);
var_dump($lock->acquire());
var_dump((new Lock\Store\SemaphoreStore())->isLocked($resource));
$lock->release();
var_dump((new Lock\Store\SemaphoreStore())->isLocked($resource));
?>
--EXPECT--
bool(true)
string(21) "Lock\Store\FlockStore"
bool(true)
bool(true)
bool(true)
string(21) "Lock\Store\FlockStore"
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
string(25) "Lock\Store\SemaphoreStore"
bool(true)
bool(true)
bool(false)
