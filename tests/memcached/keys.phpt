--TEST--
memcached: keys are the prefix and the name in hex, or its SHA-256 when too long for 250 bytes; binary names, long names and prefixes never share a key
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

$port = lock_test_memcached_port();
$prefix = lock_test_prefix();
$store = lock_test_store('memcached', null, $prefix);
$names = [
    'plain' => 'a',
    'spaces and controls' => "a b\r\n\0\x01 end",
    'longest spelled out' => str_repeat('n', intdiv(250 - strlen($prefix) - 1, 2)),
    'one byte longer: hashed' => str_repeat('n', intdiv(250 - strlen($prefix) - 1, 2) + 1),
    '64 KiB' => str_repeat("\xff", 65536),
];
foreach ($names as $what => $name) {
    $lock = new Lock\Lock($name, $store, 30.0);
    $lock->acquire();
    $key = lock_test_memcached_key($prefix, $name);
    $value = lock_test_memcached_get($port, $key);
    printf("%s: key of %d bytes, %s, holds our token: %s\n", $what, strlen($key), $key[strlen($prefix)] === 'x' ? 'hex' : 'sha-256',
        var_export($value === 'o' . $lock->getOwner(), true));
    $lock->release();
    var_dump(lock_test_memcached_get($port, $key));
}

echo "-- names that a careless encoding would mix up stay apart\n";
$long = str_repeat('n', 200);
$pairs = [
    ['ab', "\x61\x62\x00"],
    [$long, hex2bin(hash('sha256', $long))],
    ['A', 'a'],
];
foreach ($pairs as [$x, $y]) {
    $lx = new Lock\Lock($x, $store, 30.0);
    $ly = new Lock\Lock($y, $store, 30.0);
    var_dump($lx->acquire() && $ly->acquire());
    $lx->release();
    $ly->release();
}
// Another prefix is another namespace.
$other = lock_test_store('memcached', null, $prefix . 'other:');
$l1 = new Lock\Lock('a', $store, 30.0);
$l2 = new Lock\Lock('a', $other, 30.0);
var_dump($l1->acquire() && $l2->acquire());
?>
--EXPECT--
plain: key of 21 bytes, hex, holds our token: true
NULL
spaces and controls: key of 41 bytes, hex, holds our token: true
NULL
longest spelled out: key of 249 bytes, hex, holds our token: true
NULL
one byte longer: hashed: key of 83 bytes, sha-256, holds our token: true
NULL
64 KiB: key of 83 bytes, sha-256, holds our token: true
NULL
-- names that a careless encoding would mix up stay apart
bool(true)
bool(true)
bool(true)
bool(true)
