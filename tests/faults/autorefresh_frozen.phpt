--TEST--
faults: $autoRefresh holds while Redis is frozen (SIGSTOP): frozen for half the TTL, the hold survives and another process never takes it; frozen longer than the TTL, the hold counts as expired, the refresher stops for good, isAcquired() is false, refresh() throws ExpiredException and another lock takes the resource
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
 * a time and everything many times slower, the TTL and the timeouts get more room. The
 * holder's timeout (its refresher's too) stays well below the TTL: a refresh sent to the
 * frozen server gives up within it and is tried again.
 */
$ttl = lock_test_valgrind() ? 4.0 : 1.0;
$timeout = lock_test_valgrind() ? 1.5 : 0.3;

/**
 * Commands the server has run or refused since it started, INFO (the test's own look) left
 * out.
 */
function autorefresh_commands(LockTestResp $admin): int
{
    $n = 0;
    foreach (explode("\n", (string) $admin->ok('INFO', 'commandstats')) as $line) {
        // cmdstat_NAME:calls=N,usec=N,usec_per_call=N,rejected_calls=N,failed_calls=N
        [$name, $fields] = array_pad(explode(':', trim($line), 2), 2, '');
        if (!str_starts_with($name, 'cmdstat_') || $name === 'cmdstat_info') {
            continue;
        }
        foreach (explode(',', $fields) as $pair) {
            [$k, $v] = array_pad(explode('=', $pair, 2), 2, '0');
            if ($k === 'calls' || $k === 'rejected_calls') {
                $n += (int) $v;
            }
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

/**
 * A PHP child that tries to take $resource every tenth of the TTL (one attempt each, a
 * hold it gets given back at once) until it reads "stop"; then prints its counts as JSON
 * and "done".
 */
function autorefresh_contender(string $dsn, string $resource, float $ttl, float $timeout): LockTestChild
{
    $code = '$store = ' . lock_fault_store_code($dsn, ['timeout' => $timeout]) . ";\n"
        . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store, ' . var_export($ttl, true) . ");\n"
        . '$tick = ' . var_export($ttl / 10, true) . ";\n"
        . <<<'PHP'
$store->isLocked('warm-up');
$n = ['took' => 0, 'refused' => 0, 'storage' => 0, 'other' => []];
echo "ready\n";
while (true) {
    $r = [STDIN];
    $w = $e = null;
    if (stream_select($r, $w, $e, 0, (int) ($tick * 1e6)) > 0) {
        $line = fgets(STDIN);
        if ($line === false || trim($line) === 'stop') {
            break;
        }
        continue;
    }
    try {
        if ($lock->acquire()) {
            $n['took']++;
            $lock->release();
        } else {
            $n['refused']++;
        }
    } catch (Lock\StorageException) {
        $n['storage']++;
    } catch (Throwable $e) {
        $n['other'][] = get_class($e) . ': ' . $e->getMessage();
    }
}
echo json_encode($n), "\ndone\n";
PHP;
    $child = new LockTestChild($code);
    $child->waitFor('ready');
    return $child;
}

$server = new LockTestRedisServer();
$admin = $server->client();
$prefix = lock_test_prefix();
$dsn = $server->dsn('prefix=' . urlencode($prefix));
$store = new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]);

echo "-- frozen for half the TTL\n";
$holder = new Lock\Lock('short', $store, $ttl, true, null, true);
var_dump($holder->acquire());
$contender = autorefresh_contender($dsn, 'short', $ttl, lock_test_valgrind() ? 0.5 : 0.2);
usleep((int) ($ttl * 1e6));
/*
 * The freeze starts just after one of the thread's refreshes, so that the hold has most of
 * its TTL left on the server: half of it passes frozen, and a refresh sent meanwhile runs
 * when the server wakes (or is sent again then).
 */
lock_test_wait_until(fn () => $admin->ok('PTTL', $prefix . '{short}') > 0.9 * $ttl * 1000, 10.0, 'a refresh of the hold');
$server->pause();
usleep((int) ($ttl / 2 * 1e6));
$server->resume();
// Two TTLs more with the contender still at it: the thread goes on refreshing.
usleep((int) (2 * $ttl * 1e6));
$contender->send('stop');
$out = $contender->waitFor('done');
$n = json_decode(strtok($out, "\n"), true);
echo 'contender: took it ', $n['took'], ' times, refused: ', var_export($n['refused'] > 0, true),
    ', storage errors while frozen: ', var_export($n['storage'] > 0, true), ', other outcomes: ', json_encode($n['other']), "\n";
$contender->wait();
autorefresh_call('holder: isAcquired', fn () => $holder->isAcquired(), true);
echo 'holder: lifetime left: ', var_export($holder->getRemainingLifetime() > 0, true), "\n";
echo 'the key names the holder: ', var_export($admin->ok('GET', $prefix . '{short}') === $holder->getOwner(), true), "\n";
autorefresh_call('holder: release', fn () => $holder->release());

echo "-- frozen for two TTLs\n";
$holder = new Lock\Lock('long', $store, $ttl, true, null, true);
var_dump($holder->acquire());
usleep((int) ($ttl * 1e6));
echo 'held after a TTL: ', var_export($holder->isAcquired(), true), "\n";
$server->pause();
// No refresh reaches a frozen server: one TTL on, the hold counts as expired.
usleep((int) (($ttl + LOCK_FAULT_SLACK) * 1e6));
echo 'one TTL into the freeze the hold counts as expired: ', var_export($holder->isExpired(), true),
    ', lifetime left: ', var_export($holder->getRemainingLifetime(), true), "\n";
usleep((int) (($ttl - LOCK_FAULT_SLACK) * 1e6));
$server->resume();
/*
 * The refreshes sent to the frozen server run as it wakes and find the hold's key expired.
 * The refresher gave up when the hold's TTL had passed: from then on it sends nothing.
 */
$admin->ok('PING');
usleep((int) ($ttl / 10 * 1e6));
$before = autorefresh_commands($admin);
usleep((int) (2 * $ttl * 1e6));
echo 'commands to the server in the two TTLs after it woke: ', autorefresh_commands($admin) - $before, "\n";
echo 'keys: ', json_encode(lock_fault_keys($admin, $prefix)), "\n";
autorefresh_call('holder: isAcquired', fn () => $holder->isAcquired(), true);
autorefresh_call('holder: refresh', fn () => $holder->refresh());
autorefresh_call('holder: release (no longer held: a no-op)', fn () => $holder->release());

// Another lock takes it, and keeps it undisturbed for two TTLs.
$other = new Lock\Lock('long', new Lock\Store\RedisStore($dsn, ['timeout' => $timeout]), 3 * $ttl);
autorefresh_call('another lock: acquire', fn () => $other->acquire(), true);
$refreshes = ['ok' => 0];
for ($i = 0; $i < 6; $i++) {
    usleep((int) ($ttl / 3 * 1e6));
    try {
        $other->refresh();
        $refreshes['ok']++;
    } catch (Lock\LockException $e) {
        $refreshes[get_class($e)] = ($refreshes[get_class($e)] ?? 0) + 1;
    }
}
echo 'the other lock refreshed 6 times: ', json_encode($refreshes), "\n";
autorefresh_call('holder: isAcquired', fn () => $holder->isAcquired(), true);
$other->release();
echo 'keys left: ', json_encode(lock_fault_keys($admin, $prefix)), "\n";
?>
--EXPECT--
-- frozen for half the TTL
bool(true)
contender: took it 0 times, refused: true, storage errors while frozen: true, other outcomes: []
holder: isAcquired: ok: true
holder: lifetime left: true
the key names the holder: true
holder: release: ok
-- frozen for two TTLs
bool(true)
held after a TTL: true
one TTL into the freeze the hold counts as expired: true, lifetime left: 0.0
commands to the server in the two TTLs after it woke: 0
keys: []
holder: isAcquired: ok: false
holder: refresh: ExpiredException
holder: release (no longer held: a no-op): ok
another lock: acquire: ok: true
the other lock refreshed 6 times: {"ok":6}
holder: isAcquired: ok: false
keys left: []
