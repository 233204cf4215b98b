--TEST--
pgsql: a blocking wait cut short by a fatal error in a signal handler leaves nothing queued on the server: the worker's next request, and every other process, finds the resource free once its holder lets go (php -S worker, with and without persistent; session and table mode)
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require_once __DIR__ . '/../inc/redis.inc';
// Under valgrind the children are checked too: what they do is this test's subject.
lock_test_check_children();

lock_test_hang_guard(120);
$prefix = lock_test_prefix();
$dsn = lock_test_pgsql_dsn();
$key = lock_test_pgsql_key($prefix, 'b');
$store = lock_test_pgsql_store(['prefix' => $prefix]);

// The worker's requests: the store the parameters describe, then what the action says.
$dir = lock_test_tmpdir('pg-bailout');
file_put_contents("$dir/router.php", <<<'PHP'
<?php
header('Content-Type: text/plain');
if ($_GET['action'] === 'pid') {
    echo getmypid();
    return true;
}
$store = new Lock\Store\PostgresStore($_GET['dsn'], ['prefix' => $_GET['prefix'], 'persistent' => $_GET['persistent'] === '1',
    'holds' => $_GET['holds']]);
$lock = new Lock\Lock('b', $store);
if ($_GET['action'] === 'wait') {
    pcntl_async_signals(true);
    pcntl_signal(SIGUSR1, static function (): void {
        trigger_error('fatal in a signal handler', E_USER_ERROR);
    });
    $lock->acquire(true);
    echo "acquired\n";
} else {
    echo 'acquired=', var_export($lock->acquire(), true), "\n";
    $lock->release();
}
PHP);

/**
 * Starts `php -S` with the router: one worker process, so that what a request leaves
 * behind is the next one's. Returns its port. A worker of its own for each case: pcntl
 * leaves signals blocked in a process whose handler died of a fatal error.
 */
function web_start(string $dir): int
{
    $port = lock_test_free_port();
    $env = getenv();
    unset($env['PHP_CLI_SERVER_WORKERS']);
    $proc = proc_open(lock_test_php_cmd('-d', 'max_execution_time=0', '-S', "127.0.0.1:$port", '-t', $dir, "$dir/router.php"),
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/server.log", 'a'], 2 => ['file', "$dir/server.log", 'a']],
        $pipes, null, $env);
    $pid = proc_get_status($proc)['pid'];
    lock_test_watchdog($pid, 'router.php');
    register_shutdown_function(static function () use ($proc, $pid): void {
        posix_kill($pid, SIGKILL);
        proc_close($proc);
    });
    lock_test_wait_until(static function () use ($port): bool {
        $s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 1.0);
        if ($s === false) {
            return false;
        }
        fclose($s);
        return true;
    }, 60.0, 'php -S to listen');
    return $port;
}

/** Sends a GET to the worker and returns its connection, to read the answer from later. */
function web_send(int $port, array $params)
{
    $s = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 10.0);
    fwrite($s, 'GET /?' . http_build_query($params) . " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    return $s;
}

/** The body of the answer on $s. */
function web_read($s): string
{
    stream_set_timeout($s, (int) lock_test_patience(60));
    $answer = stream_get_contents($s);
    fclose($s);
    return (string) substr($answer, strpos($answer, "\r\n\r\n") + 4);
}

/** The advisory locks of the resource's key on the server: pid and whether granted. */
function key_locks(string $key): array
{
    $out = lock_test_pgsql_sql("SELECT pid || ':' || granted FROM pg_locks WHERE locktype = 'advisory'"
        . " AND ((classid::int8 << 32) | objid::int8) = ($key)::bit(64)::int8 AND objsubid = 1 ORDER BY pid");
    return $out === '' ? [] : explode("\n", $out);
}

foreach (['0', '1'] as $persistent) {
    echo "-- persistent=$persistent\n";
    $port = web_start($dir);
    $workerPid = (int) web_read(web_send($port, ['action' => 'pid']));
    $params = ['dsn' => $dsn, 'prefix' => $prefix, 'persistent' => $persistent, 'holds' => 'session'];
    $holder = new Lock\Lock('b', $store);
    var_dump($holder->acquire());
    $holderPid = lock_test_pgsql_holders($prefix, 'b')[0];

    $waiting = web_send($port, $params + ['action' => 'wait']);
    // The worker's wait is queued on the server: then the signal comes.
    lock_test_wait_until(static fn (): bool => count(key_locks($key)) === 2, 60.0, 'the worker to wait');
    posix_kill($workerPid, SIGUSR1);
    $body = web_read($waiting);
    echo str_contains($body, 'fatal in a signal handler') ? "the request died of the fatal error\n" : "unexpected answer: $body\n";

    // The request is over: nothing of it may stay queued behind the holder.
    lock_test_wait_until(static fn (): bool => key_locks($key) === ["$holderPid:true"], 30.0,
        'the dead request\'s wait to leave the server\'s queue (left: ' . implode(', ', key_locks($key)) . ')');
    $holder->release();
    $other = new Lock\Lock('b', $store);
    var_dump($other->acquire());
    $other->release();
    echo web_read(web_send($port, $params + ['action' => 'try']));
    var_dump(key_locks($key));
}

echo "-- table mode\n";
/** The local ports of the TCP connections that process $pid has open to the server. */
function pg_sockets(int $pid, int $pgPort): array
{
    $inodes = [];
    foreach (glob("/proc/$pid/fd/*") as $fd) {
        // No preg_*: PCRE's JIT code is noise to valgrind.
        $link = (string) @readlink($fd);
        if (str_starts_with($link, 'socket:[')) {
            $inodes[substr($link, 8, -1)] = true;
        }
    }
    $ports = [];
    foreach (['/proc/net/tcp', '/proc/net/tcp6'] as $file) {
        foreach (array_slice(file($file), 1) as $line) {
            $c = array_values(array_filter(explode(' ', trim($line)), 'strlen'));
            if (isset($inodes[$c[9]]) && hexdec(substr($c[2], strrpos($c[2], ':') + 1)) === $pgPort) {
                $ports[] = hexdec(substr($c[1], strrpos($c[1], ':') + 1));
            }
        }
    }
    return $ports;
}

// A table-mode waiter sleeps between its takes on a LISTENing connection of its own,
// after asking how long the holder's row has left.
$table = lock_test_pgsql_table_store(['prefix' => $prefix]);
$pgPort = lock_test_pgsql_parts()[1];
$port = web_start($dir);
$workerPid = (int) web_read(web_send($port, ['action' => 'pid']));
$params = ['dsn' => $dsn, 'prefix' => $prefix, 'persistent' => '0', 'holds' => 'table'];
$holder = new Lock\Lock('b', $table);
var_dump($holder->acquire());
$waiting = web_send($port, $params + ['action' => 'wait']);
lock_test_wait_until(static function () use ($workerPid, $pgPort): bool {
    $ports = pg_sockets($workerPid, $pgPort);
    return count($ports) === 1 && lock_test_pgsql_sql("SELECT count(*) FROM pg_stat_activity WHERE client_port = $ports[0]"
        . " AND state = 'idle' AND query LIKE 'SELECT CASE WHEN expires_at IS NULL THEN -1%'") === '1';
}, 60.0, 'the worker to wait');
posix_kill($workerPid, SIGUSR1);
$body = web_read($waiting);
echo str_contains($body, 'fatal in a signal handler') ? "the request died of the fatal error\n" : "unexpected answer: $body\n";
// Its connection went with the request, not left open in the worker for ever.
lock_test_wait_until(static fn (): bool => pg_sockets($workerPid, $pgPort) === [], 30.0, 'the dead request\'s connection to close');
$holder->release();
echo web_read(web_send($port, $params + ['action' => 'try']));
var_dump($table->isLocked('b'), pg_sockets($workerPid, $pgPort));
?>
--EXPECT--
-- persistent=0
bool(true)
the request died of the fatal error
bool(true)
acquired=true
array(0) {
}
-- persistent=1
bool(true)
the request died of the fatal error
bool(true)
acquired=true
array(0) {
}
-- table mode
bool(true)
the request died of the fatal error
acquired=true
bool(false)
array(0) {
}
