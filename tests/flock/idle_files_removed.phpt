--TEST--
flock: lock files of idle names go (at most the cache stays); fencing tokens keep increasing across removals
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
$dir = lock_test_tmpdir();
$count = fn () => count(glob("$dir/*.lock"));

// A thousand names through the default cache of 64.
$store = new Lock\Store\FlockStore($dir);
for ($i = 0; $i < 1000; $i++) {
    $lock = new Lock\Lock("order:$i", $store);
    $lock->acquire() || print("not acquired: $i\n");
    $lock->release();
}
unset($lock);
echo 'files with the default cache: ', $count(), "\n";
// What is held stays, beside the cache; the store's idle files go with the store.
$held = new Lock\Lock('held', $store);
$held->acquire();
echo 'files with one held: ', $count(), "\n";
$held->release();
unset($held, $store);
echo 'files once the store went: ', $count(), "\n";

// Without a cache every release removes the file, and tokens still increase.
$store = new Lock\Store\FlockStore($dir, ['cache' => 10]);
$nocache = new Lock\Store\FlockStore($dir, ['cache' => 0]);
$last = 0;
$increasing = true;
for ($i = 0; $i < 50; $i++) {
    $lock = new Lock\Lock('fenced', $i % 3 ? $nocache : $store);
    $lock->acquire(true, 10.0);
    $token = $lock->getFencingToken();
    $increasing = $increasing && $token > $last;
    $last = $token;
    $lock->release();
    if ($i % 3) {
        // Removed at once, even though the other store keeps it open and idle.
        $increasing = $increasing && $count() === 0;
    }
}
var_dump($increasing, $last >= 50);
echo 'files with a cache of 10: ', $count(), "\n";
?>
--EXPECT--
files with the default cache: 64
files with one held: 65
files once the store went: 0
bool(true)
bool(true)
files with a cache of 10: 0
