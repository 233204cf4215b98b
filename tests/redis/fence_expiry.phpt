--TEST--
redis: the fencing counter expires when the resource stays idle (10 x the hold's TTL, an hour at most), so nothing stays behind; tokens still strictly increase across its expiry
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$resp = new LockTestResp(lock_test_redis_port());
$counter = fn (string $resource) => $resp->ok('PTTL', $prefix . '{' . $resource . '}:f');
// The keys but the ticket counter, which goes 10 s after the last waiter came (LKC_RS_WAKE_TTL).
$keys = fn () => array_values(array_filter($resp->keys($prefix), fn ($k) => !str_ends_with($k, '}:t')));

echo "-- a single attempt, a 0.1 s TTL\n";
$lock = new Lock\Lock('short', $store, 0.1);
var_dump($lock->acquire());
$first = $lock->getFencingToken();
$ttl = $counter('short');
echo 'the counter lives at most 10 x the TTL: ', var_export($ttl > 0 && $ttl <= 1000, true), "\n";
$lock->release();
// 10 x 0.1 s after the take, the counter goes with everything else.
usleep(1300000);
echo 'keys left after the counter expired: ', json_encode($keys()), "\n";
var_dump($lock->acquire());
echo 'the token after the expiry is greater: ', var_export($lock->getFencingToken() > $first, true), "\n";
$lock->release();

echo "-- a hand-off to a waiter, a 0.2 s TTL\n";
$holder = lock_test_holder(lock_test_store_code('redis', null, $prefix), 'handed', 0.2, true);
$holder->send('sleep-release 0.3');
$lock = new Lock\Lock('handed', $store, 0.2);
var_dump($lock->acquire(true, 10.0));
$handed = $lock->getFencingToken();
$ttl = $counter('handed');
echo 'the counter lives at most 10 x the TTL: ', var_export($ttl > 0 && $ttl <= 2000, true), "\n";
$lock->release();
$holder->send('exit');
$holder->wait();
usleep(2300000);
echo 'keys left after the counter expired: ', json_encode($keys()), "\n";
var_dump($lock->acquire(true, 1.0));
echo 'the token after the expiry is greater: ', var_export($lock->getFencingToken() > $handed, true), "\n";
$lock->release();

echo "-- no TTL, and a long one\n";
foreach ([null, 3600.0 * 24] as $t) {
    $lock = new Lock\Lock('long-' . var_export($t, true), $store, $t);
    $lock->acquire();
    $ttl = $counter($lock->getResource());
    echo 'the counter lives an hour: ', var_export($ttl > 3500000 && $ttl <= 3600000, true), "\n";
    $lock->release();
}
?>
--EXPECT--
-- a single attempt, a 0.1 s TTL
bool(true)
the counter lives at most 10 x the TTL: true
keys left after the counter expired: []
bool(true)
the token after the expiry is greater: true
-- a hand-off to a waiter, a 0.2 s TTL
bool(true)
the counter lives at most 10 x the TTL: true
keys left after the counter expired: []
bool(true)
the token after the expiry is greater: true
-- no TTL, and a long one
the counter lives an hour: true
the counter lives an hour: true
