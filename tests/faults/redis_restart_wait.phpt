--TEST--
faults: a Redis server killed (SIGKILL), and restarted, while waiters sleep in acquire(true): each gets Lock\StorageException or the lock within the timeout + 100 ms of the fault, never hangs, and leaves no queue behind
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
$bound = $timeout + LOCK_FAULT_SLACK;
$prefix = lock_test_prefix();
$server = new LockTestRedisServer();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);
$setup = '$store = ' . lock_fault_store_code($dsn, ['timeout' => $timeout]) . '; $lock = new Lock\Lock("w", $store, 30.0);';
$calls = [
    'write' => '$lock->acquire(true, 5.0) ? $lock->getFencingToken() : false',
    'forever' => '$lock->acquire(true) ? $lock->getFencingToken() : false',
    'read' => '$lock->acquireRead(true, 5.0)',
    'check' => '$store->isLocked("w")',
];

/** Starts waiters (one per call name) on "w" and waits until all of them are queued and asleep. */
function start_waiters(array $names): array
{
    global $setup, $calls, $server, $prefix;
    $admin = $server->client();
    $waiters = [];
    foreach ($names as $name) {
        $waiters[$name] = lock_fault_caller($setup, '$store->isLocked("w")', $calls);
        $waiters[$name]->send("go $name");
        lock_test_wait_until(fn () => $admin->ok('LLEN', $prefix . '{w}:q') === count($waiters), 20, 'the waiters to queue');
    }
    // Each is in BLPOP once the server lists it as blocked there.
    lock_test_wait_until(fn () => count(array_filter(lock_fault_clients($admin), fn ($c) => $c['cmd'] === 'blpop')) === count($names),
        20, 'the waiters to sleep');
    return $waiters;
}

echo "-- killed, not restarted\n";
$holder = new Lock\Lock('w', $store, 30.0);
var_dump($holder->acquire());
$waiters = start_waiters(['write', 'forever', 'read']);
$server->kill();
$killedAt = hrtime(true);
// The sleeping connection breaks, the one retry finds nobody listening: StorageException at once.
foreach ($waiters as $name => $w) {
    $r = lock_fault_caller_result($w);
    lock_fault_report("waiter $name", $r, ['StorageException'], 5.0 + $bound);
    $after = ($r[3] - $killedAt) / 1e9;
    if ($after > $bound) {
        printf("waiter %s: ended %.0f ms after the kill, over its bound of %.0f ms\n", $name, $after * 1000, $bound * 1000);
    }
    $w->wait();
}
$server->restart();
lock_fault_call('holder: release', fn () => $holder->release(), $bound, ['ExpiredException']);
echo 'keys left: ', json_encode(lock_fault_keys($server->client(), $prefix)), "\n";

echo "-- killed and restarted while the waiter is stopped\n";
var_dump($holder->acquire());
$token = $holder->getFencingToken();
['write' => $w] = start_waiters(['write']);
lock_fault_stop($w->pid);
$server->kill();
$server->restart();
$contAt = hrtime(true);
lock_fault_stop($w->pid, false);
// It finds its connection broken, steps again on a new one and meets the new, empty server: the lock is free.
$r = lock_fault_caller_result($w);
lock_fault_report('waiter', $r, ['ok'], 5.0 + $bound, false);
$after = ($r[3] - $contAt) / 1e9;
if ($after > $bound) {
    printf("waiter: ended %.0f ms after it went on, over its bound of %.0f ms\n", $after * 1000, $bound * 1000);
}
// Two holders now, as after any restart without persistence: the fencing token tells them apart.
echo 'waiter got a greater fencing token: ', var_export((int) $r[2] > $token, true), "\n";
lock_fault_call('holder: isAcquired', fn () => $holder->isAcquired(), $bound, ['ok'], true);
lock_fault_call('holder: refresh', fn () => $holder->refresh(), $bound, ['LostException']);
$w->wait();
echo 'the waiter released at its end: ', var_export(!$store->isLocked('w'), true), "\n";
echo 'keys left: ', json_encode(lock_fault_keys($server->client(), $prefix)), "\n";

echo "-- killed and restarted while the waiter runs\n";
foreach (['write', 'read', 'write'] as $name) {
    var_dump($holder->acquire());
    $w = start_waiters([$name])[$name];
    $server->kill();
    $server->restart();
    $upAt = hrtime(true);
    // Whether its retry comes before or after the new server listens is a race: either answer is right, in time.
    $r = lock_fault_caller_result($w);
    lock_fault_report("waiter $name", $r, ['ok', 'StorageException'], INF);
    $after = ($r[3] - $upAt) / 1e9;
    if ($after > $bound) {
        printf("waiter %s: ended %.0f ms after the restart, over its bound of %.0f ms\n", $name, $after * 1000, $bound * 1000);
    }
    // The next call after the restart works.
    $w->send('go check');
    lock_fault_report("waiter $name: next call", lock_fault_caller_result($w), ['ok'], $bound, false);
    $w->wait();
    lock_fault_call('holder: release', fn () => $holder->release(), $bound, ['ExpiredException']);
    echo 'keys left: ', json_encode(lock_fault_keys($server->client(), $prefix)), "\n";
}
?>
--EXPECT--
-- killed, not restarted
bool(true)
waiter write: StorageException
waiter forever: StorageException
waiter read: StorageException
holder: release: ExpiredException
keys left: []
-- killed and restarted while the waiter is stopped
bool(true)
waiter: ok
waiter got a greater fencing token: true
holder: isAcquired: ok: false
holder: refresh: LostException
the waiter released at its end: true
keys left: []
-- killed and restarted while the waiter runs
bool(true)
waiter write: ok or StorageException
waiter write: next call: ok
holder: release: ExpiredException
keys left: []
bool(true)
waiter read: ok or StorageException
waiter read: next call: ok
holder: release: ExpiredException
keys left: []
bool(true)
waiter write: ok or StorageException
waiter write: next call: ok
holder: release: ExpiredException
keys left: []
