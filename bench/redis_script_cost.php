<?php
/*
 * Where a Redis hand-off's server time goes (run by hand, not a test):
 *   php bench/redis_script_cost.php PORT [ROUNDS]
 * on a redis-server of your own (it changes slowlog settings and deletes the keys
 * {cost}*). Each round sets up a write hold with one live writer queued behind it,
 * then sends the release script that hands it over, exactly as the store sends it
 * (13 keys and the waiter's wake lists), and reads SLOWLOG (threshold 0): the
 * script's time on the server, and the sum of the commands it called. Beside it,
 * the floor's RPUSH and an empty script. Each is run back to back ("warm") and
 * after a pause of 3 ms ("after idle", as a hand-off in the benchmark comes: the
 * holder sleeps before it releases). Needs phpredis and scripts/gen-lua.sh.
 */

$port = (int) ($argv[1] ?? 0);
$rounds = (int) ($argv[2] ?? 200);
if ($port <= 0 || $rounds <= 0) {
    fwrite(STDERR, "usage: php bench/redis_script_cost.php PORT [ROUNDS]\n");
    exit(2);
}
$r = new Redis();
$r->connect('127.0.0.1', $port);
$r->config('SET', 'slowlog-log-slower-than', '0');
$r->config('SET', 'slowlog-max-len', '1024');

$release = shell_exec(escapeshellarg(__DIR__ . '/../scripts/gen-lua.sh') . ' --print release');
if (!is_string($release) || $release === '') {
    fwrite(STDERR, "redis_script_cost: scripts/gen-lua.sh --print release failed\n");
    exit(1);
}
$base = '{cost}';
$keys = [$base];
foreach ([':r', ':q', ':qd', ':h', ':ws', ':p', ':f', ':t', ':m', ':wl', ':fw', ':fl'] as $suffix) {
    $keys[] = $base . $suffix;
}
$ticket = 1000;
$keys[] = "$base:w:$ticket";
$keys[] = "$base:w:" . ($ticket + 1);

/** A write hold of 'A' and the live writer 'B' queued behind it with ticket $ticket. */
$handoff = static function () use ($r, $base, $keys, $ticket): void {
    $r->del($keys);
    $r->multi();
    $r->set($base, 'A', ['PX' => 30000]);
    $r->rPush("$base:q", 'B');
    $r->hSet("$base:qd", 'B', sprintf('%d:30000:w:%d', (int) (microtime(true) * 1000) + 5000, $ticket));
    $r->set("$base:t", (string) ($ticket + 1), ['PX' => 10000]);
    $r->exec();
};
$cases = [
    'release script, hand-off' => [$handoff, static fn () => $r->evalSha(sha1($release), array_merge($keys, ['A', '0', '1']), 15)],
    'empty script' => [null, static fn () => $r->evalSha(sha1('return 1'), [$base], 1)],
    'RPUSH (the floor)' => [null, static fn () => $r->rPush("$base:floor", 't')],
];
$r->script('load', $release);
$r->script('load', 'return 1');

printf("%-26s %-11s %9s %9s %16s %6s\n", '', '', 'p50 us', 'p90 us', 'inner sum p50', 'calls');
foreach ($cases as $name => [$setup, $send]) {
    foreach (['warm' => 0, 'after idle' => 3000] as $how => $idle) {
        $total = [];
        $inner = [];
        $calls = 0;
        for ($i = 0; $i < $rounds; $i++) {
            if ($setup !== null) {
                $setup();
            }
            if ($idle > 0) {
                usleep($idle);
            }
            $r->slowlog('reset');
            $send();
            $sum = 0;
            $calls = 0;
            foreach ($r->slowlog('get', 1024) as $entry) {
                $command = strtolower($entry[3][0]);
                if ($command === 'slowlog') {
                    continue;
                }
                if ($command === 'evalsha' || $setup === null && $command === 'rpush') {
                    $total[] = $entry[2];
                } else {
                    $sum += $entry[2];
                    $calls++;
                }
            }
            $inner[] = $sum;
        }
        sort($total);
        sort($inner);
        $n = count($total);
        printf("%-26s %-11s %9d %9d %16d %6d\n", $name, $how, $total[intdiv($n, 2)], $total[(int) ($n * 0.9)],
            $inner[intdiv($n, 2)], $calls);
    }
}
$r->del(array_merge($keys, ["$base:floor"]));
