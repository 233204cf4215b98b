--TEST--
redis: the records of a hand-off without a TTL are kept only while such a hold lives: once it is released, stale records of other hand-offs expire (two readers handed their holds at once)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$storeCode = lock_test_store_code('redis', null, $prefix);
$store = lock_test_store('redis', null, $prefix);
$redis = new LockTestResp(lock_test_redis_port());
$key = $prefix . '{r}';

/** A child that waits for a read hold of 'r' with $ttl, prints "held", and releases when told. */
function waiter(?float $ttl): LockTestChild
{
    global $storeCode, $redis, $key;
    $queued = $redis->ok('LLEN', $key . ':q');
    $child = new LockTestChild('$lock = new Lock\Lock("r", ' . $storeCode . ', ' . var_export($ttl, true) . ");\n" . <<<'PHP'
$lock->acquireRead(true, 30.0) or exit(1);
echo "held\n";
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === 'release') {
        $lock->release();
        echo "released\n";
    }
}
PHP);
    lock_test_wait_until(fn () => $redis->ok('LLEN', $key . ':q') > $queued, 20, 'the waiter to queue');
    return $child;
}

// Two readers are handed their holds at once: one of 0.3 s, which it never releases, and one without a TTL.
$holder = new Lock\Lock('r', $store, 30.0);
var_dump($holder->acquire());
$short = waiter(0.3);
$forever = waiter(null);
$holder->release();
$short->waitFor('held');
$forever->waitFor('held');
echo 'records kept while the hold without a TTL lives: ', var_export($redis->ok('PTTL', $key . ':h') === -1, true), "\n";
usleep(400000);
// The hold without a TTL is released; the other one ran out, so its record is stale.
$forever->send('release');
$forever->waitFor('released');
$left = $redis->ok('PTTL', $key . ':h');
echo 'after its release the records expire: ', var_export($left === -2 || ($left > 0 && $left <= 10000), true), "\n";
$short->kill();
$forever->kill();
?>
--EXPECT--
bool(true)
records kept while the hold without a TTL lives: true
after its release the records expire: true
