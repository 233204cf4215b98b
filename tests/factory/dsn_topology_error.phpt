--TEST--
Factory::fromDsn() and RedisStore: bad rediss:, redis+sentinel: and redis+cluster: DSNs are a ValueError naming what is wrong, never the password
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// Every password below is "hunter2": no message may show it.
$bad = [
    // Schemes mixed, or one that is not known.
    'redis+sentinel+cluster://u:hunter2@h1,h2/mymaster',
    'rediss+cluster+sentinel://h1',
    'redis+redlock://h1',
    'redisss://h1',
    'redisx://h1',
    // A host list on a single-server scheme; TLS over a unix socket.
    'redis://u:hunter2@h1:6379,h2:6379',
    'rediss://h1,h2',
    'rediss:///run/redis.sock',
    'rediss://',
    // Sentinel: no sentinel, no master, a bad master name or database.
    'redis+sentinel:///mymaster',
    'redis+sentinel://:hunter2@:26379/mymaster',
    'redis+sentinel://h1,h2',
    'redis+sentinel://h1,h2/',
    'rediss+sentinel://h1//0',
    'redis+sentinel://h1/my%20master',
    'redis+sentinel://h1/mymaster/x',
    'redis+sentinel://h1/mymaster/1/2',
    // Cluster: no node, a database other than 0.
    'redis+cluster://',
    'rediss+cluster:///run/redis.sock',
    'redis+cluster://h1:7000,h2:7001/3',
    'redis+cluster://h1/db',
    'redis+cluster://h1?database=2',
    // Host lists: empty elements, bad ports, a port without a host, IPv6 without brackets, repeats.
    'redis+cluster://h1,',
    'redis+cluster://,h1',
    'redis+sentinel://h1,,h2/mymaster',
    'redis+cluster://h1,h2:0',
    'redis+cluster://h1:65536,h2',
    'redis+cluster://h1,h2:',
    'redis+cluster://h1,:7000',
    'redis+cluster://h1,::1',
    'redis+cluster://h1,[::1',
    'redis+sentinel://u:hunter2@h1,H1:26379/mymaster',
    'redis+cluster://[::1]:7000,h2,[::1]:7000',
];
foreach ($bad as $dsn) {
    foreach ([fn () => Lock\Factory::fromDsn($dsn), fn () => new Lock\Store\RedisStore($dsn)] as $i => $make) {
        try {
            $make();
            echo "$dsn: no exception\n";
        } catch (Throwable $e) {
            if (str_contains($e->getMessage(), 'hunter2')) {
                echo "$dsn: the message shows the password\n";
            }
            // Both ways say the same after their argument prefix; show it once.
            if ($i === 0) {
                lock_test_print_exception($e);
            } else {
                echo get_class($e) === 'ValueError' && str_starts_with($e->getMessage(), 'Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) ')
                    ? '' : 'RedisStore: ' . get_class($e) . ': ' . $e->getMessage() . "\n";
            }
        }
    }
}
?>
--EXPECT--
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel+cluster DSN mixes topologies or names an unknown one: expected the scheme redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss+cluster+sentinel DSN mixes topologies or names an unknown one: expected the scheme redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+redlock DSN mixes topologies or names an unknown one: expected the scheme redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown scheme "redisss" (expected flock:, semaphore:, redis:, rediss:, redis+sentinel:, rediss+sentinel:, redis+cluster:, rediss+cluster:, redlock:, pgsql:, mysql: or memcached:)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) has unknown scheme "redisx" (expected flock:, semaphore:, redis:, rediss:, redis+sentinel:, rediss+sentinel:, redis+cluster:, rediss+cluster:, redlock:, pgsql:, mysql: or memcached:)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis DSN names several hosts: a list of hosts needs redis+sentinel: or redis+cluster: (several independent masters: redlock:)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss DSN names several hosts: a list of hosts needs rediss+sentinel: or rediss+cluster: (several independent masters: redlock:)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss DSN names a unix socket, which Redis does not serve over TLS: use redis: for the socket
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss DSN names no host and no unix socket path
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN names no host: write redis+sentinel://h1:26379,h2,h3/mymaster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN names no host: write redis+sentinel://h1:26379,h2,h3/mymaster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN names no master: write redis+sentinel://h1:26379,h2,h3/mymaster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN names no master: write redis+sentinel://h1:26379,h2,h3/mymaster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss+sentinel DSN names no master: write rediss+sentinel://h1:26379,h2,h3/mymaster
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN has a master name with a space, a control byte or a non-ASCII byte at offset 2 of it
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN has a path after the master name that is not a database number (0 to 999999999)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN has a path after the master name that is not a database number (0 to 999999999)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN names no host: write redis+cluster://h1:7000,h2:7001
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: rediss+cluster DSN names no host: write rediss+cluster://h1:7000,h2:7001
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN selects a database other than 0, and Redis Cluster has database 0 only
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN has a path that is not a database number (0 to 999999999)
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) query parameter "database" must be 0: Redis Cluster has database 0 only
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 is empty: separate the hosts with single commas
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 1 is empty: separate the hosts with single commas
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN's host 2 is empty: separate the hosts with single commas
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 has an invalid port at offset 3: expected a number from 1 to 65535
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 1 has an invalid port at offset 3: expected a number from 1 to 65535
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 has an empty port at offset 3: expected a number from 1 to 65535
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 has a port but no host name or address
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 has more than one ':' in the host at offset 0: write an IPv6 address in brackets
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 2 has an IPv6 address without its closing ']' at offset 0
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+sentinel DSN's host 2 repeats host 1: name each server once
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) is not a valid DSN: redis+cluster DSN's host 3 repeats host 1: name each server once
