--TEST--
faults: a CombinedStore over three Redis servers while one server is killed and restarted empty mid-hold, frozen (SIGSTOP) or 50 ms slow behind a proxy: the majority keeps the hold and answers at its own speed, a second server lost empties it (ExpiredException), a majority frozen is a StorageException within the timeout; fencing tokens grow through it all
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/faults.inc';
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(100);

$servers = [new LockTestRedisServer(), new LockTestRedisServer(), new LockTestRedisServer()];
$prefix = lock_test_prefix();
$timeout = 1.0;
$q = 'prefix=' . urlencode($prefix) . "&timeout=$timeout";
$proxy = new LockTestProxy($servers[2]->port);
$stores = fn (bool $slow) => new Lock\Store\CombinedStore([
    new Lock\Store\RedisStore($servers[0]->dsn($q)),
    new Lock\Store\RedisStore($servers[1]->dsn($q)),
    new Lock\Store\RedisStore($slow ? $proxy->dsn($q) : $servers[2]->dsn($q)),
]);
$store = $stores(false);
$direct = array_map(fn ($s) => new Lock\Store\RedisStore($s->dsn($q)), $servers);
// Which servers hold the resource, once they say $want (see tests/combined/basic.phpt).
$held = function (string $r, string $want) use ($direct): string {
    $deadline = microtime(true) + 5.0;
    do {
        $now = implode('', array_map(fn ($d) => $d->isLocked($r) ? '1' : '0', $direct));
    } while ($now !== $want && microtime(true) < $deadline && usleep(10000) === null);
    return $now;
};
$tokens = [];
// Well inside the 1 s timeout: a call that waited for the unanswering server would take all of it.
$quick = 0.5;

echo "-- restarted empty mid-hold\n";
$a = new Lock\Lock('a', $store, 30.0);
$a->acquire();
$tokens[] = $a->getFencingToken();
$servers[0]->restart();
var_dump($held('a', '011'), $a->isAcquired(), $a->refresh(), (new Lock\Lock('a', $stores(false), 30.0))->acquire());
$servers[1]->restart();
var_dump($a->isAcquired());
lock_fault_call('refresh with two of three emptied', fn () => $a->refresh(), $timeout + LOCK_FAULT_SLACK, ['ExpiredException']);
$b = new Lock\Lock('a', $stores(false), 30.0);
var_dump($b->acquire());
$tokens[] = $b->getFencingToken();
$b->release();

echo "-- one frozen\n";
$c = new Lock\Lock('c', $store, 30.0);
$c->acquire();
$servers[1]->pause();
lock_fault_call('refresh', fn () => $c->refresh(), $quick, ['ok']);
lock_fault_call('isAcquired', fn () => $c->isAcquired(), $quick, ['ok'], true);
lock_fault_call('getFencingToken', function () use ($c, &$tokens) {
    $tokens[] = $c->getFencingToken();
}, $quick, ['ok']);
lock_fault_call('release', fn () => $c->release(), $quick, ['ok']);
lock_fault_call('acquire', fn () => $c->acquire(), $quick, ['ok'], true);
lock_fault_call('release', fn () => $c->release(), $quick, ['ok']);
$servers[0]->pause();
lock_fault_call('acquire, two frozen', fn () => $c->acquire(), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
lock_fault_call('acquire, waiting, two frozen', fn () => $c->acquire(true, 10.0), $timeout + LOCK_FAULT_SLACK, ['StorageException']);
$servers[0]->resume();
$servers[1]->resume();
// What the frozen servers read late is given back, or runs out with the TTL; the others hold nothing.
var_dump($direct[2]->isLocked('c'));
var_dump($c->acquire());
$tokens[] = $c->getFencingToken();
$c->release();

echo "-- one slow\n";
$slow = $stores(true);
$d = new Lock\Lock('d', $slow, 30.0);
var_dump($d->acquire());
$d->release();
$proxy->delay(25, 25);
$start = hrtime(true);
$ok = true;
for ($i = 0; $i < 10; $i++) {
    $ok = $ok && $d->acquire();
    $tokens[] = $d->getFencingToken();
    $d->release();
}
$each = (hrtime(true) - $start) / 1e9 / 10;
echo 'ten cycles: ', var_export($ok, true), "\n";
// The slow server is 50 ms away: a cycle that waited for it would take 100 ms or more.
echo 'each cost the fast majority, not the slow server: ', var_export($each < 0.05, true), "\n";
$proxy->pass();

$sorted = $tokens;
sort($sorted);
echo "tokens grew: ", var_export($sorted === $tokens && count(array_unique($tokens)) === count($tokens), true), "\n";
if ($sorted !== $tokens) { echo implode(" ", $tokens), "\n"; }
?>
--EXPECT--
-- restarted empty mid-hold
string(3) "011"
bool(true)
NULL
bool(false)
bool(false)
refresh with two of three emptied: ExpiredException
bool(true)
-- one frozen
refresh: ok
isAcquired: ok: true
getFencingToken: ok
release: ok
acquire: ok: true
release: ok
acquire, two frozen: StorageException
acquire, waiting, two frozen: StorageException
bool(false)
bool(true)
-- one slow
bool(true)
ten cycles: true
each cost the fast majority, not the slow server: true
tokens grew: true
