--TEST--
$autoRefresh: what the argument takes (true, false, positive seconds) and what it refuses, on Lock, createLock() and restoreLock()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');
$factory = new Lock\Factory($store, 10.0);
$make = [
    'Lock' => fn ($v) => new Lock\Lock(lock_test_resource(), $store, 10.0, true, null, $v),
    'createLock' => fn ($v) => $factory->createLock(lock_test_resource(), false, true, null, $v),
    'restoreLock' => fn ($v) => $factory->restoreLock(lock_test_resource(), 'owner-1', false, false, $v),
];
foreach ($make as $name => $fn) {
    echo "-- $name\n";
    foreach ([true, false, 2.5, 1, '2.5', INF, NAN, 0.0, 0, -1.0, 1e10, [], null, new stdClass()] as $v) {
        try {
            $fn($v);
            echo 'ok ', var_export($v, true), "\n";
        } catch (Throwable $e) {
            echo get_class($e), ': ', $e->getMessage(), "\n";
        }
    }
}
// Named, as PHP code spells it.
$lock = new Lock\Lock(lock_test_resource(), $store, ttl: 10.0, autoRefresh: 30.0);
var_dump($lock->acquire(), $lock->getRemainingLifetime() > 9.0);
$lock->release();
// A non-numeric string is a bool to a bool|float parameter, as PHP coerces it; strict_types refuses it.
$script = tempnam(sys_get_temp_dir(), 'lock-strict-');
file_put_contents($script, '<?php declare(strict_types=1); try { new Lock\Lock("r", new Lock\Store\FlockStore(sys_get_temp_dir()), 1.0, true, null, "2.5"); } catch (TypeError $e) { echo $e->getMessage(), "\n"; }');
passthru(implode(' ', array_map('escapeshellarg', lock_test_php_cmd($script))));
unlink($script);
?>
--EXPECT--
-- Lock
ok true
ok false
ok 2.5
ok 1
ok '2.5'
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be a finite number
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be a finite number
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be greater than 0
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be greater than 0
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be greater than 0
ValueError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be at most 1000000000 seconds
TypeError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be of type float|bool, array given
TypeError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be of type float|bool, null given
TypeError: Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be of type float|bool, stdClass given
-- createLock
ok true
ok false
ok 2.5
ok 1
ok '2.5'
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be a finite number
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be a finite number
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be at most 1000000000 seconds
TypeError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be of type float|bool, array given
TypeError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be of type float|bool, null given
TypeError: Lock\Factory::createLock(): Argument #5 ($autoRefresh) must be of type float|bool, stdClass given
-- restoreLock
ok true
ok false
ok 2.5
ok 1
ok '2.5'
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be a finite number
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be a finite number
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be greater than 0
ValueError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be at most 1000000000 seconds
TypeError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be of type float|bool, array given
TypeError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be of type float|bool, null given
TypeError: Lock\Factory::restoreLock(): Argument #5 ($autoRefresh) must be of type float|bool, stdClass given
bool(true)
bool(true)
Lock\Lock::__construct(): Argument #6 ($autoRefresh) must be of type float|bool, string given
