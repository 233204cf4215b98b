<?php
// A short tour of the lock extension on the flock store (no server needed).

use Lock\Factory;
use Lock\Lock;
use Lock\Store\FlockStore;

$dir = sys_get_temp_dir() . '/lock-demo-' . getmypid();
$store = new FlockStore($dir);
$factory = new Factory($store);

$lock = $factory->createLock('invoice-42');
printf("acquire():            %s\n", var_export($lock->acquire(), true));
printf("isAcquired():         %s\n", var_export($lock->isAcquired(), true));
printf("store->isLocked():    %s\n", var_export($store->isLocked('invoice-42'), true));

// A second lock object on the same resource conflicts, even in this process.
$other = $factory->createLock('invoice-42');
printf("other->acquire():     %s (busy)\n", var_export($other->acquire(), true));
$t = hrtime(true);
printf("other waits 0.2 s:    %s after %.0f ms\n",
    var_export($other->acquire(timeout: 0.2), true), (hrtime(true) - $t) / 1e6);

$lock->release();
printf("after release:        other->acquire() = %s\n", var_export($other->acquire(), true));
$other->release();

// run() holds the lock around a callback and releases it in every case.
$total = $factory->createLock('report')->run(fn (Lock $l) => array_sum([1, 2, 3]), timeout: 1.0);
printf("run() returned:       %d\n", $total);

array_map('unlink', glob("$dir/*"));
rmdir($dir);
echo "demo: ok\n";
