--TEST--
semaphore: getFencingToken() is null in every state, the store has no fencing tokens
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('semaphore');
$lock = new Lock\Lock(lock_test_resource('fence'), $store);
echo 'not held: ', var_export($lock->getFencingToken(), true), "\n";
$lock->acquire();
echo 'held: ', var_export($lock->getFencingToken(), true), "\n";
$lock->acquireRead();
echo 'read hold: ', var_export($lock->getFencingToken(), true), "\n";
$lock->acquire();
echo 'promoted: ', var_export($lock->getFencingToken(), true), "\n";
$lock->release();
echo 'released: ', var_export($lock->getFencingToken(), true), "\n";
?>
--EXPECT--
not held: NULL
held: NULL
read hold: NULL
promoted: NULL
released: NULL
