--TEST--
pgsql table mode: a blocking acquire and waitUntilFree() are woken by a release in another process (a hold that never expires: nothing else could wake them), and send nothing while they wait; a killed holder's hold lets a waiter in when it expires by the server's clock; timeouts bound waits; a signal handler that throws ends a wait
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$store = lock_test_pgsql_table_store(['prefix' => $prefix]);
$storeCode = 'require "' . __DIR__ . '/../inc/pgsql.inc"; $s = lock_test_pgsql_table_store(["prefix" => ' . var_export($prefix, true) . ']);';
$child = new LockTestChild($storeCode
    . '$l = new Lock\Lock("w", $s, null); var_dump($l->acquire()); echo "held\n";'
    . 'fgets(STDIN); usleep(300000); $l->release(); echo "released\n";'
    . 'fgets(STDIN); var_dump($l->acquire()); echo "held again\n"; fgets(STDIN); usleep(300000); $l->release(); echo "released again\n"; fgets(STDIN);');
$child->waitFor('held');

echo "-- timeouts bound waits\n";
$lock = new Lock\Lock('w', $store);
$t = hrtime(true);
var_dump($lock->acquire(true, 0.3));
echo 'waited at least the timeout: ', var_export(hrtime(true) - $t >= 290e6, true), "\n";
var_dump($store->waitUntilFree('w', 0.2), $store->waitUntilFree('w', 0), $store->waitUntilFree('free', 0));

echo "-- woken by the release in the other process\n";
$child->send('go');
$t = hrtime(true);
var_dump($lock->acquire(true, 60.0));
echo 'long before the timeout: ', var_export(hrtime(true) - $t < lock_test_patience(20.0) * 1e9, true), "\n";
echo $child->waitFor('released');
$lock->release();
$child->send('go');
echo $child->waitFor('held again');
$child->send('go');
$t = hrtime(true);
var_dump($store->waitUntilFree('w', 60.0));
echo 'long before the timeout: ', var_export(hrtime(true) - $t < lock_test_patience(20.0) * 1e9, true), "\n";
echo $child->waitFor('released again');
var_dump($store->isLocked('w'));
$child->send('go');

echo "-- a killed holder's hold expires, and lets the waiter in\n";
$killed = new LockTestChild($storeCode . '$l = new Lock\Lock("k", $s, 1.5); var_dump($l->acquire()); echo "held\n"; sleep(600);');
$killed->waitFor('held');
$killed->kill();
var_dump($store->isLocked('k'));
$waiter = new Lock\Lock('k', $store);
$t = hrtime(true);
var_dump($waiter->acquire(true, 60.0));
$s = (hrtime(true) - $t) / 1e9;
echo 'after the TTL, long before the timeout: ', var_export($s > 0.5 && $s < lock_test_patience(20.0), true), "\n";
$waiter->release();

echo "-- a waiter sends nothing while it waits: no polling\n";
$table = 'idle_' . bin2hex(random_bytes(4));
$idleStore = lock_test_pgsql_table_store(['prefix' => $prefix, 'table' => $table]);
$holder = new Lock\Lock('idle', $idleStore, null);
var_dump($holder->acquire());
$idle = new LockTestChild($storeCode . '$s = lock_test_pgsql_table_store(["prefix" => ' . var_export($prefix, true) . ', "table" => "' . $table . '"]);'
    . '$l = new Lock\Lock("idle", $s); echo "waiting\n"; var_dump($l->acquire(true, 60.0)); echo "done\n";');
$idle->waitFor('waiting');
// The waiter's session: its last statement read the row's time left (the SQL names the table).
$waiting = static fn (string $also = ''): string => lock_test_pgsql_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'php-lock'"
    . " AND query LIKE 'SELECT CASE WHEN expires_at%' AND query LIKE '%$table%'$also");
lock_test_wait_until(static fn () => $waiting() === '1', 30.0, 'the waiter to wait');
sleep(2);
echo 'idle on the server for over a second: ', $waiting(" AND state = 'idle' AND state_change < clock_timestamp() - interval '1.5 seconds'"), "\n";
$holder->release();
echo $idle->waitFor('done');
lock_test_pgsql_sql("DROP TABLE $table");

echo "-- a signal handler that throws ends a wait without a bound\n";
$holder = new Lock\Lock('sig', $store, null);
$holder->acquire();
pcntl_async_signals(true);
pcntl_signal(SIGALRM, static function (): void {
    throw new RuntimeException('alarm');
});
$waiter = new Lock\Lock('sig', $store);
foreach (['acquire' => fn () => $waiter->acquire(true), 'waitUntilFree' => fn () => $store->waitUntilFree('sig')] as $what => $call) {
    pcntl_alarm(1);
    try {
        var_dump($call());
    } catch (RuntimeException $e) {
        echo "$what: ", $e->getMessage(), "\n";
    }
}
var_dump($waiter->isAcquired(), lock_test_pgsql_row($prefix, 'sig')[0] === $holder->getOwner());
$holder->release();
var_dump($waiter->acquire(), $store->isLocked('sig'));
$waiter->release();
?>
--EXPECT--
-- timeouts bound waits
bool(false)
waited at least the timeout: true
bool(false)
bool(false)
bool(true)
-- woken by the release in the other process
bool(true)
long before the timeout: true
released
bool(true)
held again
bool(true)
long before the timeout: true
released again
bool(false)
-- a killed holder's hold expires, and lets the waiter in
bool(true)
bool(true)
after the TTL, long before the timeout: true
-- a waiter sends nothing while it waits: no polling
bool(true)
idle on the server for over a second: 1
bool(true)
done
-- a signal handler that throws ends a wait without a bound
acquire: alarm
waitUntilFree: alarm
bool(false)
bool(true)
bool(true)
bool(true)
