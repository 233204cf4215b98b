--TEST--
network: request end behind a black-holed Redis costs one timeout per store, not one per hold; the holds of another, reachable store are still released
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(60);

$T = 0.3;
$N = 6;
$server = new LockTestRedisServer();
$direct = $server->client();
$proxy = new LockTestProxy($server->port);
$prefix = lock_test_prefix();
lock_net_load_scripts(new Lock\Store\RedisStore($server->dsn(), ['prefix' => $prefix]));

// A process holding $N locks through the proxy and 2 on a direct store, with autoRelease: request end releases them.
$code = '[$proxied, $direct, $prefix, $T, $N] = ' . var_export([$proxy->dsn(), $server->dsn(), $prefix, $T, $N], true) . ";\n"
    . <<<'PHP'
$far = new Lock\Store\RedisStore($proxied, ['prefix' => $prefix, 'timeout' => $T]);
$near = new Lock\Store\RedisStore($direct, ['prefix' => $prefix, 'timeout' => $T]);
$locks = [];
for ($i = 0; $i < $N; $i++) {
    $locks[] = $l = new Lock\Lock("far-$i", $far, 30.0);
    $l->acquire() or exit(1);
}
for ($i = 0; $i < 2; $i++) {
    $locks[] = $l = new Lock\Lock("near-$i", $near, 30.0);
    $l->acquire() or exit(1);
}
$GLOBALS['kept'] = $locks;
echo "held\n";
fgets(STDIN);
PHP;
$child = new LockTestChild($code);
$child->waitFor('held');
$proxy->blackhole();
$start = hrtime(true);
$child->send('end');
$child->wait(30.0);
$took = (hrtime(true) - $start) / 1e9;
$proxy->pass();
$limit = $T + 0.3;
printf("request end behind the black hole took one timeout (+ 300 ms): %s\n",
    $took <= $limit ? 'true' : sprintf('false (%.3f s > %.3f s)', $took, $limit));
echo 'exit code: ', $child->exitCode(), "\n";
echo 'the reachable store\'s holds released: ', var_export(!$direct->cmd('EXISTS', $prefix . '{near-0}') && !$direct->cmd('EXISTS', $prefix . '{near-1}'), true), "\n";
$far = 0;
for ($i = 0; $i < $N; $i++) {
    $far += $direct->cmd('EXISTS', $prefix . "{far-$i}");
}
echo "holds behind the black hole that live out their TTL: at least ", $N - 1, ': ', var_export($far >= $N - 1, true), "\n";
?>
--EXPECT--
request end behind the black hole took one timeout (+ 300 ms): true
exit code: 0
the reachable store's holds released: true
holds behind the black hole that live out their TTL: at least 5: true
