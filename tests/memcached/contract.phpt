--TEST--
memcached: the API contract: acquire, conflict, refresh, isAcquired, isLocked, forceRelease, acquireRead (exclusive), release after forceRelease, supports()
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$store = lock_test_store('memcached');
echo "-- supports\n";
foreach (['EXPIRING', 'SHARED', 'FENCING', 'PROCESS_BOUND'] as $cap) {
    echo $cap, ': ', var_export($store->supports(constant("Lock\\Store::$cap")), true), "\n";
}

echo "-- acquire, conflict, release\n";
$resource = lock_test_resource();
$a = new Lock\Lock($resource, $store, 30.0);
$b = new Lock\Lock($resource, $store, 30.0);
var_dump($store->isLocked($resource), $a->isAcquired());
var_dump($a->acquire(), $a->isAcquired(), $store->isLocked($resource));
// Again while held: refreshed, still ours.
var_dump($a->acquire(), $a->acquire(true, 0.1));
// Another lock object conflicts, even in this process.
var_dump($b->acquire(), $b->acquire(true, 0.05), $b->isAcquired());
$left = $a->getRemainingLifetime();
var_dump($left > 29.0 && $left <= 30.0);
$a->refresh(60.0);
var_dump($a->getRemainingLifetime() > 59.0);
$a->release();
var_dump($a->isAcquired(), $store->isLocked($resource));
$a->release();
var_dump($b->acquire());
$b->release();

echo "-- the same chosen owner still conflicts\n";
$o1 = new Lock\Lock($resource, $store, 30.0, true, 'owner-1');
$o2 = new Lock\Lock($resource, $store, 30.0, true, 'owner-1');
var_dump($o1->acquire(), $o2->acquire());
$o1->release();

echo "-- acquireRead takes an exclusive hold\n";
$r1 = new Lock\Lock($resource, $store, 30.0);
$r2 = new Lock\Lock($resource, $store, 30.0);
var_dump($r1->acquireRead(), $r2->acquireRead(), $r2->acquire());
var_dump($r1->acquire(), $r1->isAcquired());
$r1->release();
var_dump($r2->acquireRead());
$r2->release();

echo "-- run\n";
$c = new Lock\Lock($resource, $store, 30.0);
var_dump($c->run(fn (Lock\Lock $l) => $store->isLocked($resource) && $l->isAcquired()));
var_dump($store->isLocked($resource), $c->getFencingToken());

echo "-- forceRelease, then release\n";
$d = new Lock\Lock($resource, $store, 30.0);
$d->acquire();
$store->forceRelease($resource);
var_dump($store->isLocked($resource), $d->isAcquired());
try {
    $d->release();
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
$d->acquire();
$store->forceRelease($resource);
$e2 = new Lock\Lock($resource, $store, 30.0);
var_dump($e2->acquire());
try {
    $d->release();
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump($e2->isAcquired());
try {
    $d->refresh();
} catch (Lock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
$e2->release();
// forceRelease of a free resource is a no-op.
$store->forceRelease($resource);

echo "-- no expiry\n";
$n = new Lock\Lock($resource, $store, null);
var_dump($n->acquire(), $n->getRemainingLifetime(), $n->isExpired());
$n->release();

echo "-- released after its TTL ran out, while the server still kept it\n";
$x = new Lock\Lock($resource, $store, 1.0);
$x->acquire();
usleep(1100000);
var_dump($x->isExpired());
try {
    $x->release();
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump($store->isLocked($resource));

echo "-- waitUntilFree\n";
var_dump($store->waitUntilFree($resource, 0.0), $store->waitUntilFree($resource));
$a->acquire();
var_dump($store->waitUntilFree($resource, 0.05), $store->waitUntilFree($resource, 0.0));
$a->release();
var_dump($store->waitUntilFree($resource, 0.05));

echo "-- release with a delay keeps the resource blocked\n";
$a->acquire();
$a->release(1.0);
var_dump($store->isLocked($resource), $b->acquire(), $a->isAcquired());
var_dump($b->acquire(true, 10.0));
$b->release();
?>
--EXPECTF--
-- supports
EXPIRING: true
SHARED: false
FENCING: false
PROCESS_BOUND: false
-- acquire, conflict, release
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
-- the same chosen owner still conflicts
bool(true)
bool(false)
-- acquireRead takes an exclusive hold
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
-- run
bool(true)
bool(false)
NULL
-- forceRelease, then release
bool(false)
bool(false)
Lock\ExpiredException
bool(true)
Lock\LostException
bool(true)
Lock\LockException: %snot held
-- no expiry
bool(true)
NULL
bool(false)
-- released after its TTL ran out, while the server still kept it
bool(true)
Lock\ExpiredException
bool(false)
-- waitUntilFree
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
-- release with a delay keeps the resource blocked
bool(true)
bool(false)
bool(false)
bool(true)
