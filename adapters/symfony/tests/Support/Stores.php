<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use Lock\Store;
use Lock\Store\FlockStore;
use Lock\Store\MysqlStore;
use Lock\Store\PostgresStore;
use Lock\Store\RedisStore;
use Lock\Store\SemaphoreStore;

/** The extension's stores the suite runs on, built the same way in the test and in its child processes. */
final class Stores
{
    public static function create(string $kind, string $prefix = 'lock-adapters-symfony:'): Store
    {
        return match ($kind) {
            'redis' => new RedisStore(self::redisDsn(), ['prefix' => $prefix, 'timeout' => 2.0]),
            // The combined store over three independent Redis servers, as a redlock:// DSN makes it.
            'redlock' => Factory::fromDsn(self::redlockDsn() . '?prefix=' . $prefix . '&timeout=2')->getStore(),
            'flock' => new FlockStore(sys_get_temp_dir() . '/lock-adapters-symfony'),
            'semaphore' => new SemaphoreStore(),
            'pgsql' => new PostgresStore(Env::serverDsn('LOCK_TEST_PGSQL_DSN'), ['prefix' => $prefix]),
            'mysql' => new MysqlStore(Env::serverDsn('LOCK_TEST_MYSQL_DSN'), ['prefix' => $prefix]),
        };
    }

    public static function redisDsn(): string
    {
        $port = getenv('LOCK_TEST_REDIS_PORT');
        if ($port === false || $port === '') {
            throw new \RuntimeException('LOCK_TEST_REDIS_PORT is not set: run the suite through adapters/test.sh');
        }

        return 'redis://127.0.0.1:' . $port;
    }

    /** redlock://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3: the three servers adapters/test.sh started for the combined store. */
    public static function redlockDsn(): string
    {
        return Env::serverDsn('LOCK_TEST_REDLOCK_DSN');
    }

    /** @return list<string> the host:port of each server of redlockDsn() */
    public static function redlockHosts(): array
    {
        return explode(',', strtok(substr(self::redlockDsn(), \strlen('redlock://')), '?/'));
    }
}
