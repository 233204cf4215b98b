--TEST--
combined: waiters on a CombinedStore over three Redis servers are woken by the release, not by a timer or the TTL, and served in arrival order; a timed wait gives up at its time; waitUntilFree() wakes at the release and takes nothing
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
lock_test_hang_guard(100);

$servers = [new LockTestRedisServer(), new LockTestRedisServer(), new LockTestRedisServer()];
$prefix = lock_test_prefix();
$dsn = 'redlock://' . implode(',', array_map(fn ($s) => '127.0.0.1:' . $s->port, $servers)) . '?prefix=' . urlencode($prefix);
$direct = array_map(fn ($s) => new Lock\Store\RedisStore($s->dsn('prefix=' . urlencode($prefix))), $servers);
$waiting = fn (string $r) => array_sum(array_map(fn ($d) => $d->inspect($r)['waiters'], $direct));
$dir = lock_test_tmpdir();
$ttl = 10.0;

$holder = Lock\Factory::fromDsn($dsn)->createLock('w', $ttl);
$holder->acquire();

echo "-- waiters\n";
$pids = [];
foreach (['first', 'second', 'third'] as $k => $name) {
    $pids[] = lock_test_fork(function () use ($dsn, $dir, $name, $ttl) {
        $lock = Lock\Factory::fromDsn($dsn)->createLock('w', $ttl);
        if (!$lock->acquire(true, 30.0)) {
            return 1;
        }
        file_put_contents("$dir/order", $name . ' ' . hrtime(true) . "\n", FILE_APPEND);
        usleep(20000);
        $lock->release();
        return 0;
    });
    // Each is queued before the next comes.
    lock_test_wait_until(fn () => $waiting('w') === $k + 1, 20.0, "$name queued");
}
usleep(200000);
echo 'nobody got in while it was held: ', var_export(!file_exists("$dir/order"), true), "\n";
$released = hrtime(true);
$holder->release();
foreach ($pids as $pid) {
    echo 'waiter exited ', lock_test_wait_pid($pid), "\n";
}
$lines = file("$dir/order", FILE_IGNORE_NEW_LINES);
echo 'served in arrival order: ', implode(' ', array_map(fn ($l) => explode(' ', $l)[0], $lines)), "\n";
// The TTL is 10 s: a waiter that looked again only when the hold ran out would come seconds later.
$after = ((int) explode(' ', $lines[0])[1] - $released) / 1e9;
echo 'the first woken by the release: ', var_export($after >= 0 && $after < $ttl / 5, true), "\n";
echo 'free afterwards: ', var_export(!Lock\Factory::fromDsn($dsn)->getStore()->isLocked('w'), true), "\n";

echo "-- a timed wait\n";
$holder->acquire();
$other = Lock\Factory::fromDsn($dsn)->createLock('w', $ttl);
$start = hrtime(true);
$got = $other->acquire(true, 0.3);
$took = (hrtime(true) - $start) / 1e9;
var_dump($got, $took >= 0.3, $took < 0.3 + lock_test_patience(1.0), $waiting('w'));
try {
    $other->run(fn () => null, 0.2);
} catch (Lock\TimeoutException $e) {
    echo get_class($e), "\n";
}

echo "-- waitUntilFree\n";
$pid = lock_test_fork(function () use ($dsn, $dir) {
    $store = Lock\Factory::fromDsn($dsn)->getStore();
    $free = $store->waitUntilFree('w', 30.0);
    file_put_contents("$dir/free", ($free ? 'free' : 'timed out') . ' ' . hrtime(true));
    return 0;
});
usleep(300000);
echo 'still waiting while held: ', var_export(!file_exists("$dir/free"), true), "\n";
$released = hrtime(true);
$holder->release();
lock_test_wait_pid($pid);
[$said, $at] = explode(' ', file_get_contents("$dir/free"));
echo "$said, woken by the release: ", var_export(((int) $at - $released) / 1e9 < $ttl / 5, true), "\n";
// What the release sent the last server runs when that server reads it: looked at until then.
$nothing = fn () => !$direct[0]->isLocked('w') && !$direct[1]->isLocked('w') && !$direct[2]->isLocked('w') && $waiting('w') === 0;
$deadline = microtime(true) + 5.0;
while (!$nothing() && microtime(true) < $deadline) {
    usleep(10000);
}
echo 'it took nothing: ', var_export($nothing(), true), "\n";
lock_test_rmdir($dir);
?>
--EXPECT--
-- waiters
nobody got in while it was held: true
waiter exited 0
waiter exited 0
waiter exited 0
served in arrival order: first second third
the first woken by the release: true
free afterwards: true
-- a timed wait
bool(false)
bool(true)
bool(true)
int(0)
Lock\TimeoutException
-- waitUntilFree
still waiting while held: true
free, woken by the release: true
it took nothing: true
