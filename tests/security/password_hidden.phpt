--TEST--
redis: the password never shows in var_dump(), print_r(), var_export() or messages of a RedisStore
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$password = 'Hunter2-secret';
$server = new LockTestRedisServer(['--requirepass', $password], $password);
$port = $server->port;
$stores = [
    new Lock\Store\RedisStore("redis://:$password@127.0.0.1:$port?prefix=a:"),
    new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['password' => $password, 'prefix' => 'b:']),
    Lock\Factory::fromDsn("redis://default:$password@127.0.0.1:$port")->getStore(),
];
foreach ($stores as $i => $store) {
    $lock = new Lock\Lock('r', $store);
    $lock->acquire();
    ob_start();
    var_dump($store);
    print_r($store);
    echo "\n";
    var_export($store);
    echo "\n", json_encode($store), "\n";
    var_dump((array) $store);
    debug_zval_dump($store);
    var_dump($lock);
    var_dump(new Lock\Factory($store));
    $dump = ob_get_clean();
    echo "store $i: dumps show the password: ", var_export(str_contains($dump, $password), true), "\n";
    $lock->release();
}

// The server goes away: connection errors do not show the password either.
$server->stop();
foreach ($stores as $i => $store) {
    try {
        $store->isLocked('r');
        echo "no exception\n";
    } catch (Lock\StorageException $e) {
        echo "store $i down: message shows the password: ", var_export(str_contains($e->getMessage(), $password), true), "\n";
    }
}
// Nor does a DSN the parser refuses.
foreach (["redis://:$password@127.0.0.1:notaport", "redis://:$password@127.0.0.1:$port/x", "redis://u:$password@h1,h2", "redis://:$password%zz@127.0.0.1"] as $dsn) {
    try {
        new Lock\Store\RedisStore($dsn);
        echo "no exception\n";
    } catch (ValueError $e) {
        echo 'bad DSN: message shows the password: ', var_export(str_contains($e->getMessage(), $password), true), "\n";
    }
}
?>
--EXPECT--
store 0: dumps show the password: false
store 1: dumps show the password: false
store 2: dumps show the password: false
store 0 down: message shows the password: false
store 1 down: message shows the password: false
store 2 down: message shows the password: false
bad DSN: message shows the password: false
bad DSN: message shows the password: false
bad DSN: message shows the password: false
bad DSN: message shows the password: false
