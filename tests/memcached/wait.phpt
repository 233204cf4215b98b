--TEST--
memcached: a blocking acquire() polls until the holder (another process) releases, and gives up at its timeout; waitUntilFree() the same; a signal handler that throws ends the wait, one that returns lets it go on
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$prefix = lock_test_prefix();
$store = lock_test_store('memcached', null, $prefix);
$storeCode = lock_test_store_code('memcached', null, $prefix);
$resource = lock_test_resource('wait');

// The poll after a release comes at most 100 ms later (docs/memcached.md: the backoff's longest step).
$poll = 0.1;
// Under valgrind everything runs many times slower: the bounds get room, the order of events stays checked.
$slack = lock_test_valgrind() ? 2.0 : LOCK_FAULT_SLACK;

echo "-- acquire(true, 5.0) while another process holds it and releases after 0.5 s\n";
$holder = lock_test_holder($storeCode, $resource, 30.0);
$lock = new Lock\Lock($resource, $store, 30.0);
$holder->send('sleep-release 0.5');
$t = hrtime(true);
var_dump($lock->acquire(true, 5.0));
$took = lock_fault_since($t);
echo 'took at most 0.5 s + a poll: ', var_export($took <= 0.5 + $poll + $slack, true), "\n";
echo trim($holder->waitFor('released')), "\n";
$lock->release();
$holder->wait();

echo "-- acquire(true, 0.3) and waitUntilFree(0.3) while held: false, after 0.3 s\n";
$holder = lock_test_holder($storeCode, $resource, 30.0);
foreach (['acquire' => fn () => $lock->acquire(true, 0.3), 'waitUntilFree' => fn () => $store->waitUntilFree($resource, 0.3)] as $what => $fn) {
    $t = hrtime(true);
    $got = $fn();
    $took = lock_fault_since($t);
    echo "$what: ", var_export($got, true), ', within [0.3 s, 0.3 s + slack]: ', var_export($took >= 0.3 && $took <= 0.3 + $slack, true), "\n";
}
echo "-- waitUntilFree() sees the release\n";
$holder->send('sleep-release 0.3');
$t = hrtime(true);
var_dump($store->waitUntilFree($resource, 5.0));
echo 'took at most 0.3 s + a poll: ', var_export(lock_fault_since($t) <= 0.3 + $poll + $slack, true), "\n";
var_dump($store->isLocked($resource));
$holder->wait();

echo "-- signals\n";
$lock->acquire();
foreach ([true, false] as $throw) {
    $n = 0;
    pcntl_async_signals(true);
    pcntl_signal(SIGUSR1, function () use ($throw, &$n) {
        $n++;
        if ($throw) {
            throw new RuntimeException('stop waiting');
        }
    });
    $other = new Lock\Lock($resource, $store, 30.0);
    $child = lock_test_fork(static function (): int {
        usleep(200000);
        posix_kill(posix_getppid(), SIGUSR1);
        return 0;
    });
    $t = hrtime(true);
    try {
        var_dump($other->acquire(true, 1.0));
    } catch (RuntimeException $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
    $took = lock_fault_since($t);
    lock_test_wait_pid($child);
    echo 'handler ran: ', $n, ', ', $throw ? 'ended at the signal: ' . var_export($took < 0.2 + $poll + $slack, true)
        : 'waited the full second: ' . var_export($took >= 1.0, true), "\n";
    var_dump($other->isAcquired());
}
pcntl_signal(SIGUSR1, SIG_DFL);
$lock->release();
var_dump($store->isLocked($resource));
?>
--EXPECT--
-- acquire(true, 5.0) while another process holds it and releases after 0.5 s
bool(true)
took at most 0.5 s + a poll: true
released
-- acquire(true, 0.3) and waitUntilFree(0.3) while held: false, after 0.3 s
acquire: false, within [0.3 s, 0.3 s + slack]: true
waitUntilFree: false, within [0.3 s, 0.3 s + slack]: true
-- waitUntilFree() sees the release
bool(true)
took at most 0.3 s + a poll: true
bool(false)
-- signals
RuntimeException: stop waiting
handler ran: 1, ended at the signal: true
bool(false)
bool(false)
handler ran: 1, waited the full second: true
bool(false)
bool(false)
