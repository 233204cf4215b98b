--TEST--
redis: phpinfo() never shows a password of a store, a DSN or a failed connection
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$password = 'Tr0ub4dor-phpinfo';
$server = new LockTestRedisServer(['--requirepass', $password], $password);
$port = $server->port;
$stores = [
    new Lock\Store\RedisStore("redis://:$password@127.0.0.1:$port?prefix=a:&persistent=1"),
    new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['password' => $password, 'persistent' => true]),
    Lock\Factory::fromDsn("redis://default:$password@127.0.0.1:$port")->getStore(),
];
$locks = [];
foreach ($stores as $i => $store) {
    $lock = new Lock\Lock("info-$i", $store, 30.0);
    var_dump($lock->acquire());
    $locks[] = $lock;
}
// A wrong password: its error is the last one the extension saw.
try {
    (new Lock\Store\RedisStore("redis://:wrong-$password@127.0.0.1:$port"))->isLocked('x');
} catch (Lock\StorageException $e) {
    echo get_class($e), "\n";
}
ob_start();
phpinfo();
$info = ob_get_clean();
echo "phpinfo has a lock section: ", var_export(str_contains($info, 'lock support') || str_contains($info, "\nlock\n"), true), "\n";
echo "phpinfo shows the password: ", var_export(str_contains($info, $password), true), "\n";
foreach ($locks as $lock) {
    $lock->release();
}
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
Lock\StorageException
phpinfo has a lock section: true
phpinfo shows the password: false
