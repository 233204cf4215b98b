--TEST--
mysql table holds: a blocking acquire waits in GET_LOCK on the holder's session and is woken by the release in another process; waitUntilFree() too, taking nothing; a hold no session marks (restored, not yet refreshed) is looked at again until it is released; the expiry of a hold whose process was killed lets a waiter in; timeouts bound waits; a signal handler that throws ends a wait and leaves no hold
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

lock_test_hang_guard(200);
$prefix = lock_test_prefix();
$store = lock_test_mysql_table_store(['prefix' => $prefix]);
$code = 'lock_test_mysql_table_store(["prefix" => ' . var_export($prefix, true) . '])';
$inc = 'require "' . __DIR__ . '/../inc/mysql.inc";';

echo "-- bounded waits\n";
$holder = new Lock\Lock('w', $store, 60.0);
var_dump($holder->acquire());
$lock = new Lock\Lock('w', $store);
$t = hrtime(true);
var_dump($lock->acquire(true, 0.3));
echo 'waited at least the timeout: ', var_export(hrtime(true) - $t >= 290e6, true), "\n";
var_dump($store->waitUntilFree('w', 0.2), $store->waitUntilFree('w', 0));

echo "-- woken by the release\n";
$waiter = new LockTestChild($inc . '$s = ' . $code . '; $l = new Lock\Lock("w", $s);'
    . 'echo "waiting\n"; var_dump($l->acquire(true, 60.0), $l->isAcquired()); echo "done\n"; fgets(STDIN);');
$waiter->waitFor('waiting');
lock_test_wait_until(fn () => lock_test_mysql_waiters($prefix, 'w', null, true) !== [], 30.0, 'the waiter to wait in GET_LOCK');
$holder->release();
echo $waiter->waitFor('done');
var_dump($store->isLocked('w'), $holder->acquire());
$waiter->send('go');
$waiter->wait();
var_dump($holder->acquire());

echo "-- waitUntilFree is woken by the release and takes nothing\n";
$free = new LockTestChild($inc . '$s = ' . $code . '; echo "waiting\n"; var_dump($s->waitUntilFree("w", 60.0)); echo "done\n";');
$free->waitFor('waiting');
lock_test_wait_until(fn () => lock_test_mysql_waiters($prefix, 'w', null, true) !== [], 30.0, 'waitUntilFree to wait in GET_LOCK');
$fence = lock_test_mysql_row($prefix, 'w')['fence'];
$holder->release();
echo $free->waitFor('done');
$free->wait();
$row = lock_test_mysql_row($prefix, 'w');
// It took nothing: the row is free and its counter did not move.
var_dump($store->isLocked('w'), $row['owner'], $row['fence'] === $fence, $store->waitUntilFree('w', 1.0), $store->waitUntilFree('never-held'));

echo "-- a hold no session marks\n";
$h = new Lock\Lock('r', $store, 60.0, false);
var_dump($h->acquire());
$owner = $h->getOwner();
unset($h);
var_dump(lock_test_mysql_holder($prefix, 'r', null, true), $store->isLocked('r'));
$waiter = new LockTestChild($inc . '$s = ' . $code . '; $l = new Lock\Lock("r", $s);'
    . 'echo "waiting\n"; var_dump($l->acquire(true, 60.0)); echo "done\n"; fgets(STDIN); $l->release();');
$waiter->waitFor('waiting');
usleep(300000);
$restored = Lock\Factory::fromDsn(lock_test_mysql_dsn('holds=table&prefix=' . rawurlencode($prefix)))->restoreLock('r', $owner);
$restored->release();
echo $waiter->waitFor('done');
var_dump($store->isLocked('r'));
$waiter->send('go');
$waiter->wait();
var_dump($store->isLocked('r'));

echo "-- the expiry of a hold whose process was killed\n";
$victim = lock_test_holder('(require_once ' . var_export(__DIR__ . '/../inc/mysql.inc', true) . ') ? ' . $code . ' : null', 'k', 2.0);
$victim->kill();
var_dump(lock_test_mysql_row($prefix, 'k')['live'], $store->isLocked('k'));
$late = new Lock\Lock('k', $store);
var_dump($late->acquire(true, 60.0), lock_test_mysql_row($prefix, 'k')['owner'] === bin2hex($late->getOwner()));
$late->release();

echo "-- a signal handler that throws ends a wait\n";
$holder->acquire();
$gone = new Lock\Lock('s', $store, 60.0, false);
$gone->acquire();
unset($gone);
pcntl_async_signals(true);
pcntl_signal(SIGALRM, static function (): void {
    throw new RuntimeException('alarm');
});
$w = new Lock\Lock('w', $store);
$s = new Lock\Lock('s', $store);
foreach (['acquire, woken through GET_LOCK' => fn () => $w->acquire(true),
    'acquire, looking again' => fn () => $s->acquire(true),
    'waitUntilFree' => fn () => $store->waitUntilFree('w')] as $what => $call) {
    pcntl_alarm(1);
    try {
        var_dump($call());
    } catch (RuntimeException $e) {
        echo "$what: ", $e->getMessage(), "\n";
    }
}
pcntl_alarm(0);
var_dump($w->isAcquired(), $s->isAcquired(), lock_test_mysql_row($prefix, 'w')['owner'] === bin2hex($holder->getOwner()));
$holder->release();
var_dump($w->acquire());
$w->release();
$store->forceRelease('s');
var_dump($s->acquire());
$s->release();
?>
--EXPECT--
-- bounded waits
bool(true)
bool(false)
waited at least the timeout: true
bool(false)
bool(false)
-- woken by the release
bool(true)
bool(true)
done
bool(true)
bool(false)
bool(true)
-- waitUntilFree is woken by the release and takes nothing
bool(true)
done
bool(false)
NULL
bool(true)
bool(true)
bool(true)
-- a hold no session marks
bool(true)
NULL
bool(true)
bool(true)
done
bool(true)
bool(false)
-- the expiry of a hold whose process was killed
bool(true)
bool(true)
bool(true)
bool(true)
-- a signal handler that throws ends a wait
acquire, woken through GET_LOCK: alarm
acquire, looking again: alarm
waitUntilFree: alarm
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
