--TEST--
redis: the database option and the DSN path select the database
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

$redis = new LockTestResp(lock_test_redis_port());
$prefix = lock_test_prefix();
$in5 = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix, 'database' => 5]);
$in6 = new Lock\Store\RedisStore(lock_test_redis_dsn() . '/6', ['prefix' => $prefix]);
$in0 = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);
// The option wins over the DSN's path.
$in7 = new Lock\Store\RedisStore(lock_test_redis_dsn() . '/6', ['prefix' => $prefix, 'database' => 7]);

$a = new Lock\Lock('r', $in5);
var_dump($a->acquire());
// Other databases are other namespaces.
var_dump($in0->isLocked('r'), $in6->isLocked('r'), $in7->isLocked('r'));
var_dump((new Lock\Lock('r', $in6))->acquire());
foreach ([0, 5, 6, 7] as $db) {
    $redis->ok('SELECT', $db);
    // The fencing counter (":f") outlives a release by design: only lock keys count here.
    $locks = array_filter($redis->keys($prefix), fn ($k) => !str_ends_with($k, ':f'));
    echo "db $db: ", count($locks) > 0 ? 'has keys' : 'empty', "\n";
}
$a->release();
?>
--EXPECT--
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
db 0: empty
db 5: has keys
db 6: empty
db 7: empty
