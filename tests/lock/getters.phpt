--TEST--
Lock getters: getResource(), getOwner(), getTtl()
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$store = new Lock\Store\FlockStore(lock_test_tmpdir());
$a = new Lock\Lock("bin\0ary/..\xff", $store);
$b = new Lock\Lock("bin\0ary/..\xff", $store, 12.5);
$c = new Lock\Lock('other', $store, null);

var_dump($a->getResource() === "bin\0ary/..\xff");
var_dump($a->getTtl());
var_dump($b->getTtl());
var_dump($c->getTtl());
var_dump((new Lock\Lock('x', $store, 2))->getTtl());

// The owner token: at least 128 bits, different for every lock, stable over the lock's life.
$owner = $a->getOwner();
var_dump(strlen($owner) >= 32);
var_dump($owner !== $b->getOwner() && $owner !== $c->getOwner() && $b->getOwner() !== $c->getOwner());
$a->acquire();
$a->release();
var_dump($a->getOwner() === $owner);
$owners = [];
for ($i = 0; $i < 1000; $i++) {
    $owners[(new Lock\Lock('x', $store))->getOwner()] = true;
}
var_dump(count($owners));

echo "== the getters on every store: what was given, unchanged by a hold\n";
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind): void {
    $store = lock_test_store($kind);
    $resource = "bin\0ary/..\xff" . lock_test_resource();
    foreach ([12.5, null] as $ttl) {
        $lock = new Lock\Lock($resource, $store, $ttl);
        $owner = $lock->getOwner();
        var_dump($lock->acquire());
        var_dump($lock->getResource() === $resource, $lock->getOwner() === $owner, $lock->getTtl());
        $lock->release();
        var_dump($lock->getResource() === $resource, $lock->getOwner() === $owner, $lock->getTtl());
    }
});
?>
--EXPECT--
bool(true)
float(300)
float(12.5)
NULL
float(2)
bool(true)
bool(true)
bool(true)
int(1000)
== the getters on every store: what was given, unchanged by a hold
-- flock, semaphore, redis, combined, pgsql, pgsql-table, mysql, mysql-table, memcached
bool(true)
bool(true)
bool(true)
float(12.5)
bool(true)
bool(true)
float(12.5)
bool(true)
bool(true)
bool(true)
NULL
bool(true)
bool(true)
NULL
