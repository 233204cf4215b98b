--TEST--
network: RedisStore, PostgresStore, MysqlStore: a name server that never answers: resolving the host name ends within the store's timeout with a StorageException naming the host (the system resolver alone would wait 5 s a try, twice)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// A name server on loopback that reads nothing and answers nothing.
$silent = stream_socket_server('udp://127.0.0.1:53', $errno, $errstr, STREAM_SERVER_BIND);
if ($silent === false) {
    exit("cannot bind udp://127.0.0.1:53 (the test runs as root, as CI does): $errstr\n");
}
$dir = lock_test_tmpdir('resolve');
file_put_contents("$dir/resolv.conf", "nameserver 127.0.0.1\noptions timeout:5 attempts:2\n");
file_put_contents("$dir/child.php", <<<'PHP'
<?php
foreach ([0.5, 1.5] as $timeout) {
    $store = new Lock\Store\RedisStore('redis://lock-test-unanswered.example:6379', ['timeout' => $timeout]);
    $start = hrtime(true);
    try {
        var_dump((new Lock\Lock('r', $store, 10.0))->acquire());
    } catch (Lock\StorageException $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
    $took = (hrtime(true) - $start) / 1e9;
    echo "timeout $timeout: within it (and scheduling slack): ", var_export($took < $timeout + 2.0, true), "\n";
}
// No server is needed: the name never resolves.
foreach ([
    'Postgres' => fn () => new Lock\Store\PostgresStore('pgsql://u:p@lock-test-unanswered.example:5432/db?timeout=0.5'),
    'Mysql' => fn () => new Lock\Store\MysqlStore('mysql://u:p@lock-test-unanswered.example:3306/db?timeout=0.5'),
] as $name => $make) {
    $start = hrtime(true);
    try {
        var_dump((new Lock\Lock('r', $make(), 10.0))->acquire());
    } catch (Lock\StorageException $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
    $took = (hrtime(true) - $start) / 1e9;
    echo "$name timeout 0.5: within it (and scheduling slack): ", var_export($took < 0.5 + 2.0, true), "\n";
}
PHP);
// The child sees our resolv.conf in a mount namespace of its own; the machine's stays as it is.
$cmd = array_merge(['unshare', '--mount', '--', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', "$dir/resolv.conf"],
    lock_test_php_cmd("$dir/child.php"));
$proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
$out = stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
echo $out, $err, 'exit ', proc_close($proc), "\n";
lock_test_rmdir($dir);
?>
--EXPECTF--
Lock\StorageException: Lock "r": Redis at lock-test-unanswered.example:6379: %sresolving lock-test-unanswered.example took longer than the timeout (the name server does not answer)%A
timeout 0.5: within it (and scheduling slack): true
Lock\StorageException: Lock "r": Redis at lock-test-unanswered.example:6379: %sresolving lock-test-unanswered.example took longer than the timeout (the name server does not answer)%A
timeout 1.5: within it (and scheduling slack): true
Lock\StorageException: Lock "r": PostgreSQL at lock-test-unanswered.example:5432: cannot connect: resolving lock-test-unanswered.example took longer than the timeout (the name server does not answer)
Postgres timeout 0.5: within it (and scheduling slack): true
Lock\StorageException: Lock "r": MySQL at lock-test-unanswered.example:3306: cannot connect: resolving lock-test-unanswered.example took longer than the timeout (the name server does not answer)
Mysql timeout 0.5: within it (and scheduling slack): true
exit 0
