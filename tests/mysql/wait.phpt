--TEST--
mysql: blocking waits are woken by a release in another process; timeouts bound them; waitUntilFree() takes nothing (a GET_LOCK and RELEASE_LOCK in one statement, woken by the release); acquireRead() waits as an exclusive acquire does; a signal handler that throws ends a wait and leaves no hold behind
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$store = lock_test_mysql_store(['prefix' => $prefix]);
$child = new LockTestChild('require "' . __DIR__ . '/../inc/mysql.inc";'
    . '$s = lock_test_mysql_store(["prefix" => ' . var_export($prefix, true) . ']);'
    . '$l = new Lock\Lock("w", $s); $r = new Lock\Lock("r", $s);'
    . 'var_dump($l->acquire(), $r->acquireRead()); echo "held\n";'
    . 'fgets(STDIN); $l->release(); echo "released w\n"; fgets(STDIN); $r->release(); echo "released r\n"; fgets(STDIN);');
$child->waitFor('held');

echo "-- bounded waits\n";
$lock = new Lock\Lock('w', $store);
$t = hrtime(true);
var_dump($lock->acquire(true, 0.3));
echo 'waited at least the timeout: ', var_export(hrtime(true) - $t >= 290e6, true), "\n";
var_dump($store->waitUntilFree('w', 0.2), $store->waitUntilFree('w', 0), $store->waitUntilFree('r', 0.2));
$reader = new Lock\Lock('r', $store);
var_dump($reader->acquireRead(), $reader->acquire(true, 0.2));
$reader->release();

echo "-- woken by the release in the other process\n";
$child->send('go');
var_dump($lock->acquire(true, 30.0));
echo $child->waitFor('released w');
var_dump($lock->isAcquired());
$lock->release();
$child->send('go');
var_dump($store->waitUntilFree('r', 30.0));
echo $child->waitFor('released r');
var_dump($store->isLocked('r'), $store->waitUntilFree('r'));
$child->send('go');

echo "-- waitUntilFree takes nothing\n";
var_dump($store->waitUntilFree('free', 1.0), $store->isLocked('free'), lock_test_mysql_holder($prefix, "free"));

echo "-- a signal handler that throws ends a wait without a bound\n";
$holder = new Lock\Lock('sig', $store);
$holder->acquire();
pcntl_async_signals(true);
pcntl_signal(SIGALRM, static function (): void {
    throw new RuntimeException('alarm');
});
$waiter = new Lock\Lock('sig', $store);
foreach (['acquire' => fn () => $waiter->acquire(true), 'acquireRead' => fn () => $waiter->acquireRead(true),
    'waitUntilFree' => fn () => $store->waitUntilFree('sig')] as $what => $call) {
    pcntl_alarm(1);
    try {
        var_dump($call());
    } catch (RuntimeException $e) {
        echo "$what: ", $e->getMessage(), "\n";
    }
}
var_dump($waiter->isAcquired(), (lock_test_mysql_holder($prefix, "sig") === null ? 0 : 1));
$holder->release();
var_dump($store->isLocked('sig'), $waiter->acquire(), (lock_test_mysql_holder($prefix, "sig") === null ? 0 : 1));
$waiter->release();
echo "-- a handler that returns lets the wait go on\n";
pcntl_signal(SIGALRM, static function (): void {
    echo "alarm handled\n";
});
$holder->acquire();
pcntl_alarm(1);
$t = hrtime(true);
var_dump($waiter->acquire(true, 1.5), hrtime(true) - $t >= 1.4e9);
?>
--EXPECT--
-- bounded waits
bool(false)
waited at least the timeout: true
bool(false)
bool(false)
bool(false)
bool(false)
bool(false)
-- woken by the release in the other process
bool(true)
released w
bool(true)
bool(true)
released r
bool(false)
bool(true)
-- waitUntilFree takes nothing
bool(true)
bool(false)
NULL
-- a signal handler that throws ends a wait without a bound
acquire: alarm
acquireRead: alarm
waitUntilFree: alarm
bool(false)
int(1)
bool(false)
bool(true)
int(1)
-- a handler that returns lets the wait go on
alarm handled
bool(false)
bool(true)
