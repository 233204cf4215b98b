--TEST--
pgsql: the API contract on session holds: acquire, release, isAcquired, isLocked, two lock objects of one process conflict, no expiry, supports()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';

$prefix = lock_test_prefix();
$store = lock_test_pgsql_store(['prefix' => $prefix]);
foreach (['EXPIRING' => Lock\Store::EXPIRING, 'SHARED' => Lock\Store::SHARED, 'FENCING' => Lock\Store::FENCING,
    'PROCESS_BOUND' => Lock\Store::PROCESS_BOUND] as $name => $cap) {
    echo "supports $name: ", var_export($store->supports($cap), true), "\n";
}

$a = new Lock\Lock('r', $store, 30.0);
$b = new Lock\Lock('r', $store, 30.0);
echo "-- one process, two lock objects\n";
var_dump($a->acquire(), $b->acquire(), $a->isAcquired(), $b->isAcquired(), $store->isLocked('r'));
echo 'holders seen by another client: ', count(lock_test_pgsql_holders($prefix, 'r')), "\n";
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
var_dump($a->isAcquired(), $store->isLocked('r'), lock_test_pgsql_holders($prefix, 'r'));
$a->release();
echo "-- the other object gets it now\n";
var_dump($b->acquire(), $a->acquire(), $store->isLocked('r'));
$b->release();
try {
    $b->refresh();
} catch (Lock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}

echo "-- same owner, two objects\n";
$c = new Lock\Lock('o', $store, null, true, 'owner-1');
$d = new Lock\Lock('o', $store, null, true, 'owner-1');
var_dump($c->acquire(), $d->acquire());
$c->release();

echo "-- another store, another prefix: other keys\n";
$other = lock_test_pgsql_store();
$e = new Lock\Lock('o', $other);
var_dump($e->acquire());
$e->release();
$f = new Lock\Lock('o', lock_test_pgsql_store(['prefix' => $prefix]));
var_dump($f->acquire(), $d->acquire());
$f->release();
var_dump($d->acquire());

echo "-- binary and long names\n";
foreach (["\0", "a\0b", str_repeat("\xff", 65536), "'; DROP TABLE x; --"] as $name) {
    $l = new Lock\Lock($name, $store);
    $m = new Lock\Lock($name, $store);
    echo strlen($name), ': ', json_encode([$l->acquire(), $m->acquire(), $store->isLocked($name)]);
    $l->release();
    echo ' ', json_encode([$store->isLocked($name), $m->acquire()]), "\n";
    $m->release();
}

echo "-- run()\n";
var_dump($a->run(fn (Lock\Lock $l) => $store->isLocked('r') && $l->isAcquired()), $store->isLocked('r'));
$b->acquire();
try {
    $a->run(fn () => 1, 0.1);
} catch (Lock\TimeoutException $e) {
    echo get_class($e), "\n";
}
?>
--EXPECT--
supports EXPIRING: false
supports SHARED: true
supports FENCING: true
supports PROCESS_BOUND: true
-- one process, two lock objects
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
holders seen by another client: 1
-- no expiry: the TTL is not counted
float(30)
NULL
bool(false)
bool(true)
bool(true)
ValueError: Lock\Lock::release(): Argument #1 ($delay) must be 0 on the PostgreSQL store, whose holds do not expire
bool(false)
bool(false)
array(0) {
}
-- the other object gets it now
bool(true)
bool(false)
bool(true)
Lock\LockException: Lock "r": cannot refresh: the lock is not held
-- same owner, two objects
bool(true)
bool(false)
-- another store, another prefix: other keys
bool(true)
bool(true)
bool(false)
bool(true)
-- binary and long names
1: [true,false,true] [false,true]
3: [true,false,true] [false,true]
65536: [true,false,true] [false,true]
19: [true,false,true] [false,true]
-- run()
bool(true)
bool(false)
Lock\TimeoutException
