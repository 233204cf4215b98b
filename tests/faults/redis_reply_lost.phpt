--TEST--
faults: Redis fails between a command and its reply: the server killed with the command unread (and restarted), or the connection cut after the command ran; each call succeeds or throws Lock\StorageException within the timeout + 100 ms, and a reply lost after the command ran is reconciled by the owner token
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

$timeout = 1.0;
$bound = $timeout + LOCK_FAULT_SLACK;
$server = new LockTestRedisServer();
$admin = $server->client();
$calls = [
    'acquire' => '$lock->n->acquire()',
    'acquire(true, 3.0)' => '$lock->n->acquire(true, 3.0)',
    'acquireRead' => '$lock->n->acquireRead()',
    'release' => '$lock->h->release()',
    'refresh' => '$lock->h->refresh(60.0)',
    'isLocked' => '$store->isLocked("h")',
    'forceRelease' => '$store->forceRelease("h")',
    'n held' => '$lock->n->isAcquired()',
    'h held' => '$lock->h->isAcquired()',
    'next' => '(new Lock\Lock("z", $store))->acquire()',
    'owner' => '$lock->n->getOwner()',
];

/**
 * A child that holds "h" (30 s TTL) and has a lock object for "n", on a
 * prefix of its own; $fault($caller, $client, $killer, $killerPort) strikes
 * while its call $call is on its way, and the child's answer is printed.
 * $killer is a connection of ours (from $killerPort) that has sent nothing yet. Returns [the child, its
 * prefix, its connection's CLIENT LIST entry].
 */
function in_flight(string $call, callable $fault, array $accept): array
{
    global $server, $admin, $calls, $timeout, $bound;
    $prefix = lock_test_prefix();
    $caller = lock_fault_caller(
        '$store = ' . lock_fault_store_code($server->dsn('prefix=' . urlencode($prefix)), ['timeout' => $timeout]) . ';'
            . ' $lock = (object) ["h" => new Lock\Lock("h", $store, 30.0), "n" => new Lock\Lock("n", $store, 30.0)];',
        '$lock->h->acquire()', $calls);
    $client = lock_fault_only_client($admin);
    $killer = new LockTestResp($server->port);
    lock_test_wait_until(fn () => count(lock_fault_clients($admin)) === 2, 20, 'the server to accept a connection');
    $killerPort = lock_fault_client_port(array_values(array_diff_key(lock_fault_clients($admin), [$client['id'] => 1]))[0]);
    // Every command from now on goes to the slow log, with the address of the connection that sent it.
    $admin->ok('CONFIG', 'SET', 'slowlog-log-slower-than', '0');
    $admin->ok('SLOWLOG', 'RESET');
    $server->pause();
    $caller->send("go $call");
    // The command is in the frozen server's socket buffer: sent, not yet read.
    lock_fault_await_unread($server->port, lock_fault_client_port($client));
    $fault($caller, $client, $killer, $killerPort);
    lock_fault_report($call, lock_fault_caller_result($caller), $accept, $bound);
    $killer->close();
    return [$caller, $prefix, $client];
}

/** Runs one more call in the child and prints its outcome (with the value). */
function then(LockTestChild $caller, string $call): void
{
    global $bound;
    $caller->send("go $call");
    lock_fault_report("  then $call", lock_fault_caller_result($caller), ['ok'], $bound);
}

echo "-- the server killed with the command unread, restarted at once\n";
// The broken connection is retried once at once, which may come before the new server listens.
foreach (['acquire', 'acquire(true, 3.0)', 'release', 'refresh', 'isLocked'] as $call) {
    [$caller] = in_flight($call, function () use ($server): void {
        $server->kill();
        $server->restart();
    }, $call === 'refresh' ? ['ExpiredException', 'StorageException'] : ['ok', 'StorageException']);
    then($caller, 'next');
    $caller->wait();
    $admin = $server->client();
}

echo "-- the same, with the caller stopped until the new server listens\n";
// Its retry meets the new, empty server: the owner token settles what the lost command did.
foreach (['acquire', 'acquire(true, 3.0)', 'release', 'refresh', 'isLocked'] as $call) {
    [$caller] = in_flight($call, function (LockTestChild $caller) use ($server): void {
        lock_fault_stop($caller->pid);
        $server->kill();
        $server->restart();
        lock_fault_stop($caller->pid, false);
    }, $call === 'refresh' ? ['ExpiredException'] : ['ok']);
    then($caller, $call === 'release' || $call === 'refresh' ? 'h held' : ($call === 'isLocked' ? 'next' : 'n held'));
    $caller->wait();
    $admin = $server->client();
}

echo "-- the command ran, then the server cut the connection before the reply\n";
/*
 * CLIENT KILL of the caller's connection, sent while the server is frozen and
 * after the caller's command, on a connection that has sent nothing before:
 * when the server wakes, epoll reports the two sockets in the order their
 * data came (a socket that was ready before can still sit in epoll's ready
 * list, ahead of the others, which is why the killer's is a fresh one); the
 * server runs the caller's command, then the kill, which drops the reply
 * before it is written.
 */
$cut = function (LockTestChild $caller, array $client, LockTestResp $killer, int $killerPort) use ($server): void {
    $killer->send(['CLIENT', 'KILL', 'ID', $client['id']]);
    lock_fault_await_unread($server->port, $killerPort);
    $server->resume();
    if ($killer->read() !== 1) {
        echo "CLIENT KILL did not kill the caller's connection\n";
    }
};
/** Whether the server ran a command that came on the connection it then cut (the slow log keeps each command's sender). */
$ran = function (array $client) use ($admin): bool {
    foreach ($admin->ok('SLOWLOG', 'GET', '1000') as $entry) {
        if ($entry[4] === $client['addr']) {
            return true;
        }
    }
    return false;
};
[$caller, $prefix, $client] = in_flight('acquire', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
then($caller, 'n held');
$caller->send('go owner');
$owner = lock_fault_caller_result($caller)[2];
echo '  the key holds its owner token: ', var_export(var_export($admin->ok('GET', $prefix . '{n}'), true) === $owner, true), "\n";
$caller->wait();

[$caller, $prefix, $client] = in_flight('acquire(true, 3.0)', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
then($caller, 'n held');
$caller->wait();

[$caller, $prefix, $client] = in_flight('acquireRead', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
then($caller, 'n held');
$caller->wait();

[$caller, $prefix, $client] = in_flight('release', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
echo '  the key is gone: ', var_export($admin->ok('EXISTS', $prefix . '{h}') === 0, true), "\n";
then($caller, 'h held');
$caller->wait();

[$caller, $prefix, $client] = in_flight('refresh', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
echo '  the new TTL is set: ', var_export($admin->ok('PTTL', $prefix . '{h}') > 30000, true), "\n";
then($caller, 'h held');
$caller->wait();

[$caller, $prefix, $client] = in_flight('forceRelease', $cut, ['ok']);
echo '  the command ran before the cut: ', var_export($ran($client), true), "\n";
then($caller, 'h held');
$caller->wait();

echo 'keys left: ', json_encode(lock_fault_keys($admin, 'test:')), "\n";
?>
--EXPECT--
-- the server killed with the command unread, restarted at once
acquire: ok or StorageException
  then next: ok: true
acquire(true, 3.0): ok or StorageException
  then next: ok: true
release: ok or StorageException
  then next: ok: true
refresh: ExpiredException or StorageException
  then next: ok: true
isLocked: ok or StorageException
  then next: ok: true
-- the same, with the caller stopped until the new server listens
acquire: ok: true
  then n held: ok: true
acquire(true, 3.0): ok: true
  then n held: ok: true
release: ok: NULL
  then h held: ok: false
refresh: ExpiredException
  then h held: ok: false
isLocked: ok: false
  then next: ok: true
-- the command ran, then the server cut the connection before the reply
acquire: ok: true
  the command ran before the cut: true
  then n held: ok: true
  the key holds its owner token: true
acquire(true, 3.0): ok: true
  the command ran before the cut: true
  then n held: ok: true
acquireRead: ok: true
  the command ran before the cut: true
  then n held: ok: true
release: ok: NULL
  the command ran before the cut: true
  the key is gone: true
  then h held: ok: false
refresh: ok: NULL
  the command ran before the cut: true
  the new TTL is set: true
  then h held: ok: true
forceRelease: ok: NULL
  the command ran before the cut: true
  then h held: ok: false
keys left: []
