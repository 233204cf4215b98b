--TEST--
memcached: persistent connections are reused only by a store of the very same server list, however long: two lists alike in their first 255 characters keep their own connections, and every hold taken through one is seen where that list puts it
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

$ports = [lock_test_memcached_port(1), lock_test_memcached_port(2)];
// Long spellings of 127.0.0.1 (leading zeros): six entries over both servers pass 255 characters.
$entries = [];
for ($i = 0; $i < 5; $i++) {
    $entries[] = '127.0.0.' . str_repeat('0', 32 + $i) . '1:' . $ports[$i % 2];
}
$last = '127.0.0.' . str_repeat('0', 40) . '1:';
$lists = ['a' => implode(',', $entries) . ",$last" . $ports[0], 'b' => implode(',', $entries) . ",$last" . $ports[1]];
$same = strspn($lists['a'] ^ $lists['b'], "\0");
echo 'the lists differ only past character 255: ', var_export($same > 255, true), "\n";
$prefix = urlencode(lock_test_prefix());
$dsn = fn (string $list): string => "memcached://$list?prefix=$prefix";

foreach (['a' => 'b', 'b' => 'a'] as $first => $then) {
    // The first list's connections wait in the pool.
    $store = new Lock\Store\MemcachedStore($dsn($lists[$first]), ['persistent' => true]);
    var_dump($store->isLocked('warm-up'));
    unset($store);
    // A persistent store of the other list takes holds: each goes where that list puts it.
    $store = new Lock\Store\MemcachedStore($dsn($lists[$then]), ['persistent' => true]);
    $locks = [];
    for ($i = 0; $i < 40; $i++) {
        $locks[$i] = new Lock\Lock("r$i", $store, 30.0);
        $locks[$i]->acquire();
    }
    $check = new Lock\Store\MemcachedStore($dsn($lists[$then]));
    $twice = 0;
    for ($i = 0; $i < 40; $i++) {
        $twice += (new Lock\Lock("r$i", $check, 30.0))->acquire() ? 1 : 0;
    }
    echo "holds through list $then taken a second time through it: $twice of 40\n";
    foreach ($locks as $lock) {
        $lock->release();
    }
    unset($locks, $store, $check);
}
?>
--EXPECT--
the lists differ only past character 255: true
bool(false)
holds through list b taken a second time through it: 0 of 40
bool(false)
holds through list a taken a second time through it: 0 of 40
