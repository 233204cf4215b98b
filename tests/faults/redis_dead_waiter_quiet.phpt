--TEST--
faults: a Redis waiter killed while queued is handed the lock; after more than 10 s of quiet the next isLocked() or acquire() still breaks that hand-off (with a TTL and with none)
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);

/** Queues a waiter with $ttl for $resource (held by somebody), waits until it sleeps, and kills it. */
function kill_queued_waiter(string $resource, ?float $ttl): void
{
    global $dsn, $timeout, $admin, $prefix;
    $waiter = lock_fault_caller('$store = ' . lock_fault_store_code($dsn, ['timeout' => $timeout]) . ';'
        . ' $lock = new Lock\Lock(' . var_export($resource, true) . ', $store, ' . var_export($ttl, true) . ');',
        '$store->isLocked("x")', ['wait' => '$lock->acquire(true)']);
    $waiter->send('go wait');
    lock_test_wait_until(fn () => $admin->ok('LLEN', $prefix . '{' . $resource . '}:q') === 1
        && count(array_filter(lock_fault_clients($admin), fn (array $c) => $c['cmd'] === 'blpop')) === 1, 20, 'the waiter to sleep');
    $waiter->kill();
}

// docs/waiting.md: a dead waiter's hand-off is broken by the next acquire() or isLocked() after 200 ms.
$cases = ['a 300 s TTL' => 300.0, 'no TTL' => null];
$holders = [];
foreach ($cases as $what => $ttl) {
    $holder = new Lock\Lock('quiet-' . count($holders), $store);
    var_dump($holder->acquire());
    kill_queued_waiter($holder->getResource(), $ttl);
    // The release hands the lock to the dead waiter.
    $holder->release();
    $holders[$what] = $holder;
}
// Longer than the 10 s that the records of a hand-off used to live.
usleep(10500000);
foreach ($holders as $what => $holder) {
    echo "-- $what\n";
    $newcomer = new Lock\Lock($holder->getResource(), $store);
    if ($what === 'a 300 s TTL') {
        echo 'isLocked(): ', var_export($store->isLocked($holder->getResource()), true), "\n";
    }
    echo 'acquire(): ', var_export($newcomer->acquire(), true), "\n";
    $newcomer->release();
}
echo 'keys that stay: ', lock_fault_keys_that_stay($admin, $prefix), "\n";
?>
--EXPECT--
bool(true)
bool(true)
-- a 300 s TTL
isLocked(): false
acquire(): true
-- no TTL
acquire(): true
keys that stay: none
