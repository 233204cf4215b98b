--TEST--
Factory::fromDsn() uses lock.default_ttl as the default TTL; new Factory() uses its own default
--EXTENSIONS--
lock
--INI--
lock.default_ttl=42.5
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$dir = lock_test_tmpdir();
$factory = Lock\Factory::fromDsn('flock://' . $dir);
var_dump($factory->createLock('r')->getTtl());
var_dump($factory->createLock('r', 5.0)->getTtl());
ini_set('lock.default_ttl', '7');
// The TTL is read when the factory is made.
var_dump($factory->createLock('r')->getTtl());
var_dump(Lock\Factory::fromDsn('semaphore:')->createLock('r')->getTtl());
var_dump(Lock\Factory::fromDsn(lock_test_redis_dsn())->createLock('r')->getTtl());
// The constructor's default is 300 whatever the INI says.
var_dump((new Lock\Factory($factory->getStore()))->createLock('r')->getTtl());
?>
--EXPECT--
float(42.5)
float(5)
float(42.5)
float(7)
float(7)
float(300)
