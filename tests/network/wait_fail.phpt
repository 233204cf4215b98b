--TEST--
network: a blocking wait whose link stalls, turns into a black hole or drops throws Lock\StorageException within its timeout + the store timeout + 100 ms; its queue entry goes, and once the link is back the next calls work
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
$W = 1.5;
// A server of our own, so that its count of blocked clients is our waiter's alone.
$server = new LockTestRedisServer();
$direct = $server->client();
$proxy = new LockTestProxy($server->port);
$prefix = lock_test_prefix();
$directStore = new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]);
$store = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
lock_net_load_scripts($directStore);

/** Starts a waiter on $resource through the proxy and returns once it sleeps in BLPOP. */
function start_waiter(string $resource): LockTestChild
{
    global $proxy, $prefix, $T, $W, $direct;
    $waiter = lock_net_waiter($proxy->dsn(), $prefix, $resource, $T, $W, $proxy->endpoint());
    $waiter->waitFor('waiting');
    lock_net_await_blocked($direct);
    return $waiter;
}

/** The line the waiter printed for its wait. */
function wait_line(LockTestChild $waiter): string
{
    $waiter->waitFor('ended', 10.0);
    preg_match('/^(wait: .*)$/m', $waiter->output(), $m);
    return $m[1] ?? 'no wait line';
}

/** Sends the waiter a command and returns the line it printed for it. */
function ask(LockTestChild $waiter, string $command): string
{
    $before = strlen($waiter->output());
    $waiter->send($command);
    $waiter->waitFor('done', 10.0);
    preg_match('/^(' . $command . ': .*)$/m', substr($waiter->output(), $before), $m);
    return $m[1] ?? "no $command line";
}

/** Waits (hang guard) until the queue of $resource is gone from the server: a waiter that vanished expires. */
function await_queue_gone(string $resource): void
{
    global $direct, $prefix;
    lock_test_wait_until(fn () => lock_net_queue($direct, $prefix, $resource) === 'empty', 15.0, "the queue of $resource to go");
    echo "  its queue entry is gone\n";
}

foreach (['stall', 'blackhole', 'drop'] as $fault) {
    echo "-- $fault while the waiter sleeps, the holder keeps the lock\n";
    $holder = new Lock\Lock($fault, $directStore, 10.0);
    $holder->acquire();
    $waiter = start_waiter($fault);
    $proxy->$fault();
    echo wait_line($waiter), "\n";
    await_queue_gone($fault);
    $proxy->pass();
    echo '  ', ask($waiter, 'acquire'), "\n";
    $holder->release();
    // Nobody is handed a lock once the holder lets go: the one who failed waits no more.
    echo '  the server after the release: ', lock_net_lasting_keys($direct, $prefix), ', locked: ', var_export($directStore->isLocked($fault), true), "\n";
    echo '  ', ask($waiter, 'acquire'), "\n";
    echo '  ', ask($waiter, 'release'), "\n";
    $waiter->send('exit');
    $waiter->wait();
    lock_net_expect('  a newcomer through the proxy: acquire', $T, fn () => (new Lock\Lock($fault, $store))->acquire());
}

echo "-- stall while the holder hands the lock to the waiter\n";
$holder = new Lock\Lock('handoff', $directStore, 10.0);
$holder->acquire();
$waiter = start_waiter('handoff');
$proxy->stall();
$holder->release();
echo wait_line($waiter), "\n";
preg_match('/^owner (\S+)$/m', $waiter->output(), $owner);
echo '  the server handed it over: ', var_export($direct->cmd('GET', $prefix . '{handoff}') === $owner[1], true), "\n";
$proxy->pass();
// The hand-off is the waiter's by its owner token: its next acquire() takes it, its release() frees it.
echo '  ', ask($waiter, 'acquire'), "\n";
echo '  ', ask($waiter, 'release'), "\n";
$waiter->send('exit');
$waiter->wait();
echo '  the server: locked: ', var_export($directStore->isLocked('handoff'), true), ', queue: ', lock_net_queue($direct, $prefix, 'handoff'), "\n";
echo 'lasting keys: ', lock_net_lasting_keys($direct, $prefix), "\n";
?>
--EXPECT--
-- stall while the waiter sleeps, the holder keeps the lock
wait: Lock\StorageException, in time
  its queue entry is gone
  acquire: returned false, in time
  the server after the release: none, locked: false
  acquire: returned true, in time
  release: returned NULL, in time
  a newcomer through the proxy: acquire: returned true, in time
-- blackhole while the waiter sleeps, the holder keeps the lock
wait: Lock\StorageException, in time
  its queue entry is gone
  acquire: returned false, in time
  the server after the release: none, locked: false
  acquire: returned true, in time
  release: returned NULL, in time
  a newcomer through the proxy: acquire: returned true, in time
-- drop while the waiter sleeps, the holder keeps the lock
wait: Lock\StorageException, in time
  its queue entry is gone
  acquire: returned false, in time
  the server after the release: none, locked: false
  acquire: returned true, in time
  release: returned NULL, in time
  a newcomer through the proxy: acquire: returned true, in time
-- stall while the holder hands the lock to the waiter
wait: Lock\StorageException, in time
  the server handed it over: true
  acquire: returned true, in time
  release: returned NULL, in time
  the server: locked: false, queue: empty
lasting keys: none
