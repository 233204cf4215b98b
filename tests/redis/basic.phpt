--TEST--
redis: a hold is a key under the prefix with the TTL as its expiry; release deletes it
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

$redis = new LockTestResp(lock_test_redis_port());
$prefix = lock_test_prefix();
$store = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);

/** The keys of our prefix but the fencing counters (which outlive the holds), with their PTTL. */
function holds(LockTestResp $redis, string $prefix): array
{
    $out = [];
    foreach ($redis->keys($prefix) as $key) {
        if (!str_ends_with($key, '}:f')) {
            $out[$key] = $redis->ok('PTTL', $key);
        }
    }
    return $out;
}

$lock = new Lock\Lock('job', $store, 30.0);
var_dump($lock->acquire());
$keys = holds($redis, $prefix);
$withTtl = array_filter($keys, fn ($pttl) => $pttl > 0);
var_dump(count($withTtl) >= 1);
var_dump(max($withTtl) <= 30000);
// The owner token is what makes the hold ours; it is stored, not just a flag.
$found = false;
foreach (array_keys($keys) as $key) {
    if ($redis->ok('TYPE', $key) === 'string' && str_contains((string) $redis->ok('GET', $key), $lock->getOwner())) {
        $found = true;
    } elseif ($redis->ok('TYPE', $key) === 'hash' && str_contains(json_encode($redis->ok('HGETALL', $key)), $lock->getOwner())) {
        $found = true;
    }
}
var_dump($found);
$lock->release();
var_dump(array_filter(holds($redis, $prefix), fn ($pttl) => $pttl > 0));
var_dump($store->isLocked('job'));

// No TTL: the hold never expires on the server.
$forever = new Lock\Lock('forever', $store, null);
$forever->acquire();
var_dump($store->isLocked('forever'));
$pttls = holds($redis, $prefix);
var_dump(count($pttls) >= 1 && max($pttls) === -1);
$forever->release();
var_dump($store->isLocked('forever'));

// A store without a prefix works too.
$bare = new Lock\Store\RedisStore(lock_test_redis_dsn());
$resource = lock_test_resource();
$l = new Lock\Lock($resource, $bare);
var_dump($l->acquire());
var_dump($bare->isLocked($resource));
$l->release();
var_dump($bare->isLocked($resource));
// The default DSN is redis://127.0.0.1:6379: nothing listens there in the suite, or it is another server.
var_dump((new ReflectionMethod('Lock\Store\RedisStore', '__construct'))->getParameters()[0]->getDefaultValue());
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
array(0) {
}
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
string(22) "redis://127.0.0.1:6379"
