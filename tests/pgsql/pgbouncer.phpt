--TEST--
pgsql: through a PgBouncer in transaction mode a statement that lands on another server session fails with a Lock\StorageException naming the pooler, and the hold is then reported lost; in session mode the same sequence works
--EXTENSIONS--
lock
pgsql
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/redis.inc';
require __DIR__ . '/../inc/faults.inc';

/** A pgbouncer of the test's own on a free loopback port, in front of the test command's PostgreSQL. */
function start_pgbouncer(string $mode): array
{
    [$host, $pgport, $user, $pass, $db] = lock_test_pgsql_parts();
    $dir = lock_test_tmpdir('pgbouncer');
    $as = [];
    if (posix_geteuid() === 0) {
        // pgbouncer refuses to run as root.
        chown($dir, 'nobody');
        $as = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--'];
    }
    for ($attempt = 0; $attempt < 5; $attempt++) {
        $port = lock_test_free_port();
        file_put_contents("$dir/users.txt", "\"$user\" \"$pass\"\n");
        file_put_contents("$dir/pgbouncer.ini", "[databases]\n$db = host=$host port=$pgport dbname=$db\n"
            . "[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = $port\nunix_socket_dir =\n"
            . "auth_type = trust\nauth_file = $dir/users.txt\npool_mode = $mode\n"
            . "default_pool_size = 4\nmax_client_conn = 20\nlogfile = $dir/pgbouncer.log\n"
            // The server session used last is handed out next: which one a statement lands on is known.
            . "server_round_robin = 0\n");
        $proc = proc_open(array_merge($as, ['pgbouncer', "$dir/pgbouncer.ini"]),
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        $pid = proc_get_status($proc)['pid'];
        lock_test_watchdog($pid, 'pgbouncer');
        register_shutdown_function(static function () use ($proc, $pid): void {
            posix_kill($pid, SIGKILL);
            proc_close($proc);
        });
        $deadline = microtime(true) + 30;
        while (microtime(true) < $deadline && proc_get_status($proc)['running']) {
            $s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 1.0);
            if ($s !== false) {
                fclose($s);
                return [$proc, "pgsql://$user:$pass@127.0.0.1:$port/$db", "host=127.0.0.1 port=$port dbname=$db user=$user password=$pass"];
            }
            usleep(20000);
        }
        posix_kill($pid, SIGKILL);
        proc_close($proc);
    }
    echo "FAIL: cannot start pgbouncer: ", @file_get_contents("$dir/pgbouncer.log"), "\n";
    exit(1);
}

/** A second client through the pooler that opens a transaction and keeps it open: its server session is busy. */
function busy_client(string $conninfo)
{
    $raw = pg_connect($conninfo, PGSQL_CONNECT_FORCE_NEW);
    pg_query($raw, 'BEGIN');
    echo 'raw client in a transaction on server session ', pg_fetch_result(pg_query($raw, 'SELECT pg_backend_pid()'), 0, 0) > 0 ? 'yes' : 'no', "\n";
    return $raw;
}

/** Runs $fn and prints its exception's class, and whether its message names the pooler. */
function pooled(string $what, callable $fn): void
{
    try {
        var_dump($fn());
    } catch (Lock\LockException $e) {
        $named = preg_match('/the server session changed between two statements \(pid \d+, then \d+\): a pooler in transaction'
            . ' or statement mode \(PgBouncer pool_mode=transaction\).*session locks need session mode/', $e->getMessage()) === 1;
        echo "$what: ", get_class($e), $named ? ', naming the pooler' : ": {$e->getMessage()}", "\n";
    }
}

$prefix = lock_test_prefix();

echo "-- transaction mode\n";
[$bouncer, $dsn, $conninfo] = start_pgbouncer('transaction');
$store = lock_test_pgsql_store(['prefix' => $prefix], $dsn);
$a = new Lock\Lock('a', $store);
var_dump($a->acquire());
$held = lock_test_pgsql_holders($prefix, 'a');
var_dump(count($held));
$raw = busy_client($conninfo);
pooled('a: isAcquired', fn () => $a->isAcquired());
lock_fault_call('a: release', fn () => $a->release(), 10.0, ['LostException']);
// The pooled server session that took the lock still holds it: only the pooler can end it.
var_dump(lock_test_pgsql_holders($prefix, 'a') === $held);
pg_query($raw, 'COMMIT');
pg_close($raw);

echo "-- a blocking take on a reused connection that lands elsewhere\n";
$b = new Lock\Lock('b', $store);
var_dump($b->acquire(true, 5.0));
$b->release();
$raw = busy_client($conninfo);
pooled('b: acquire', fn () => $b->acquire(true, 5.0));
// It took the lock on that other server session, which keeps it.
var_dump(count(lock_test_pgsql_holders($prefix, 'b')));
lock_fault_call('b: isAcquired', fn () => $b->isAcquired(), 10.0, ['ok'], true);
pg_query($raw, 'COMMIT');
pg_close($raw);
posix_kill(proc_get_status($bouncer)['pid'], SIGKILL);

echo "-- session mode\n";
[$bouncer, $dsn, $conninfo] = start_pgbouncer('session');
$store = lock_test_pgsql_store(['prefix' => $prefix], $dsn);
$c = new Lock\Lock('c', $store);
var_dump($c->acquire(true, 5.0));
$raw = busy_client($conninfo);
var_dump($c->isAcquired(), count(lock_test_pgsql_holders($prefix, 'c')));
var_dump($c->acquireRead(), $c->isAcquired());
$c->release();
var_dump($c->isAcquired(), lock_test_pgsql_holders($prefix, 'c'));
pg_query($raw, 'COMMIT');
pg_close($raw);
?>
--EXPECT--
-- transaction mode
bool(true)
int(1)
raw client in a transaction on server session yes
a: isAcquired: Lock\StorageException, naming the pooler
a: release: LostException
bool(true)
-- a blocking take on a reused connection that lands elsewhere
bool(true)
raw client in a transaction on server session yes
b: acquire: Lock\StorageException, naming the pooler
int(1)
b: isAcquired: ok: false
-- session mode
bool(true)
raw client in a transaction on server session yes
bool(true)
int(1)
bool(true)
bool(true)
bool(false)
array(0) {
}