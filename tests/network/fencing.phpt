--TEST--
network: fencing tokens strictly increase across lost replies, cut, dropped and stalled connections and reconnects: a command whose answer was lost never leads to a token lower than one handed out before
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(60);

$T = 0.3;
$prefix = lock_test_prefix();
$direct = new LockTestResp(lock_test_redis_port());
$directStore = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);
$proxy = new LockTestProxy(lock_test_redis_port());
$store = new Lock\Store\RedisStore($proxy->dsn(), ['prefix' => $prefix, 'timeout' => $T]);
lock_net_load_scripts($store);

/** The fencing counter of $resource on the server. */
function counter(string $resource): int
{
    global $direct, $prefix;
    return (int) $direct->cmd('GET', $prefix . '{' . $resource . '}:f');
}

echo "-- an acquisition whose answer was lost\n";
$lock = new Lock\Lock('lost', $store, 10.0);
var_dump($lock->acquire());
$first = $lock->getFencingToken();
$lock->release();
$proxy->stall();
lock_net_expect('acquire', $T, fn () => $lock->acquire(), $proxy->endpoint());
$proxy->pass();
$lost = counter('lost');
echo 'the server handed out a token nobody saw: ', var_export($lost > $first, true), "\n";
lock_net_expect('acquire', $T, fn () => $lock->acquire());
echo 'the next token is greater than the lost one: ', var_export($lock->getFencingToken() > $lost, true), "\n";
$lock->release();

echo "-- a re-acquire (a refresh) whose answer is lost, after a reconnect\n";
$lock = new Lock\Lock('ask', $store, 10.0);
$proxy->cut();
var_dump($lock->acquire());
$seen = $lock->getFencingToken();
$proxy->stall();
// A re-acquire while held keeps the hold, and its token.
lock_net_expect('acquire while held', $T, fn () => $lock->acquire(), $proxy->endpoint());
$proxy->pass();
echo 'same token after the failure: ', var_export($lock->getFencingToken() === $seen, true), "\n";
$lock->release();
$other = new Lock\Lock('ask', $directStore, 10.0);
$other->acquire();
echo 'the next holder\'s is greater: ', var_export($other->getFencingToken() > $seen, true), "\n";
$other->release();

echo "-- two processes, one through the faulty link, one direct, faults at random moments\n";
$order = tempnam(sys_get_temp_dir(), 'lock-fence-order-');
$stop = $order . '.stop';
register_shutdown_function(static function () use ($order, $stop): void {
    @unlink($order);
    @unlink($stop);
});
$code = static fn (string $dsn, string $name, float $timeout) => 'require ' . var_export(__DIR__ . '/../inc/proxy.inc', true) . ";\n"
    . '$store = new Lock\Store\RedisStore(' . var_export($dsn, true) . ', ["prefix" => ' . var_export($prefix, true)
    . ', "timeout" => ' . var_export($timeout, true) . "]);\n"
    . '[$name, $order, $stop] = ' . var_export([$name, $order, $stop], true) . ";\n"
    . <<<'PHP'
$lock = new Lock\Lock('shared', $store, 2.0);
$last = null;
$counts = ['held' => 0, 'storage' => 0, 'expired' => 0, 'other' => 0];
echo "ready\n";
fgets(STDIN);
// Until the faults are over (a hang guard of 30 s besides).
$end = microtime(true) + 30.0;
while (!file_exists($stop) && microtime(true) < $end) {
    try {
        // A hold whose release failed is still ours: acquire() then refreshes it, with the same token.
        if ($lock->acquire()) {
            $token = $lock->getFencingToken();
            // Written while the lock is held, so the file lists the tokens in the order of the holds.
            if ($token !== $last) {
                file_put_contents($order, "$name $token\n", FILE_APPEND);
                $last = $token;
                $counts['held']++;
            }
            $lock->release();
        }
    } catch (Lock\StorageException) {
        $counts['storage']++;
    } catch (Lock\ExpiredException) {
        // A hold whose refreshes all failed until its TTL ran out: reported, and the file has its token already.
        $counts['expired']++;
    } catch (Throwable $e) {
        $counts['other']++;
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
    usleep(random_int(0, 3000));
}
echo json_encode($counts), "\n";
PHP;
$viaProxy = new LockTestChild($code($proxy->dsn(), 'proxy', $T));
$directly = new LockTestChild($code(lock_test_redis_dsn(), 'direct', 1.0));
$viaProxy->waitFor('ready');
$directly->waitFor('ready');
$viaProxy->send('go');
$directly->send('go');
/*
 * Three of each fault in random order and at random moments, for random spans;
 * first a drop that lasts longer than the timeout, so that calls of the process
 * behind the link surely fail (random faults alone may all be ridden out: a
 * cut is recovered by a reconnect, a stall or a black hole shorter than the
 * timeout delays a call without failing it).
 */
$plan = [];
foreach (['cut', 'stall', 'blackhole', 'drop', 'delay'] as $fault) {
    array_push($plan, $fault, $fault, $fault);
}
shuffle($plan);
usleep(100000);
$proxy->drop();
usleep((int) (2 * $T * 1e6));
$proxy->pass();
$faults = ['long drop' => 1];
foreach ($plan as $fault) {
    usleep(random_int(50000, 200000));
    $faults[$fault] = ($faults[$fault] ?? 0) + 1;
    if ($fault === 'delay') {
        $proxy->delay(40, 40);
    } else {
        $proxy->$fault();
    }
    if ($fault !== 'cut') {
        usleep(random_int(50000, 300000));
        $proxy->pass();
    }
}
$proxy->pass();
usleep(100000);
touch($stop);
$counts = [];
foreach (['proxy' => $viaProxy, 'direct' => $directly] as $name => $child) {
    $child->wait(30.0);
    $out = trim($child->output());
    $counts[$name] = json_decode(substr($out, strrpos($out, "\n") + 1), true);
    if (!is_array($counts[$name]) || $counts[$name]['other'] > 0) {
        echo "$name failed:\n$out\n";
    }
}
$tokens = [];
$holders = [];
foreach (file($order, FILE_IGNORE_NEW_LINES) as $line) {
    [$name, $token] = explode(' ', $line);
    $tokens[] = (int) $token;
    $holders[$name] = ($holders[$name] ?? 0) + 1;
}
$increasing = true;
for ($i = 1; $i < count($tokens); $i++) {
    if ($tokens[$i] <= $tokens[$i - 1]) {
        $increasing = false;
        echo "not increasing at hold $i: {$tokens[$i - 1]} then {$tokens[$i]}\n";
    }
}
if (getenv('LOCK_TEST_VERBOSE') === '1') {
    echo json_encode(['faults' => $faults, 'calls' => $counts, 'holds' => $holders]), "\n";
}
echo 'faults injected: ', var_export(array_sum($faults) === 16, true), "\n";
echo 'the link failed calls of the process behind it: ', var_export(($counts['proxy']['storage'] ?? 0) > 0, true), "\n";
echo 'both processes held the lock: ', var_export(($holders['proxy'] ?? 0) > 0 && ($holders['direct'] ?? 0) > 0, true), "\n";
echo 'tokens strictly increase in the order of the holds: ', var_export($increasing && count($tokens) > 2, true), "\n";
echo 'the counter is at least the last token: ', var_export(counter('shared') >= max($tokens), true), "\n";
$after = new Lock\Lock('shared', $store, 10.0);
lock_net_expect('after pass: acquire(true, 3.0)', 3.0 + $T, fn () => $after->acquire(true, 3.0));
echo 'and its token is greater than all: ', var_export($after->getFencingToken() > max($tokens), true), "\n";
$after->release();
?>
--EXPECT--
-- an acquisition whose answer was lost
bool(true)
acquire: Lock\StorageException, in time
the server handed out a token nobody saw: true
acquire: returned true, in time
the next token is greater than the lost one: true
-- a re-acquire (a refresh) whose answer is lost, after a reconnect
bool(true)
acquire while held: Lock\StorageException, in time
same token after the failure: true
the next holder's is greater: true
-- two processes, one through the faulty link, one direct, faults at random moments
faults injected: true
the link failed calls of the process behind it: true
both processes held the lock: true
tokens strictly increase in the order of the holds: true
the counter is at least the last token: true
after pass: acquire(true, 3.0): returned true, in time
and its token is greater than all: true
