--TEST--
faults: PostgreSQL: a server frozen mid-statement (SIGSTOP, the postmaster too, so a cancel request is accepted by the kernel and never answered): each call is a Lock\StorageException within twice the timeout, in session and table mode; once the server thaws, the store works again
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 0.5;
// The statement's timeout, then one more for the cancel and the statement's end.
$bound = 2 * $timeout + LOCK_FAULT_SLACK;
$server = new LockTestPgServer();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . rawurlencode($prefix));
$session = new Lock\Store\PostgresStore($dsn, ['timeout' => $timeout]);
$table = new Lock\Store\PostgresStore($dsn, ['timeout' => $timeout, 'holds' => 'table']);
$a = new Lock\Lock('a', $session);
$t = new Lock\Lock('t', $table);
var_dump($a->acquire(), $t->acquire());

// The server's processes: the postmaster (the parent of its oldest process, an auxiliary one) and all its children.
$oldest = (int) lock_test_pgsql_sql('SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() ORDER BY backend_start LIMIT 1',
    $server->dsn);
$ppid = static function (int $pid): int {
    $stat = (string) @file_get_contents("/proc/$pid/stat");
    return $stat === '' ? 0 : (int) explode(' ', substr($stat, strrpos($stat, ')') + 2))[1];
};
$isPostgres = static fn (int $pid): bool => $pid > 1 && str_contains((string) @file_get_contents("/proc/$pid/cmdline"), 'postgres');
$postmaster = $ppid($oldest);
if (!$isPostgres($oldest) || !$isPostgres($postmaster)) {
    echo "FAIL: cannot find the server's processes (oldest $oldest, its parent $postmaster)\n";
    exit(1);
}
$family = [$postmaster];
foreach (glob('/proc/[0-9]*') as $proc) {
    $pid = (int) basename($proc);
    if ($ppid($pid) === $postmaster && $isPostgres($pid)) {
        $family[] = $pid;
    }
}
$signal = static function (int $sig) use ($family): void {
    foreach ($family as $pid) {
        posix_kill($pid, $sig);
    }
};
register_shutdown_function($signal, SIGCONT);
$signal(SIGSTOP);

foreach (['session: isAcquired()' => fn () => $a->isAcquired(), 'session: getFencingToken()' => fn () => $a->getFencingToken(),
    'table: refresh()' => fn () => $t->refresh(), 'table: isLocked()' => fn () => $table->isLocked('t')] as $what => $call) {
    $start = microtime(true);
    try {
        $call();
        echo "$what: no exception\n";
    } catch (Lock\LockException $e) {
        // The hold's own statement gets no answer; a call that needs a new connection cannot connect.
        $msg = $e->getMessage();
        echo "$what: ", get_class($e), ': ', str_contains($msg, 'no answer within 500 ms')
            || str_contains($msg, 'cannot connect: timed out after 500 ms') ? 'no answer in time' : $msg, "\n";
    }
    $took = microtime(true) - $start;
    echo "$what: within twice the timeout: ", var_export($took < $bound, true), $took < $bound ? '' : " ($took s)", "\n";
}

$signal(SIGCONT);
echo "-- thawed\n";
// The session hold's connection was given up: its session ends, and the hold with it.
lock_test_wait_until(static fn (): bool => !$session->isLocked('a'), 30.0, 'the given-up session to end');
var_dump($a->isAcquired());
$again = new Lock\Lock('a', $session);
var_dump($again->acquire());
$again->release();
// The table hold is a row: still ours.
var_dump($t->isAcquired());
$t->refresh();
$t->release();
var_dump($table->isLocked('t'));
?>
--EXPECT--
bool(true)
bool(true)
session: isAcquired(): Lock\StorageException: no answer in time
session: isAcquired(): within twice the timeout: true
session: getFencingToken(): Lock\StorageException: no answer in time
session: getFencingToken(): within twice the timeout: true
table: refresh(): Lock\StorageException: no answer in time
table: refresh(): within twice the timeout: true
table: isLocked(): Lock\StorageException: no answer in time
table: isLocked(): within twice the timeout: true
-- thawed
bool(false)
bool(true)
bool(true)
bool(false)
