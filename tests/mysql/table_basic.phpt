--TEST--
mysql table holds: the API contract: acquire, release, refresh, isAcquired, isLocked, two lock objects of one process conflict, acquireRead is exclusive, expiry by the server's clock, lost and expired holds, forceRelease, a delayed release, fencing tokens, supports()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$store = lock_test_mysql_table_store(['prefix' => $prefix]);
foreach (['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED, 'FENCING' => Lock\Store::FENCING,
    'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND] as $name => $cap) {
    echo "supports $name: ", var_export($store->supports($cap), true), "\n";
}

echo "-- one process, two lock objects\n";
$a = new Lock\Lock('r', $store, 30.0);
$b = new Lock\Lock('r', $store, 30.0);
var_dump($a->acquire(), $b->acquire(), $b->acquire(true, 0.2), $a->isAcquired(), $b->isAcquired(), $store->isLocked('r'));
$row = lock_test_mysql_row($prefix, 'r');
echo 'the row: ours ', var_export($row['owner'] === bin2hex($a->getOwner()), true),
    ', live ', var_export($row['live'], true),
    ', 30 s by the server\'s clock ', var_export($row['left'] > 25 && $row['left'] <= 30, true),
    ', its session marks it ', var_export($row['conn'] !== null && $row['conn'] === lock_test_mysql_holder($prefix, 'r', null, true), true), "\n";
var_dump($a->acquire(), $a->getRemainingLifetime() > 25);

echo "-- refresh\n";
$a->refresh(100.0);
$row = lock_test_mysql_row($prefix, 'r');
var_dump($row['left'] > 95 && $row['left'] <= 100, $a->getRemainingLifetime() > 95);

echo "-- release\n";
$a->release();
$row = lock_test_mysql_row($prefix, 'r');
// The row stays, free, with its fencing counter.
var_dump($a->isAcquired(), $store->isLocked('r'), $row['owner'], $row['live'], lock_test_mysql_holder($prefix, 'r', null, true));
var_dump($b->acquire(), $a->acquire());
$b->release();
$a->release();

echo "-- acquireRead is an exclusive hold\n";
$r1 = new Lock\Lock('read', $store);
$r2 = new Lock\Lock('read', $store);
var_dump($r1->acquireRead(), $r2->acquireRead(), $r2->acquire());
$r1->release();

echo "-- no TTL\n";
$n = new Lock\Lock('never', $store, null);
var_dump($n->acquire(), lock_test_mysql_row($prefix, 'never')['left'], $n->getRemainingLifetime(), $n->isExpired());
$n->refresh();
var_dump($n->isAcquired());
$n->release();

echo "-- expiry by the server's clock\n";
$e = new Lock\Lock('exp', $store, 0.5);
var_dump($e->acquire());
lock_test_wait_until(fn () => !lock_test_mysql_row($prefix, 'exp')['live'], 30.0, 'the row to expire');
var_dump($store->isLocked('exp'), $e->isAcquired());
var_dump($e->acquire());
lock_test_wait_until(fn () => !lock_test_mysql_row($prefix, 'exp')['live'], 30.0, 'the row to expire');
lock_test_expect_throw(fn () => $e->release());
var_dump($e->acquire());
lock_test_wait_until(fn () => !lock_test_mysql_row($prefix, 'exp')['live'], 30.0, 'the row to expire');
lock_test_expect_throw(fn () => $e->refresh());

echo "-- lost to another holder after the expiry\n";
$other = new Lock\Lock('exp', $store, 30.0);
var_dump($e->acquire());
lock_test_wait_until(fn () => !lock_test_mysql_row($prefix, 'exp')['live'], 30.0, 'the row to expire');
var_dump($other->acquire());
lock_test_expect_throw(fn () => $e->refresh());
var_dump($e->acquire());
lock_test_expect_throw(fn () => $e->release());
var_dump($other->isAcquired());
$other->release();

echo "-- forceRelease\n";
$f = new Lock\Lock('force', $store, null);
var_dump($f->acquire());
$store->forceRelease('force');
var_dump($store->isLocked('force'), lock_test_mysql_holder($prefix, 'force', null, true), $f->isAcquired());
var_dump($f->acquire());
$store->forceRelease('force');
$g = new Lock\Lock('force', $store);
var_dump($g->acquire());
lock_test_expect_throw(fn () => $f->release());
$g->release();
$store->forceRelease('nothing-here');

echo "-- a delayed release keeps it blocked\n";
$d = new Lock\Lock('delay', $store);
var_dump($d->acquire());
$d->release(1.0);
$row = lock_test_mysql_row($prefix, 'delay');
var_dump($d->isAcquired(), $store->isLocked('delay'), $row['owner'], $row['left'] > 0 && $row['left'] <= 1.0);
$d2 = new Lock\Lock('delay', $store);
var_dump($d2->acquire(true, 30.0));
$d2->release();

echo "-- fencing tokens\n";
$tokens = [];
for ($i = 0; $i < 3; $i++) {
    $l = new Lock\Lock('fence', $store);
    $l->acquire();
    $tokens[] = $l->getFencingToken();
    echo 'the row has it: ', var_export(lock_test_mysql_row($prefix, 'fence')['fence'] === $tokens[$i], true), "\n";
    $l->release();
    var_dump($l->getFencingToken());
}
var_dump($tokens[0] < $tokens[1] && $tokens[1] < $tokens[2]);
$l = new Lock\Lock('fence', $store, 0.3);
$l->acquire();
lock_test_wait_until(fn () => !lock_test_mysql_row($prefix, 'fence')['live'], 30.0, 'the row to expire');
$m = new Lock\Lock('fence', $store);
$m->acquire();
var_dump($m->getFencingToken() > $tokens[2], $l->isAcquired());
$m->release();

echo "-- table holds and session holds of one resource never meet\n";
$session = lock_test_mysql_store(['prefix' => $prefix]);
$t = new Lock\Lock('both', $store);
$u = new Lock\Lock('both', $session);
var_dump($t->acquire(), $u->acquire(), $session->isLocked('both'), $store->isLocked('both'));
$t->release();
var_dump($session->isLocked('both'), $store->isLocked('both'));
$u->release();
?>
--EXPECT--
supports EXPIRING: true
supports SHARED: false
supports FENCING: true
supports PROCESS_BOUND: false
-- one process, two lock objects
bool(true)
bool(false)
bool(false)
bool(true)
bool(false)
bool(true)
the row: ours true, live true, 30 s by the server's clock true, its session marks it true
bool(true)
bool(true)
-- refresh
bool(true)
bool(true)
-- release
bool(false)
bool(false)
NULL
bool(false)
NULL
bool(true)
bool(false)
-- acquireRead is an exclusive hold
bool(true)
bool(false)
bool(false)
-- no TTL
bool(true)
NULL
NULL
bool(false)
bool(true)
-- expiry by the server's clock
bool(true)
bool(false)
bool(false)
bool(true)
Lock\ExpiredException: Lock "exp": the hold expired (its TTL ran out) and nobody holds the resource
bool(true)
Lock\ExpiredException: Lock "exp": the hold expired (its TTL ran out) and nobody holds the resource
-- lost to another holder after the expiry
bool(true)
bool(true)
Lock\LostException: Lock "exp": the hold was lost: somebody else holds the resource now
bool(false)
no exception
bool(true)
-- forceRelease
bool(true)
bool(false)
NULL
bool(false)
bool(true)
bool(true)
Lock\LostException: Lock "force": the hold was lost: somebody else holds the resource now
-- a delayed release keeps it blocked
bool(true)
bool(false)
bool(true)
string(0) ""
bool(true)
bool(true)
-- fencing tokens
the row has it: true
NULL
the row has it: true
NULL
the row has it: true
NULL
bool(true)
bool(true)
bool(false)
-- table holds and session holds of one resource never meet
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
