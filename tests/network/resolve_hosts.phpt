--TEST--
network: PostgresStore, MysqlStore: a host name (resolved by us within the timeout, then given to the client library as addresses) reaches the server through each of its addresses in turn, and messages name the host as written
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/mysql.inc';

// A port nothing listens on.
$probe = stream_socket_server('tcp://127.0.0.1:0');
$closed = (int) parse_url('tcp://' . stream_socket_get_name($probe, false), PHP_URL_PORT);
fclose($probe);

$dir = lock_test_tmpdir('hosts');
// Two addresses: the servers listen on 127.0.0.1 only, so whichever comes first, ::1 is refused (or unreachable).
file_put_contents("$dir/hosts", "127.0.0.1 localhost\n::1 lock-test-db.example\n127.0.0.1 lock-test-db.example\n");
$named = static fn (string $dsn): string => str_replace('@127.0.0.1:', '@lock-test-db.example:', $dsn);
file_put_contents("$dir/child.php", <<<'PHP'
<?php
[, $pg, $my, $closed] = $argv;
foreach ([
    'Postgres' => fn (string $dsn) => new Lock\Store\PostgresStore($dsn, ['prefix' => 'resolve-hosts:', 'timeout' => 5]),
    'Mysql' => fn (string $dsn) => new Lock\Store\MysqlStore($dsn, ['prefix' => 'resolve-hosts:', 'timeout' => 5]),
] as $name => $make) {
    $dsn = $name === 'Postgres' ? $pg : $my;
    $lock = new Lock\Lock('r', $make($dsn), 10.0);
    echo "$name acquire: ", var_export($lock->acquire(), true);
    $lock->release();
    echo ', released: ', var_export(!$lock->isAcquired(), true), "\n";
    try {
        (new Lock\Lock('r', $make(preg_replace('/:\d+\//', ":$closed/", $dsn)), 10.0))->acquire();
    } catch (Lock\StorageException $e) {
        echo "$name closed port: ", get_class($e), ': ', $e->getMessage(), "\n";
    }
}
PHP);
// The child sees our hosts file in a mount namespace of its own; the machine's stays as it is.
$cmd = array_merge(['unshare', '--mount', '--', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', "$dir/hosts"],
    lock_test_php_cmd("$dir/child.php", $named(lock_test_pgsql_dsn()), $named(lock_test_mysql_dsn()), (string) $closed));
$proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
$out = stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
echo $out, $err, 'exit ', proc_close($proc), "\n";
lock_test_rmdir($dir);
?>
--EXPECTF--
Postgres acquire: true, released: true
Postgres closed port: Lock\StorageException: Lock "r": PostgreSQL at lock-test-db.example:%d: cannot connect: connection to server at "lock-test-db.example" (%s), port %d failed: %s
Mysql acquire: true, released: true
Mysql closed port: Lock\StorageException: Lock "r": MySQL at lock-test-db.example:%d: cannot connect: Can't connect to server on 'lock-test-db.example' (%d)
exit 0
