<?php
/*
 * What RedisStore::inspect() costs (run by hand, phpredis to set up):
 *   php -d extension=modules/lock.so bench/redis_inspect.php PORT [WAITERS]
 * on a redis-server of your own (it deletes the keys {insp}*): a write hold with WAITERS
 * (100) live waiters queued behind it, then 1,000 inspect() calls; prints the p50 and
 * p99 of a call and the server's time for the script (INFO commandstats).
 */
$port = (int) ($argv[1] ?? 0);
$waiters = (int) ($argv[2] ?? 100);
if ($port <= 0 || $waiters < 0) {
    fwrite(STDERR, "usage: php bench/redis_inspect.php PORT [WAITERS]\n");
    exit(2);
}
$r = new Redis();
$r->connect('127.0.0.1', $port);
$base = '{insp}';
$r->del([$base, "$base:q", "$base:qd", "$base:r", "$base:f"]);
$r->set($base, 'holder', ['PX' => 600000]);
$deadline = (int) (microtime(true) * 1000) + 600000;
for ($i = 1; $i <= $waiters; $i++) {
    $r->rPush("$base:q", "waiter-$i");
    $r->hSet("$base:qd", "waiter-$i", "$deadline:30000:w:$i");
}
$store = new Lock\Store\RedisStore("redis://127.0.0.1:$port");
$a = $store->inspect('insp');
if ($a['waiters'] !== $waiters || $a['owners'] !== ['holder']) {
    fwrite(STDERR, "redis_inspect: unexpected answer\n");
    exit(1);
}
$r->rawCommand('CONFIG', 'RESETSTAT');
$times = [];
for ($i = 0; $i < 1000; $i++) {
    $t = hrtime(true);
    $store->inspect('insp');
    $times[] = hrtime(true) - $t;
}
sort($times);
preg_match('/cmdstat_evalsha:calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/', $r->rawCommand('INFO', 'commandstats'), $m);
printf("inspect() with %d waiters: p50 %.3f ms, p99 %.3f ms; on the server %s us a call (%s calls)\n",
    $waiters, $times[500] / 1e6, $times[990] / 1e6, $m[2] ?? '?', $m[1] ?? '?');
$r->del([$base, "$base:q", "$base:qd"]);
