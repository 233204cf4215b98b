--TEST--
combined: a CombinedStore over three Redis servers holds on every server it can and answers by the majority: acquire, refresh, release, isLocked, forceRelease, waitUntilFree, inspect, read holds, cooldowns, restoreLock(), fencing tokens that only grow, a fork's child that leaves its parent's hold alone, and the counters
--EXTENSIONS--
lock
pcntl
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$servers = [new LockTestRedisServer(), new LockTestRedisServer(), new LockTestRedisServer()];
$prefix = lock_test_prefix();
$direct = array_map(fn ($s) => new Lock\Store\RedisStore($s->dsn('prefix=' . urlencode($prefix))), $servers);
$combined = fn () => new Lock\Store\CombinedStore(array_map(fn ($s) => new Lock\Store\RedisStore($s->dsn('prefix=' . urlencode($prefix))), $servers));
$store = $combined();
// Every member connected: a release (forceRelease() here) is written to every server, while a
// take may go on without a server still connecting once a majority answered.
$store->forceRelease('warm-up');
// Which servers hold the resource, once they say $want: a call goes on once a majority
// answered, and what it sent the last server runs when that server reads it.
$held = function (string $r, string $want) use ($direct): string {
    $deadline = microtime(true) + 5.0;
    do {
        $now = implode('', array_map(fn ($d) => $d->isLocked($r) ? '1' : '0', $direct));
    } while ($now !== $want && microtime(true) < $deadline && usleep(10000) === null);
    return $now;
};

echo "-- a hold is on every server\n";
$a = new Lock\Lock('a', $store, 10.0);
var_dump($a->acquire(), $held('a', '111'), $store->isLocked('a'));
$left = $a->getRemainingLifetime();
// The TTL less the clock drift allowance (10 s / 100 + 2 ms) and the time the acquire took.
var_dump($left > 9.0 && $left <= 10.0 - 0.102);
var_dump((new Lock\Lock('a', $combined(), 10.0))->acquire());
var_dump($a->refresh(20.0), $a->getRemainingLifetime() > 19.0, $a->isAcquired());
$info = $store->inspect('a');
var_dump($info['held'], $info['mode'], $info['owners'] === [$a->getOwner()], $info['ttl'] > 19.0, $info['holders']);
$a->release();
var_dump($held('a', '000'), $store->isLocked('a'), $store->inspect('a')['mode']);

echo "-- a majority decides\n";
// A hold on one server of three (somebody's partial take) does not make the resource locked...
$stray = new Lock\Lock('b', $direct[0], 10.0);
$stray->acquire();
var_dump($store->isLocked('b'), $store->inspect('b')['held']);
$b = new Lock\Lock('b', $store, 10.0);
var_dump($b->acquire(), $held('b', '111'));
$b->release();
// ...and two of three do.
$stray2 = new Lock\Lock('b', $direct[1], 10.0);
$stray2->acquire();
var_dump($store->isLocked('b'), $store->inspect('b')['held'], (new Lock\Lock('b', $store, 10.0))->acquire(), $held('b', '110'));
$stray->release();
$stray2->release();

echo "-- gone on a majority: expired\n";
$c = new Lock\Lock('c', $store, 10.0);
$c->acquire();
$direct[0]->forceRelease('c');
var_dump($c->isAcquired(), $c->refresh());
$direct[1]->forceRelease('c');
var_dump($c->isAcquired());
try {
    $c->refresh();
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
$c->acquire();
$direct[1]->forceRelease('c');
$direct[2]->forceRelease('c');
(new Lock\Lock('c', $direct[2], 10.0))->acquire();
try {
    $c->release();
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}

echo "-- forceRelease, waitUntilFree\n";
$d = new Lock\Lock('d', $store, 10.0);
$d->acquire();
var_dump($store->waitUntilFree('d', 0.05));
$store->forceRelease('d');
var_dump($held('d', '000'), $store->waitUntilFree('d', 0.05), $d->isAcquired());

echo "-- read holds\n";
$r1 = new Lock\Lock('r', $store, 10.0);
$r2 = new Lock\Lock('r', $combined(), 10.0);
$w = new Lock\Lock('r', $combined(), 10.0);
var_dump($r1->acquireRead(), $r2->acquireRead(), $w->acquire(), $store->inspect('r')['mode'], count($store->inspect('r')['owners']));
$r1->release();
$r2->release();
var_dump($w->acquire());
$w->release();
// A reader becomes the writer once alone, and goes back to reading.
var_dump($r1->acquireRead(), $r2->acquireRead(), $r1->acquire(), $r1->isAcquired(), $store->inspect('r')['mode']);
$r2->release();
var_dump($r1->acquire(), $store->inspect('r')['mode'], $r2->acquireRead(), $r1->acquireRead(), $r2->acquireRead(),
    $store->inspect('r')['mode']);
$r1->release();
$r2->release();

echo "-- cooldown\n";
$e = new Lock\Lock('e', $store, 10.0);
$e->acquire();
$e->release(0.3);
var_dump($held('e', '111'), $store->inspect('e')['mode'], (new Lock\Lock('e', $store, 10.0))->acquire());
$start = hrtime(true);
$e2 = new Lock\Lock('e', $store, 10.0);
var_dump($e2->acquire(true, 5.0), (hrtime(true) - $start) / 1e9 > 0.2);
$e2->release();

echo "-- restoreLock\n";
$f = new Lock\Lock('f', $store, 10.0);
$f->acquire();
$token = $f->getFencingToken();
$factory = new Lock\Factory($combined(), 10.0);
$g = $factory->restoreLock('f', $f->getOwner(), 30.0);
var_dump($g->refresh(), $g->getFencingToken() > $token, $g->release(), $held('f', '000'));
try {
    $f->release();
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
$h = $factory->restoreLock('f', 'nobody', 10.0);
var_dump($h->isAcquired());

echo "-- fencing tokens only grow\n";
$last = 0;
$grew = true;
for ($i = 0; $i < 6; $i++) {
    $l = new Lock\Lock('t', $i % 2 ? $store : $combined(), 10.0);
    $l->acquire();
    $t = $l->getFencingToken();
    $grew = $grew && $t > $last && $t === $l->getFencingToken() && $store->inspect('t')['fencing'] >= $t;
    $last = $t;
    // A hold taken on two servers only: the token still passes every one before.
    if ($i === 3) {
        $direct[$i % 3]->forceRelease('t');
    }
    $l->release();
}
var_dump($grew);
// A read hold has none, as on one server.
$r1->acquireRead();
var_dump($r1->getFencingToken());
$r1->release();

echo "-- fork\n";
$p = new Lock\Lock('p', $store, 10.0);
$p->acquire();
$pid = pcntl_fork();
if ($pid === 0) {
    $child = new Lock\Lock('p', $store, 10.0);
    $out = [$p->isAcquired() ? 'held' : 'not held', $child->acquire() ? 'took' : 'refused'];
    try {
        $p->release();
        $out[] = 'released';
    } catch (Lock\LockException $e) {
        $out[] = get_class($e);
    }
    file_put_contents(sys_get_temp_dir() . "/lock-combined-fork-$prefix", implode(' ', $out));
    exit(0);
}
pcntl_waitpid($pid, $status);
echo file_get_contents(sys_get_temp_dir() . "/lock-combined-fork-$prefix"), "\n";
unlink(sys_get_temp_dir() . "/lock-combined-fork-$prefix");
var_dump($p->isAcquired(), $held('p', '111'));
$p->release();

echo "-- counters\n";
$stats = Lock\stats()[Lock\Store\CombinedStore::class];
var_dump($stats['acquired'] > 10, $stats['failed'] >= 3, $stats['expired'] >= 2, $stats['refreshed'] >= 2);
?>
--EXPECT--
-- a hold is on every server
bool(true)
string(3) "111"
bool(true)
bool(true)
bool(false)
NULL
bool(true)
bool(true)
bool(true)
string(5) "write"
bool(true)
bool(true)
NULL
string(3) "000"
bool(false)
NULL
-- a majority decides
bool(false)
bool(false)
bool(true)
string(3) "111"
bool(true)
bool(true)
bool(false)
string(3) "110"
-- gone on a majority: expired
bool(true)
NULL
bool(false)
Lock\ExpiredException
Lock\ExpiredException
-- forceRelease, waitUntilFree
bool(false)
string(3) "000"
bool(true)
bool(false)
-- read holds
bool(true)
bool(true)
bool(false)
string(4) "read"
int(2)
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
string(4) "read"
bool(true)
string(5) "write"
bool(false)
bool(true)
bool(true)
string(4) "read"
-- cooldown
string(3) "111"
string(8) "cooldown"
bool(false)
bool(true)
bool(true)
-- restoreLock
NULL
bool(true)
NULL
string(3) "000"
Lock\ExpiredException
bool(false)
-- fencing tokens only grow
bool(true)
NULL
-- fork
not held refused released
bool(true)
string(3) "111"
-- counters
bool(true)
bool(true)
bool(true)
bool(true)
