--TEST--
faults: $autoRefresh holds while Redis is SIGKILLed and restarted empty on the same port: the refresher finds the holds gone and stops, never takes them again; isAcquired() is false, refresh() and release() throw ExpiredException (LostException once another lock took the resource), and another lock holds the resource for three TTLs undisturbed
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
lock_test_hang_guard(100);

/*
 * The refresher refreshes every third of the TTL; under valgrind, which runs one thread at
 * a time and everything many times slower, the TTL and the store's timeout get more room.
 */
$ttl = lock_test_valgrind() ? 4.0 : 1.0;
$timeout = lock_test_valgrind() ? 2.0 : 0.5;

/**
 * What the server has run since it started: ['commands' => every command run or refused
 * but INFO (the test's own look), 'scripts' => the scripts run to their end (EVALSHA that
 * found its script, EVAL)].
 */
function autorefresh_commands(LockTestResp $admin): array
{
    $n = ['commands' => 0, 'scripts' => 0];
    foreach (explode("\n", (string) $admin->ok('INFO', 'commandstats')) as $line) {
        // cmdstat_NAME:calls=N,usec=N,usec_per_call=N,rejected_calls=N,failed_calls=N
        [$name, $fields] = array_pad(explode(':', trim($line), 2), 2, '');
        if (!str_starts_with($name, 'cmdstat_') || $name === 'cmdstat_info') {
            continue;
        }
        $f = [];
        foreach (explode(',', $fields) as $pair) {
            [$k, $v] = array_pad(explode('=', $pair, 2), 2, '0');
            $f[$k] = (int) $v;
        }
        $n['commands'] += ($f['calls'] ?? 0) + ($f['rejected_calls'] ?? 0);
        if ($name === 'cmdstat_evalsha' || $name === 'cmdstat_eval') {
            $n['scripts'] += ($f['calls'] ?? 0) - ($f['failed_calls'] ?? 0);
        }
    }
    return $n;
}

/** Calls $fn and prints "$what: " and "ok" (with its value when $show), or the exception's class without the namespace. */
function autorefresh_call(string $what, callable $fn, bool $show = false): void
{
    try {
        $v = $fn();
        echo "$what: ok", $show ? ': ' . var_export($v, true) : '', "\n";
    } catch (Throwable $e) {
        echo "$what: ", substr(strrchr('\\' . get_class($e), '\\'), 1), "\n";
    }
}

$server = new LockTestRedisServer();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);

// Three holds of one process, each with its own use after the restart.
$watched = new Lock\Lock('watched', $store, $ttl, true, null, true);
$checked = new Lock\Lock('checked', $store, $ttl, true, null, true);
$released = new Lock\Lock('released', $store, $ttl, true, null, true);
var_dump($watched->acquire(), $checked->acquire(), $released->acquire());

// Two TTLs later the holds are still there: the thread refreshed them.
usleep((int) (2 * $ttl * 1e6));
$admin = $server->client();
echo 'held after two TTLs: ', var_export($watched->isAcquired() && $checked->isAcquired() && $released->isAcquired(), true), "\n";
echo 'keys: ', implode(', ', array_keys(lock_fault_keys($admin, $prefix))), "\n";

$server->kill();
$server->restart();
$restarted = hrtime(true);
$admin = $server->client();

/*
 * The last refresh before the kill gave each hold at most one TTL: once that has passed,
 * the holds count as expired locally unless a refresh reached the new server, which holds
 * nothing of ours and must not be given anything. The thread's next refresh (or a retry,
 * every tenth of the TTL, until the hold would have ended) reaches the restarted server,
 * finds the hold gone and stops. Nothing of the holders is called meanwhile.
 */
usleep((int) (($ttl + LOCK_FAULT_SLACK) * 1e6));
echo 'one TTL after the restart every hold counts as expired: ',
    var_export($watched->isExpired() && $checked->isExpired() && $released->isExpired(), true), "\n";
echo 'left lifetime: ', var_export([$watched->getRemainingLifetime(), $checked->getRemainingLifetime(), $released->getRemainingLifetime()], true), "\n";
// Each refresher ran its refresh there once, found its hold gone, and stopped.
$before = autorefresh_commands($admin);
echo 'refreshes the restarted server ran: ', $before['scripts'], "\n";
// From now on the refreshers are quiet: two TTLs (six refresh periods) without a command.
usleep((int) (2 * $ttl * 1e6));
echo 'commands to the restarted server in the next two TTLs: ', autorefresh_commands($admin)['commands'] - $before['commands'], "\n";
echo 'nobody took the holds again: keys ', json_encode(lock_fault_keys($admin, $prefix)), "\n";

// Another lock takes the watched resource and holds it for three of the holder's TTLs,
// refreshing every third of that TTL: nothing takes it back behind its back.
$other = new Lock\Lock('watched', new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]), 3 * $ttl);
var_dump($other->acquire());
$refreshes = ['ok' => 0];
for ($i = 0; $i < 9; $i++) {
    usleep((int) ($ttl / 3 * 1e6));
    try {
        $other->refresh();
        $refreshes['ok']++;
    } catch (Lock\LockException $e) {
        $name = get_class($e);
        $refreshes[$name] = ($refreshes[$name] ?? 0) + 1;
    }
}
echo 'the other lock refreshed 9 times: ', json_encode($refreshes), "\n";
echo 'the key names the other lock: ', var_export($admin->ok('GET', $prefix . '{watched}') === $other->getOwner(), true), "\n";
autorefresh_call('other: isAcquired', fn () => $other->isAcquired(), true);

// The holders learn it as any holder of a hold gone: by asking.
autorefresh_call('watched: isAcquired', fn () => $watched->isAcquired(), true);
autorefresh_call('watched: refresh', fn () => $watched->refresh());
autorefresh_call('watched: release (no longer held: a no-op)', fn () => $watched->release());
autorefresh_call('checked: isAcquired', fn () => $checked->isAcquired(), true);
autorefresh_call('checked: refresh', fn () => $checked->refresh());
autorefresh_call('checked: release (no longer held: a no-op)', fn () => $checked->release());
autorefresh_call('released: release', fn () => $released->release());
autorefresh_call('released: release again (a no-op)', fn () => $released->release());
autorefresh_call('other: still holds', fn () => $other->isAcquired(), true);
$other->release();

// A new hold after the restart is refreshed again.
var_dump($checked->acquire());
usleep((int) (2 * $ttl * 1e6));
autorefresh_call('checked: held two TTLs after acquiring again', fn () => $checked->isAcquired(), true);
$checked->release();
echo 'keys left: ', json_encode(lock_fault_keys($admin, $prefix)), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
held after two TTLs: true
keys: {checked}, {released}, {watched}
one TTL after the restart every hold counts as expired: true
left lifetime: array (
  0 => 0.0,
  1 => 0.0,
  2 => 0.0,
)
refreshes the restarted server ran: 3
commands to the restarted server in the next two TTLs: 0
nobody took the holds again: keys []
bool(true)
the other lock refreshed 9 times: {"ok":9}
the key names the other lock: true
other: isAcquired: ok: true
watched: isAcquired: ok: false
watched: refresh: LostException
watched: release (no longer held: a no-op): ok
checked: isAcquired: ok: false
checked: refresh: ExpiredException
checked: release (no longer held: a no-op): ok
released: release: ExpiredException
released: release again (a no-op): ok
other: still holds: ok: true
bool(true)
checked: held two TTLs after acquiring again: ok: true
keys left: []
