--TEST--
mysql: the API contract on session holds: acquire, release, isAcquired, isLocked, two lock objects of one process conflict, acquireRead is exclusive, no expiry, supports()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

$prefix = lock_test_prefix();
$store = lock_test_mysql_store(['prefix' => $prefix]);
foreach (['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED, 'FENCING' => Lock\Store::FENCING,
    'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND] as $name => $cap) {
    echo "supports $name: ", var_export($store->supports($cap), true), "\n";
}

$a = new Lock\Lock('r', $store, 30.0);
$b = new Lock\Lock('r', $store, 30.0);
echo "-- one process, two lock objects\n";
var_dump($a->acquire(), $b->acquire(), $a->isAcquired(), $b->isAcquired(), $store->isLocked('r'));
echo 'held as another client sees it: ', var_export(lock_test_mysql_holder($prefix, 'r') !== null, true), "\n";
echo "-- no expiry: the TTL is not counted\n";
var_dump($a->getTtl(), $a->getRemainingLifetime(), $a->isExpired());
$a->refresh();
$a->refresh(1.0);
var_dump($a->acquire(), $a->isAcquired());
try {
    $a->release(1.0);
} catch (ValueError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
$a->release();
var_dump($a->isAcquired(), $store->isLocked('r'), lock_test_mysql_holder($prefix, 'r'));
$a->release();
echo "-- the other object gets it now\n";
var_dump($b->acquire(), $a->acquire(), $store->isLocked('r'));
$b->release();
try {
    $b->refresh();
} catch (Lock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}

echo "-- acquireRead takes an exclusive hold\n";
var_dump($a->acquireRead(), $b->acquireRead(), $b->acquire(), $a->acquireRead(), $a->acquire(), $a->isAcquired());
$a->release();

echo "-- same owner, two objects\n";
$c = new Lock\Lock('o', $store, null, true, 'owner-1');
$d = new Lock\Lock('o', $store, null, true, 'owner-1');
var_dump($c->acquire(), $d->acquire());
$c->release();

echo "-- another store, another prefix: other names\n";
$other = lock_test_mysql_store();
$e = new Lock\Lock('o', $other);
var_dump($e->acquire());
$e->release();
$f = new Lock\Lock('o', lock_test_mysql_store(['prefix' => $prefix]));
var_dump($f->acquire(), $d->acquire());
$f->release();
var_dump($d->acquire());

echo "-- the unix socket reaches the same locks\n";
$sock = lock_test_env('LOCK_TEST_MYSQL_SOCKET');
[, , $user, $pass, $db] = lock_test_mysql_parts();
$viaSocket = new Lock\Store\MysqlStore('mysql://' . $user . ':' . $pass . '@' . rawurlencode($sock) . '/' . $db, ['prefix' => $prefix]);
var_dump($viaSocket->isLocked('o'), (new Lock\Lock('o', $viaSocket))->acquire());
$d->release();
var_dump($viaSocket->isLocked('o'), (new Lock\Lock('o', $viaSocket))->acquire());

echo "-- run()\n";
var_dump($a->run(fn (Lock\Lock $l) => $store->isLocked('r') && $l->isAcquired()), $store->isLocked('r'));
$b->acquire();
try {
    $a->run(fn () => 1, 0.1);
} catch (Lock\TimeoutException $e) {
    echo get_class($e), "\n";
}
$b->release();

echo "-- Factory::fromDsn\n";
$factory = Lock\Factory::fromDsn(lock_test_mysql_dsn('prefix=' . rawurlencode($prefix) . '&timeout=2&persistent=0&holds=session'));
var_dump(get_class($factory->getStore()));
$g = $factory->createLock('r');
var_dump($g->acquire(), $store->isLocked('r'));
$g->release();
?>
--EXPECT--
supports EXPIRING: false
supports SHARED: false
supports FENCING: true
supports PROCESS_BOUND: true
-- one process, two lock objects
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
held as another client sees it: true
-- no expiry: the TTL is not counted
float(30)
NULL
bool(false)
bool(true)
bool(true)
ValueError: Lock\Lock::release(): Argument #1 ($delay) must be 0 on the MySQL store, whose holds do not expire
bool(false)
bool(false)
NULL
-- the other object gets it now
bool(true)
bool(false)
bool(true)
Lock\LockException: Lock "r": cannot refresh: the lock is not held
-- acquireRead takes an exclusive hold
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
-- same owner, two objects
bool(true)
bool(false)
-- another store, another prefix: other names
bool(true)
bool(true)
bool(false)
bool(true)
-- the unix socket reaches the same locks
bool(true)
bool(false)
bool(false)
bool(true)
-- run()
bool(true)
bool(false)
Lock\TimeoutException
-- Factory::fromDsn
string(21) "Lock\Store\MysqlStore"
bool(true)
bool(true)
