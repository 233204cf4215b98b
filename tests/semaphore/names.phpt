--TEST--
semaphore: distinct resource names are distinct locks, binary and 64 KiB names included
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\SemaphoreStore();
$base = lock_test_resource();
$names = [
    $base, $base . 'x', "$base\0", "$base\0x", strtoupper($base), $base . '/..', "\xff$base",
    str_repeat('s', 65536 - strlen($base)) . $base, str_repeat('s', 65535 - strlen($base)) . $base . 'y',
];
$locks = [];
foreach ($names as $i => $name) {
    $lock = new Lock\Lock($name, $store);
    if (!$lock->acquire()) {
        echo "not acquired: #$i\n";
    }
    $locks[] = $lock;
}
foreach ($names as $i => $name) {
    if (!$store->isLocked($name)) {
        echo "not locked: #$i\n";
    }
    // A second lock on the same name is refused.
    if ((new Lock\Lock($name, $store))->acquire()) {
        echo "acquired twice: #$i\n";
    }
}
foreach ($locks as $lock) {
    $lock->release();
}
foreach ($names as $i => $name) {
    if ($store->isLocked($name)) {
        echo "still locked: #$i\n";
    }
    $store->forceRelease($name);
}
echo "done\n";
?>
--EXPECT--
done
