--TEST--
network: a waiter whose link drops is gone; a release that comes before its queue entry expires does not leave the lock to it for its TTL: the next single acquire takes it once the hand-off's grace is over
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(60);

$T = 0.4;
// A server of our own, so that its count of blocked clients is our waiter's alone.
$server = new LockTestRedisServer();
$direct = $server->client();
$proxy = new LockTestProxy($server->port);
$prefix = lock_test_prefix();
$directStore = new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]);
lock_net_load_scripts($directStore);

$holder = new Lock\Lock('r', $directStore, 10.0);
var_dump($holder->acquire());
// The waiter asks for a 30 s hold.
$waiter = lock_net_waiter($proxy->dsn(), $prefix, 'r', $T, 5.0, $proxy->endpoint(), 30.0);
$waiter->waitFor('waiting');
lock_net_await_blocked($direct);
$proxy->drop();
$waiter->waitFor('ended', 10.0);
preg_match('/^(wait: .*)$/m', $waiter->output(), $m);
echo $m[1] ?? 'no wait line', "\n";
$waiter->send('exit');
$waiter->wait();

// The holder lets go while the gone waiter's entry has not expired yet (it lasts about 2 s + 2 x its timeout).
$holder->release();
// docs/waiting.md: a waiter that died costs the others at most 200 ms (2 s when its watcher died too).
$newcomer = new Lock\Lock('r', $directStore, 10.0);
$deadline = microtime(true) + 2.0 + lock_net_slack();
$got = false;
while (!$got && microtime(true) < $deadline) {
    $got = $newcomer->acquire();
    usleep(50000);
}
echo 'a newcomer got the lock within 2 s: ', var_export($got, true), "\n";
echo 'held by the gone waiter for its TTL: ', var_export($direct->cmd('PTTL', $prefix . '{r}') > 20000, true), "\n";
$newcomer->release();
?>
--EXPECT--
bool(true)
wait: Lock\StorageException, in time
a newcomer got the lock within 2 s: true
held by the gone waiter for its TTL: false
