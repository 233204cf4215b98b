--TEST--
redis: owners "shared" and "cooldown" are owners like any other: as writers, readers, restored, beside real readers and cooldowns
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = lock_test_store('redis');
$factory = new Lock\Factory($store, 30.0);
$b = fn (bool $v): string => var_export($v, true);

foreach (['shared', 'cooldown'] as $x) {
    echo "== owner $x\n";

    // A writer of that name keeps readers and writers out, and hands over to waiting readers in order.
    $resource = lock_test_resource('marker');
    $w = $factory->createLock($resource, owner: $x);
    $r = $factory->createLock($resource);
    $r2 = $factory->createLock($resource);
    echo 'write: ', $b($w->acquire()), ', fencing ', $b($w->getFencingToken() > 0), "\n";
    echo 'another reads: ', $b($r->acquireRead()), ', writes: ', $b($r2->acquire()), "\n";
    echo 'a reader waits 0.3 s: ', $b($r->acquireRead(true, 0.3)), "\n";
    echo 'restored holds: ', $b($factory->restoreLock($resource, $x)->isAcquired()), "\n";
    $w->release();
    echo 'released, locked: ', $b($store->isLocked($resource)), "\n";

    // A reader of that name reads beside others, keeps writers out, and leaves them reading.
    echo 'read: ', $b($w->acquireRead()), ', another reads: ', $b($r->acquireRead()), ', another writes: ', $b($r2->acquire()), "\n";
    echo 'restored holds: ', $b($factory->restoreLock($resource, $x)->isAcquired()), "\n";
    $w->release();
    echo 'released, the other still holds: ', $b($r->isAcquired()), ', a third reads: ', $b($r2->acquireRead()), "\n";
    $r->release();
    $r2->release();
    echo 'all released, locked: ', $b($store->isLocked($resource)), "\n";

    // Restored by that name, a reader is adopted, refreshed and released; other readers stay.
    $a = $factory->createLock($resource, owner: $x);
    echo 'read: ', $b($a->acquireRead()), ', another reads: ', $b($r->acquireRead()), "\n";
    $restored = $factory->restoreLock($resource, $x, 60.0);
    $restored->refresh();
    $restored->release();
    echo 'restored released, the first holds: ', $b($a->isAcquired()), ', the other: ', $b($r->isAcquired()), "\n";
    unset($a);
    $r->release();
    echo 'locked: ', $b($store->isLocked($resource)), "\n";

    // A real cooldown (of a random owner) keeps that owner out and cannot be taken or ended by it.
    $h = $factory->createLock($resource);
    $h->acquire();
    $h->release(300.0);
    echo 'cooldown; it reads: ', $b($w->acquireRead()), ', writes: ', $b($w->acquire()), ', waits 0.3 s to read: ', $b($w->acquireRead(true, 0.3)), "\n";
    $restored = $factory->restoreLock($resource, $x);
    echo 'restored holds: ', $b($restored->isAcquired()), "\n";
    lock_test_expect_throw(fn () => $factory->restoreLock($resource, $x)->release());
    lock_test_expect_throw(fn () => $factory->restoreLock($resource, $x)->refresh());
    echo 'still cooling: ', $b($store->isLocked($resource)), ', another reads: ', $b($r->acquireRead()), ', writes: ', $b($r2->acquire()), "\n";
    $store->forceRelease($resource);

    // Readers of that name and others beside a cooldown of that name's own release.
    echo 'read: ', $b($w->acquireRead()), ', another reads: ', $b($r->acquireRead()), "\n";
    $w->release(300.0);
    echo 'its cooldown, other still reads: ', $b($r->isAcquired()), ', a new reader: ', $b($r2->acquireRead()), "\n";
    $r->release();
    echo 'last reader gone, still cooling: ', $b($store->isLocked($resource)), ', it reads: ', $b($w->acquireRead()), ', restored holds: ', $b($factory->restoreLock($resource, $x)->isAcquired()), "\n";
    $store->forceRelease($resource);
    echo 'forced, it writes: ', $b($w->acquire()), "\n";
    $w->release();
    echo 'locked: ', $b($store->isLocked($resource)), "\n";
}

// Both names read together, with a random owner, and none of them is a cooldown.
$resource = lock_test_resource('marker');
$s = $factory->createLock($resource, owner: 'shared');
$c = $factory->createLock($resource, owner: 'cooldown');
$o = $factory->createLock($resource);
echo '== together: ', $b($s->acquireRead()), ' ', $b($c->acquireRead()), ' ', $b($o->acquireRead()), "\n";
$c->release();
$s->release();
echo 'the last reader promotes: ', $b($o->acquire()), "\n";
$o->release();
echo 'locked: ', $b($store->isLocked($resource)), "\n";
?>
--EXPECTF--
== owner shared
write: true, fencing true
another reads: false, writes: false
a reader waits 0.3 s: false
restored holds: true
released, locked: false
read: true, another reads: true, another writes: false
restored holds: true
released, the other still holds: true, a third reads: true
all released, locked: false
read: true, another reads: true
restored released, the first holds: false, the other: true
locked: false
cooldown; it reads: false, writes: false, waits 0.3 s to read: false
restored holds: false
Lock\LostException: %s
Lock\LostException: %s
still cooling: true, another reads: false, writes: false
read: true, another reads: true
its cooldown, other still reads: true, a new reader: false
last reader gone, still cooling: true, it reads: false, restored holds: false
forced, it writes: true
locked: false
== owner cooldown
write: true, fencing true
another reads: false, writes: false
a reader waits 0.3 s: false
restored holds: true
released, locked: false
read: true, another reads: true, another writes: false
restored holds: true
released, the other still holds: true, a third reads: true
all released, locked: false
read: true, another reads: true
restored released, the first holds: false, the other: true
locked: false
cooldown; it reads: false, writes: false, waits 0.3 s to read: false
restored holds: false
Lock\LostException: %s
Lock\LostException: %s
still cooling: true, another reads: false, writes: false
read: true, another reads: true
its cooldown, other still reads: true, a new reader: false
last reader gone, still cooling: true, it reads: false, restored holds: false
forced, it writes: true
locked: false
== together: true true true
the last reader promotes: true
locked: false
