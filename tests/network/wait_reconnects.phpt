--TEST--
network: a long Redis wait on an idle server keeps its connection (no reconnect every 2 s); a wait whose connection is cut twice, with a working reconnect between, goes on and gets the lock
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
// A server of our own, idle but for us: it ends a BLPOP on its 100 ms tick.
$server = new LockTestRedisServer();
$direct = $server->client();
$proxy = new LockTestProxy($server->port);
$prefix = lock_test_prefix();
$directStore = new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]);
lock_net_load_scripts($directStore);

echo "-- a long wait on an idle server\n";
$holder = new Lock\Lock('long', $directStore, 30.0);
$holder->acquire();
$waiter = lock_net_waiter($proxy->dsn(), $prefix, 'long', $T, 10.0, $proxy->endpoint());
$waiter->waitFor('waiting');
lock_net_await_blocked($direct);
$accepted = $proxy->stats()['accepted'];
// Three sleeps of 2 s: each used to end past its deadline and cost the connection.
usleep(6500000);
echo 'new connections during 6.5 s of waiting: ', $proxy->stats()['accepted'] - $accepted, "\n";
$holder->release();
$waiter->waitFor('ended', 10.0);
preg_match('/^(wait: .*)$/m', $waiter->output(), $line);
echo $line[1] ?? 'no wait line', "\n";
$waiter->send('release');
$waiter->waitFor('done', 10.0);
$waiter->send('exit');
$waiter->wait();

echo "-- the wait's connection cut twice, the reconnect between them working\n";
$holder = new Lock\Lock('cut', $directStore, 30.0);
$holder->acquire();
$waiter = lock_net_waiter($proxy->dsn(), $prefix, 'cut', $T, 10.0, $proxy->endpoint());
$waiter->waitFor('waiting');
lock_net_await_blocked($direct);
for ($i = 1; $i <= 2; $i++) {
    $accepted = $proxy->stats()['accepted'];
    $proxy->cut();
    lock_test_wait_until(fn () => $proxy->stats()['accepted'] > $accepted, 10.0, 'the waiter to reconnect');
    lock_net_await_blocked($direct);
    echo "cut $i: the waiter sleeps again on a new connection\n";
}
$holder->release();
$waiter->waitFor('ended', 10.0);
preg_match('/^(wait: .*)$/m', $waiter->output(), $line);
echo $line[1] ?? 'no wait line', "\n";
$waiter->send('release');
$waiter->waitFor('done', 10.0);
$waiter->send('exit');
$waiter->wait();
echo 'keys left: ', lock_net_lasting_keys($direct, $prefix), "\n";
?>
--EXPECT--
-- a long wait on an idle server
new connections during 6.5 s of waiting: 0
wait: returned true, in time
-- the wait's connection cut twice, the reconnect between them working
cut 1: the waiter sleeps again on a new connection
cut 2: the waiter sleeps again on a new connection
wait: returned true, in time
keys left: none
