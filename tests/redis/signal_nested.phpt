--TEST--
redis: a signal handler that runs during a blocking wait and uses another lock of the same RedisStore works on a connection of its own; the outer wait goes on undisturbed
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
lock_test_hang_guard(60);

// A server of our own, so that its count of connections is ours.
$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn);
$connections = fn (): int => preg_match('/^total_connections_received:(\d+)/m', $admin->ok('INFO', 'stats'), $m) ? (int) $m[1] : -1;
$outer = new Lock\Lock(lock_test_resource('outer'), $store, 30.0);
$beat = new Lock\Lock(lock_test_resource('beat'), $store, 30.0);
$other = new Lock\Lock(lock_test_resource('other'), $store, 30.0);
var_dump($beat->acquire());

// The handler is a heartbeat: it refreshes a lock of the same store, and takes and gives back another one.
$calls = 0;
$bad = [];
pcntl_async_signals(true);
pcntl_signal(SIGUSR1, function () use ($beat, $other, $store, &$calls, &$bad): void {
    $calls++;
    try {
        if ($beat->refresh() !== null && !$beat->isAcquired()) {
            $bad[] = 'refresh lost the hold';
        }
        if ($other->acquire() !== true) {
            $bad[] = 'acquire of a free lock failed';
        }
        if ($store->isLocked($other->getResource()) !== true) {
            $bad[] = 'isLocked() missed our hold';
        }
        $other->release();
    } catch (Throwable $e) {
        $bad[] = get_class($e) . ': ' . $e->getMessage();
    }
});

foreach (['a signal every 100 ms' => 100000, 'a signal every 7 ms' => 7000] as $what => $every) {
    echo "-- $what\n";
    $holder = lock_test_holder('new Lock\Store\RedisStore(' . var_export($dsn, true) . ')', $outer->getResource(), 30.0);
    $holder->send('sleep-release 2.5');
    $parent = getmypid();
    $pid = lock_test_fork(function () use ($parent, $every): int {
        $end = microtime(true) + 3.0;
        while (microtime(true) < $end) {
            usleep($every);
            posix_kill($parent, SIGUSR1);
        }
        return 0;
    });
    $calls = 0;
    $bad = [];
    $before = $connections();
    $got = $outer->acquire(true, 20.0);
    $made = $connections() - $before;
    echo 'outer wait acquired: ', var_export($got, true), "\n";
    echo 'outer fencing token: ', var_export($outer->getFencingToken() > 0, true), "\n";
    lock_test_wait_pid($pid);
    $holder->wait();
    echo 'handler ran during the wait: ', var_export($calls > 5, true), "\n";
    echo 'handler calls all worked: ', $bad === [] ? 'true' : implode('; ', array_unique($bad)), "\n";
    // The handler's calls share one connection of their own, kept between them.
    echo 'connections the wait and the handler made: at most 1: ', $made <= 1 ? 'true' : "false ($made for $calls calls)", "\n";
    $outer->release();
}
echo 'heartbeat lock still held: ', var_export($beat->isAcquired(), true), "\n";
$beat->release();
?>
--EXPECT--
bool(true)
-- a signal every 100 ms
outer wait acquired: true
outer fencing token: true
handler ran during the wait: true
handler calls all worked: true
connections the wait and the handler made: at most 1: true
-- a signal every 7 ms
outer wait acquired: true
outer fencing token: true
handler ran during the wait: true
handler calls all worked: true
connections the wait and the handler made: at most 1: true
heartbeat lock still held: true
