--TEST--
partition: Redis in its own network namespace behind a veth pair; with the link down (either end) every call, a wait and a call in flight throw Lock\StorageException within their timeout + 100 ms; with the link up again the next calls work
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/netns.inc';
$why = lock_netns_refused();
// run-tests.php takes output starting with "nocache" as "run it, and ask again next time".
echo $why === null ? 'nocache' : "skip $why";
?>
--FILE--
<?php
require __DIR__ . '/../inc/netns.inc';
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(90);

$T = 0.5;
$W = 1.5;
$net = new LockTestNetns();
$direct = $net->direct();
$at = $net->endpoint();
$prefix = lock_test_prefix();
$store = new Lock\Store\RedisStore($net->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
lock_net_load_scripts($store);

foreach (['ns', 'host'] as $side) {
    echo '-- the link taken down at ', $side === 'ns' ? "the namespace's" : 'our', " end\n";
    $held = new Lock\Lock("held-$side", $store, 30.0);
    $other = new Lock\Lock("held-$side", $store, 10.0);
    $free = new Lock\Lock("free-$side", $store, 10.0);
    var_dump($held->acquire());
    $token = $held->getFencingToken();

    // A waiter asleep in BLPOP when the link goes.
    $waiter = lock_net_waiter($net->dsn(), $prefix, "held-$side", $T, $W, $at);
    $waiter->waitFor('waiting');
    lock_test_wait_until(fn () => lock_net_queue($direct, $prefix, "held-$side") !== 'empty', 10.0, 'the waiter to queue');
    $net->down($side);

    lock_net_expect('refresh', $T, fn () => $held->refresh(), $at);
    lock_net_expect('isAcquired', $T, fn () => $held->isAcquired(), $at);
    lock_net_expect('release', $T, fn () => $held->release(), $at);
    lock_net_expect('acquire', $T, fn () => $free->acquire(), $at);
    lock_net_expect('acquire(true, 5.0)', $T, fn () => $other->acquire(true, 5.0), $at);
    lock_net_expect('isLocked', $T, fn () => $store->isLocked("held-$side"), $at);
    lock_net_expect('a new store', $T, function () use ($net, $prefix, $T) {
        return (new Lock\Store\RedisStore($net->dsn(), ['prefix' => $prefix, 'timeout' => $T]))->isLocked('x');
    }, $at);
    $waiter->waitFor('ended', 10.0);
    preg_match('/^(wait: .*)$/m', $waiter->output(), $m);
    echo $m[1] ?? 'no wait line', "\n";
    echo 'the server, seen over its unix socket: still held by us: ',
        var_export($direct->cmd('GET', $prefix . "{held-$side}") === $held->getOwner(), true), "\n";

    $net->up();
    lock_net_expect('after: isLocked', $T, fn () => $store->isLocked("held-$side"));
    lock_net_expect('after: isAcquired', $T, fn () => $held->isAcquired());
    lock_net_expect('after: refresh', $T, fn () => $held->refresh());
    echo 'after: the same fencing token: ', var_export($held->getFencingToken() === $token, true), "\n";
    lock_net_expect('after: release', $T, fn () => $held->release());
    lock_net_expect('after: acquire', $T, fn () => $free->acquire());
    lock_net_expect('after: acquire(true, 5.0)', 5.0 + $T, fn () => $other->acquire(true, 5.0));
    echo 'after: a greater fencing token: ', var_export($other->getFencingToken() > $token, true), "\n";
    $other->release();
    $free->release();
    preg_match('/^(acquire: .*)$/m', ask_waiter($waiter, 'acquire'), $m);
    echo 'after: the waiter: ', $m[1] ?? 'no acquire line', "\n";
    $waiter->send('release');
    $waiter->send('exit');
    $waiter->wait();
}

echo "-- the link taken down while a call is in flight\n";
$lock = new Lock\Lock('in-flight', $store, 10.0);
// The server holds back writes for 1.5 s, so the acquire is on its way when the link goes 0.2 s later.
$direct->ok('CLIENT', 'PAUSE', 1500, 'WRITE');
$downer = proc_open(['sh', '-c', 'sleep 0.2; exec ip netns exec "$1" ip link set "$2" down', 'lock-test-down', $net->ns, $net->nsIf],
    [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
lock_net_expect('acquire', $T, fn () => $lock->acquire(), $at);
proc_close($downer);
// The paused acquire runs when the pause ends; its answer cannot come back.
lock_test_wait_until(fn () => $direct->cmd('GET', $prefix . '{in-flight}') !== null, 10.0, 'the paused acquire to run');
echo 'the server ran it: held by us: ', var_export($direct->cmd('GET', $prefix . '{in-flight}') === $lock->getOwner(), true), "\n";
$net->up();
// The hold is ours by our owner token: the next acquire() takes it, the release frees it.
lock_net_expect('after: acquire', $T, fn () => $lock->acquire());
lock_net_expect('after: release', $T, fn () => $lock->release());
echo 'keys on the server: ', lock_net_lasting_keys($direct, $prefix), "\n";

/** Sends the waiter a command and returns what it printed for it. */
function ask_waiter(LockTestChild $waiter, string $command): string
{
    $before = strlen($waiter->output());
    $waiter->send($command);
    $waiter->waitFor('done', 10.0);
    return substr($waiter->output(), $before);
}
?>
--EXPECT--
-- the link taken down at the namespace's end
bool(true)
refresh: Lock\StorageException, in time
isAcquired: Lock\StorageException, in time
release: Lock\StorageException, in time
acquire: Lock\StorageException, in time
acquire(true, 5.0): Lock\StorageException, in time
isLocked: Lock\StorageException, in time
a new store: Lock\StorageException, in time
wait: Lock\StorageException, in time
the server, seen over its unix socket: still held by us: true
after: isLocked: returned true, in time
after: isAcquired: returned true, in time
after: refresh: returned NULL, in time
after: the same fencing token: true
after: release: returned NULL, in time
after: acquire: returned true, in time
after: acquire(true, 5.0): returned true, in time
after: a greater fencing token: true
after: the waiter: acquire: returned true, in time
-- the link taken down at our end
bool(true)
refresh: Lock\StorageException, in time
isAcquired: Lock\StorageException, in time
release: Lock\StorageException, in time
acquire: Lock\StorageException, in time
acquire(true, 5.0): Lock\StorageException, in time
isLocked: Lock\StorageException, in time
a new store: Lock\StorageException, in time
wait: Lock\StorageException, in time
the server, seen over its unix socket: still held by us: true
after: isLocked: returned true, in time
after: isAcquired: returned true, in time
after: refresh: returned NULL, in time
after: the same fencing token: true
after: release: returned NULL, in time
after: acquire: returned true, in time
after: acquire(true, 5.0): returned true, in time
after: a greater fencing token: true
after: the waiter: acquire: returned true, in time
-- the link taken down while a call is in flight
acquire: Lock\StorageException, in time
the server ran it: held by us: true
after: acquire: returned true, in time
after: release: returned NULL, in time
keys on the server: none
