--TEST--
Lock\stats() on every store: a scripted run of takes, a failed attempt, a timeout, a wait (handed over by the release on Redis), a refresh, releases, a hold found expired and one found lost, each counted once under the store's class and in the total
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard(120);

/** What moved between two readings of one entry of Lock\stats(): the integer counters that changed, and whether time was spent waiting. */
function moved(array $before, array $after): string
{
    $out = [];
    foreach ($after as $name => $value) {
        if ($name !== 'wait_seconds' && $value !== ($before[$name] ?? 0)) {
            $out[] = "$name +" . ($value - ($before[$name] ?? 0));
        }
    }
    $out[] = 'wait_seconds ' . ($after['wait_seconds'] > ($before['wait_seconds'] ?? 0.0) ? 'grew' : 'did not grow');
    return implode(', ', $out) . "\n";
}

/** Calls $fn and prints the class of the exception it throws. */
function outcome(string $what, callable $fn): void
{
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), "\n";
    }
}

lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $dir = $kind === 'flock' ? lock_test_tmpdir('stats') : null;
    $prefix = lock_test_prefix();
    $store = lock_test_store($kind, $dir, $prefix);
    $class = get_class($store);
    $before = Lock\stats();
    $resource = lock_test_resource('stats');
    $a = new Lock\Lock($resource, $store, 60.0);
    $b = new Lock\Lock($resource, $store, 60.0);

    echo "- a take, a failed attempt, a timeout, a release\n";
    var_dump($a->acquire(), $b->acquire(), $b->acquire(true, 0.1));
    $a->release();

    echo "- a wait that ends with the hold, a refresh, a release\n";
    $holder = lock_test_holder(lock_test_store_code($kind, $dir, $prefix), $resource, 60.0);
    $holder->send('sleep-release 0.3');
    var_dump($b->acquire(true, 30.0));
    $b->refresh();
    $b->release();
    $holder->kill();

    echo "- found expired (broken, nobody holds it), then found lost (broken, taken by another)\n";
    $a->acquire();
    $store->forceRelease($resource);
    outcome('release', fn () => $a->release());
    $a->acquire();
    $store->forceRelease($resource);
    $b->acquire();
    var_dump($a->isAcquired(), $a->isAcquired());
    outcome('release', fn () => $a->release());
    $b->release();

    $after = Lock\stats();
    $mine = moved($before[$class] ?? [], $after[$class]);
    echo $mine;
    echo 'the total moved the same: ', var_export(moved($before['total'], $after['total']) === $mine, true), "\n";
});
?>
--EXPECT--
-- flock, semaphore, pgsql, pgsql-table, mysql, mysql-table, memcached
- a take, a failed attempt, a timeout, a release
bool(true)
bool(false)
bool(false)
- a wait that ends with the hold, a refresh, a release
bool(true)
- found expired (broken, nobody holds it), then found lost (broken, taken by another)
release: Lock\ExpiredException
bool(false)
bool(false)
release: Lock\LostException
acquired +5, failed +1, waited +1, timed_out +1, released +3, expired +1, lost +1, refreshed +1, wait_seconds grew
the total moved the same: true
-- redis, combined
- a take, a failed attempt, a timeout, a release
bool(true)
bool(false)
bool(false)
- a wait that ends with the hold, a refresh, a release
bool(true)
- found expired (broken, nobody holds it), then found lost (broken, taken by another)
release: Lock\ExpiredException
bool(false)
bool(false)
release: Lock\LostException
acquired +5, failed +1, waited +1, timed_out +1, handed_over +1, released +3, expired +1, lost +1, refreshed +1, wait_seconds grew
the total moved the same: true
