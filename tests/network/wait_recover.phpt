--TEST--
network: a blocking wait over a slow link, or whose connection is cut while it sleeps or while the lock is handed to it, ends with the lock within its timeout + the store timeout + 100 ms, with a greater fencing token, and leaves no queue entries
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
$W = 3.0;
// A server of our own, so that its count of blocked clients is our waiter's alone.
$server = new LockTestRedisServer();
$direct = $server->client();
$proxy = new LockTestProxy($server->port);
$prefix = lock_test_prefix();
$directStore = new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]);
lock_net_load_scripts($directStore);

/** Starts a waiter on $resource (held by $holder) through the proxy and returns once it sleeps in BLPOP. */
function start_waiter(string $resource): LockTestChild
{
    global $server, $proxy, $prefix, $T, $W, $direct;
    $waiter = lock_net_waiter($proxy->dsn(), $prefix, $resource, $T, $W, $proxy->endpoint());
    $waiter->waitFor('waiting');
    lock_net_await_blocked($direct);
    return $waiter;
}

/** Lets the waiter print how its wait ended, checks what the server has, and has it release. */
function finish(LockTestChild $waiter, string $resource, int $before): void
{
    global $direct, $prefix;
    $waiter->waitFor('ended', 10.0);
    $out = $waiter->output();
    preg_match('/^(wait: .*)$/m', $out, $line);
    preg_match('/^token (\d+)$/m', $out, $token);
    preg_match('/^owner (\S+)$/m', $out, $owner);
    echo $line[1] ?? 'no wait line', "\n";
    echo '  fencing token greater than the holder\'s: ', var_export(isset($token[1]) && (int) $token[1] > $before, true), "\n";
    echo '  the server: held by the waiter: ', var_export($direct->cmd('GET', $prefix . '{' . $resource . '}') === ($owner[1] ?? ''), true),
        ', queue: ', lock_net_queue($direct, $prefix, $resource),
        ', lasting keys: ', lock_net_lasting_keys($direct, $prefix, $resource), "\n";
    $waiter->send('release');
    $waiter->waitFor('done', 10.0);
    $waiter->send('exit');
    $waiter->wait();
    preg_match('/^(release: .*)$/m', $waiter->output(), $line);
    echo '  ', $line[1] ?? 'no release line', "\n";
    echo '  keys left: ', lock_net_lasting_keys($direct, $prefix), "\n";
}

echo "-- a link slowed down (100 ms each way) while the waiter sleeps\n";
$holder = new Lock\Lock('slow', $directStore, 10.0);
$holder->acquire();
$before = $holder->getFencingToken();
$waiter = start_waiter('slow');
$proxy->delay(100, 100);
usleep(300000);
$holder->release();
finish($waiter, 'slow', $before);
$proxy->pass();

echo "-- the waiter's connection cut while it sleeps, the lock freed later\n";
$holder = new Lock\Lock('cut', $directStore, 10.0);
$holder->acquire();
$before = $holder->getFencingToken();
$accepted = $proxy->stats()['accepted'];
$waiter = start_waiter('cut');
$proxy->cut();
// It goes back to sleep on a new connection.
lock_test_wait_until(fn () => $proxy->stats()['accepted'] > $accepted + 1, 10.0, 'the waiter to reconnect');
lock_net_await_blocked($direct);
$holder->release();
finish($waiter, 'cut', $before);

for ($i = 1; $i <= 3; $i++) {
    echo "-- the waiter's connection cut as the lock is handed to it ($i)\n";
    $holder = new Lock\Lock("handoff-$i", $directStore, 10.0);
    $holder->acquire();
    $before = $holder->getFencingToken();
    $waiter = start_waiter("handoff-$i");
    // The hand-off's "y" may be on its way, read, or not yet sent: the waiter must end with the lock in every case.
    $holder->release();
    $proxy->cut();
    finish($waiter, "handoff-$i", $before);
}
?>
--EXPECT--
-- a link slowed down (100 ms each way) while the waiter sleeps
wait: returned true, in time
  fencing token greater than the holder's: true
  the server: held by the waiter: true, queue: empty, lasting keys: none
  release: returned NULL, in time
  keys left: none
-- the waiter's connection cut while it sleeps, the lock freed later
wait: returned true, in time
  fencing token greater than the holder's: true
  the server: held by the waiter: true, queue: empty, lasting keys: none
  release: returned NULL, in time
  keys left: none
-- the waiter's connection cut as the lock is handed to it (1)
wait: returned true, in time
  fencing token greater than the holder's: true
  the server: held by the waiter: true, queue: empty, lasting keys: none
  release: returned NULL, in time
  keys left: none
-- the waiter's connection cut as the lock is handed to it (2)
wait: returned true, in time
  fencing token greater than the holder's: true
  the server: held by the waiter: true, queue: empty, lasting keys: none
  release: returned NULL, in time
  keys left: none
-- the waiter's connection cut as the lock is handed to it (3)
wait: returned true, in time
  fencing token greater than the holder's: true
  the server: held by the waiter: true, queue: empty, lasting keys: none
  release: returned NULL, in time
  keys left: none
