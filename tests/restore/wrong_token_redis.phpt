--TEST--
redis: a lock restored with a wrong owner token can neither refresh nor release: LostException while another holds the resource, ExpiredException when nobody does
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$factory = new Lock\Factory($store);
$resource = lock_test_resource('restore');
$factoryCode = '$factory = new Lock\Factory(' . lock_test_store_code('redis', null, $prefix) . ");\n";
$fake = bin2hex(random_bytes(16));

/** Prints what refresh() and release() of locks restored with $owner do, here and in another process (exception classes only). */
function attempt(Lock\Factory $factory, string $factoryCode, string $resource, string $owner): void
{
    $lock = $factory->restoreLock($resource, $owner);
    echo 'getOwner is the token: ', var_export($lock->getOwner() === $owner, true), "\n";
    echo 'isAcquired: ', var_export($lock->isAcquired(), true), "\n";
    $code = <<<'PHP'
foreach (['refresh', 'release'] as $method) {
    try {
        $factory->restoreLock($resource, $owner)->$method();
        echo "$where, $method: no exception\n";
    } catch (Throwable $e) {
        echo "$where, $method: ", get_class($e), "\n";
    }
}
PHP;
    $vars = '$resource = ' . var_export($resource, true) . '; $owner = ' . var_export($owner, true) . ";\n";
    $where = 'here';
    eval($vars . $code);
    [, $out] = lock_test_run_php($factoryCode . $vars . '$where = "another process";' . "\n" . $code);
    echo $out;
}

echo "-- somebody else holds the resource\n";
$holder = $factory->createLock($resource);
var_dump($holder->acquire());
attempt($factory, $factoryCode, $resource, $fake);
echo 'the holder still holds: ', var_export($holder->isAcquired(), true), "\n";
$holder->refresh();
echo 'and refreshes: ok', "\n";

echo "-- nobody holds it\n";
$owner = $holder->getOwner();
$holder->release();
attempt($factory, $factoryCode, $resource, $fake);
echo "-- the right token, after the hold was released\n";
attempt($factory, $factoryCode, $resource, $owner);
echo 'isLocked: ', var_export($store->isLocked($resource), true), "\n";

echo "-- the holder's token on another resource\n";
var_dump($holder->acquire());
$other = lock_test_resource('other');
attempt($factory, $factoryCode, $other, $holder->getOwner());
echo 'isLocked other: ', var_export($store->isLocked($other), true), "\n";
echo 'the holder still holds: ', var_export($holder->isAcquired(), true), "\n";
$holder->release();
?>
--EXPECT--
-- somebody else holds the resource
bool(true)
getOwner is the token: true
isAcquired: false
here, refresh: Lock\LostException
here, release: Lock\LostException
another process, refresh: Lock\LostException
another process, release: Lock\LostException
the holder still holds: true
and refreshes: ok
-- nobody holds it
getOwner is the token: true
isAcquired: false
here, refresh: Lock\ExpiredException
here, release: Lock\ExpiredException
another process, refresh: Lock\ExpiredException
another process, release: Lock\ExpiredException
-- the right token, after the hold was released
getOwner is the token: true
isAcquired: false
here, refresh: Lock\ExpiredException
here, release: Lock\ExpiredException
another process, refresh: Lock\ExpiredException
another process, release: Lock\ExpiredException
isLocked: false
-- the holder's token on another resource
bool(true)
getOwner is the token: true
isAcquired: false
here, refresh: Lock\ExpiredException
here, release: Lock\ExpiredException
another process, refresh: Lock\ExpiredException
another process, release: Lock\ExpiredException
isLocked other: false
the holder still holds: true
