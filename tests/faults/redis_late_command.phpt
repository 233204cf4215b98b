--TEST--
faults: an acquire() that timed out on a frozen Redis server (Lock\StorageException) but ran when the server woke: the same lock takes its hold back, and a lock destroyed meanwhile leaves no hold behind
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
$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$store = new Lock\Store\RedisStore($server->dsn('prefix=' . urlencode($prefix)), ['timeout' => $timeout]);
$store->isLocked('warm-up');

foreach (['the same lock tries again', 'the lock is destroyed'] as $case) {
    echo "-- $case\n";
    $resource = $case === 'the same lock tries again' ? 'again' : 'destroyed';
    $lock = new Lock\Lock($resource, $store, 30.0);
    $server->pause();
    lock_fault_call('acquire on the frozen server', fn () => $lock->acquire(), $bound, ['StorageException']);
    $server->resume();
    // The transaction was in the server's socket buffer: it runs when the server wakes, with our owner token.
    lock_test_wait_until(fn () => $admin->ok('EXISTS', $prefix . '{' . $resource . '}') === 1, 20, 'the late command to run');
    echo 'the late command took the lock for our token: ',
        var_export($admin->ok('GET', $prefix . '{' . $resource . '}') === $lock->getOwner(), true), "\n";
    if ($case === 'the same lock tries again') {
        // Nobody else holds it: the hold is ours, and acquire() must not call it busy for the next 30 s.
        lock_fault_call('acquire again', fn () => $lock->acquire(), $bound, ['ok'], true);
        lock_fault_call('release', fn () => $lock->release(), $bound, ['ok'], true);
    } else {
        unset($lock);
    }
    lock_fault_call('another lock', fn () => (new Lock\Lock($resource, $store))->acquire(), $bound, ['ok'], true);
}
?>
--EXPECT--
-- the same lock tries again
acquire on the frozen server: StorageException
the late command took the lock for our token: true
acquire again: ok: true
release: ok: NULL
another lock: ok: true
-- the lock is destroyed
acquire on the frozen server: StorageException
the late command took the lock for our token: true
another lock: ok: true
