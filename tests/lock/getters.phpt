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
