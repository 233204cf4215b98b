--TEST--
redis: any resource name is its own lock, and every key the store writes starts with its prefix
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

// A private server: "every key has the prefix" is only checkable when nobody else writes.
$server = new LockTestRedisServer();
$redis = $server->client();
$prefix = 'app{1}:*?[x]:';
$store = new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]);
$names = [
    'a', 'a}', '{a', '{a}', '}{', 'a}:x', "a\0b", "a\0c", "\r\n", '*', '?', '[a-z]', "\xff\xfe", ' ',
    'a:b', 'a b', str_repeat('k', 65536), str_repeat('k', 65535) . 'l',
];
$locks = [];
foreach ($names as $i => $name) {
    $lock = new Lock\Lock($name, $store, 60.0);
    if (!$lock->acquire()) {
        echo "not acquired: #$i\n";
    }
    $locks[] = $lock;
}
foreach ($names as $i => $name) {
    if (!$store->isLocked($name)) {
        echo "not locked: #$i\n";
    }
    if ((new Lock\Lock($name, $store))->acquire()) {
        echo "acquired twice: #$i\n";
    }
}
$keys = [];
$cursor = '0';
do {
    [$cursor, $batch] = $redis->ok('SCAN', $cursor, 'COUNT', 1000);
    array_push($keys, ...$batch);
} while ($cursor !== '0');
var_dump(count($keys) >= count($names));
foreach ($keys as $key) {
    if (!str_starts_with($key, $prefix)) {
        echo "key without the prefix: ", json_encode(substr($key, 0, 60)), "\n";
    }
}
foreach ($locks as $lock) {
    $lock->release();
}
foreach ($names as $i => $name) {
    if ($store->isLocked($name)) {
        echo "still locked: #$i\n";
    }
}
echo "done\n";
?>
--EXPECT--
bool(true)
done
