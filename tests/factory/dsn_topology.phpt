--TEST--
Factory::fromDsn() and RedisStore: rediss:, redis+sentinel: and redis+cluster: DSNs parse (hosts, ports, master, TLS), TLS, replicas, Sentinel and Cluster stores open (connecting on first use)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// Every password below is "hunter2": no message may show it.
$good = [
    'rediss://redis.example:6380',
    'REDISS://[::1]/2?prefix=app:',
    'rediss://u:hunter2@10.0.0.1?tls_verify=0&tls_server_name=redis.example',
    'redis+sentinel://h1:26380,h2,[::1]/mymaster',
    'redis+sentinel://u:hunter2@h1/mymaster/3?sentinel_username=s&sentinel_password=hunter2&timeout=0.5',
    'rediss+sentinel://[fe80::1]:5000/m-1.a_b/',
    'redis+cluster://h1:7000,h2:7001,h3',
    'redis+cluster://:hunter2@node/0?database=0',
    'rediss+cluster://h1:7000,H1:7001?tls_verify=false',
    'redis://127.0.0.1:6379?replicas=1&replicas_timeout=0.25',
    'rediss+cluster://h1?replicas=2',
];
foreach ($good as $dsn) {
    $messages = [];
    foreach ([fn () => Lock\Factory::fromDsn($dsn), fn () => new Lock\Store\RedisStore($dsn)] as $make) {
        try {
            $make();
            $messages[] = 'no exception';
        } catch (Throwable $e) {
            $messages[] = get_class($e) . ': ' . $e->getMessage();
        }
    }
    echo $messages[0], "\n";
    if ($messages[0] !== $messages[1]) {
        echo "  RedisStore differs: $messages[1]\n";
    }
    if (str_contains($messages[0], 'hunter2')) {
        echo "  the message shows a password\n";
    }
}

// The same settings as options; replicas => 0 is what a plain store has, and opens.
lock_test_expect_throw(fn () => new Lock\Store\RedisStore('redis://127.0.0.1:1', ['replicas' => 3, 'replicas_timeout' => 2]));
var_dump(get_class(new Lock\Store\RedisStore('redis://127.0.0.1:1', ['replicas' => 0, 'replicas_timeout' => 2.5])));
lock_test_expect_throw(fn () => new Lock\Store\RedisStore('rediss+sentinel://s1,s2/master', [
    'sentinel_username' => 'sentinel-user', 'sentinel_password' => 'hunter2', 'password' => 'hunter2',
    'tls_verify' => false, 'tls_server_name' => 'redis.internal',
]));
// A plain redis: DSN still opens as it did (nothing is asked of TLS or topology).
var_dump(get_class(Lock\Factory::fromDsn('redis://127.0.0.1:1/1')->getStore()));
?>
--EXPECT--
no exception
no exception
no exception
no exception
no exception
no exception
no exception
no exception
no exception
no exception
no exception
no exception
string(21) "Lock\Store\RedisStore"
no exception
string(21) "Lock\Store\RedisStore"
