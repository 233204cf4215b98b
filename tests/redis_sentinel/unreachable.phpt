--TEST--
redis+sentinel: when no sentinel answers, a call throws StorageException within its timeout, naming every sentinel tried and why; redis+cluster: when no seed answers, the same naming the node
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

/** A loopback port nobody listens on (bound, then closed). */
function closed_port(): int
{
    $s = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr(stream_socket_get_name($s, false), strrpos(stream_socket_get_name($s, false), ':') + 1);
    fclose($s);
    return $port;
}

$a = closed_port();
$b = closed_port();
$store = new Lock\Store\RedisStore("redis+sentinel://:master-secret@127.0.0.1:$a,127.0.0.1:$b/mymaster?timeout=0.5&sentinel_password=sentinel-secret");
$t0 = hrtime(true);
$e = lock_test_expect_throw(fn () => (new Lock\Lock('job', $store, 10.0))->acquire());
echo 'within the timeout: ', var_export((hrtime(true) - $t0) / 1e9 < 0.5 + 0.1, true), "\n";
echo 'names both: ', var_export(str_contains($e->getMessage(), "sentinel 127.0.0.1:$a: cannot connect")
    && str_contains($e->getMessage(), "sentinel 127.0.0.1:$b: cannot connect"), true), "\n";
echo 'shows a password: ', var_export(str_contains($e->getMessage(), 'secret'), true), "\n";

$store = new Lock\Store\RedisStore("redis+cluster://127.0.0.1:$a?timeout=0.5");
$t0 = hrtime(true);
lock_test_expect_throw(fn () => $store->isLocked('job'));
echo 'within the timeout: ', var_export((hrtime(true) - $t0) / 1e9 < 0.5 + 0.1, true), "\n";
?>
--EXPECTF--
Lock\StorageException: Lock "job": Redis master "mymaster" via sentinels 127.0.0.1:%d,127.0.0.1:%d: no sentinel named the master (sentinel 127.0.0.1:%d: cannot connect: connection refused; sentinel 127.0.0.1:%d: cannot connect: connection refused)
within the timeout: true
names both: true
shows a password: false
Lock\StorageException: Redis Cluster at 127.0.0.1:%d: node 127.0.0.1:%d: cannot connect: connection refused
within the timeout: true
