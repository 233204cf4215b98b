<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Factory;
use Lock\Store\RedisStore;

/**
 * The extension's store for a `lock-ext` cache store's configuration: a `dsn`, or a Redis
 * `connection` of config/database.php (its host, port or socket, TLS scheme, username,
 * password, database, timeout and persistence).
 */
final class StoreFactory
{
    /**
     * @param array<string, mixed> $config   the cache store's entry of config/cache.php
     * @param array<string, mixed> $database the `redis` entry of config/database.php
     */
    public static function create(array $config, array $database = [], string $cachePrefix = ''): Factory
    {
        if (!\extension_loaded('lock')) {
            throw new \RuntimeException(sprintf(
                'The lock-ext cache store needs the lock extension, which this PHP (%s, %s) has not loaded: load the lock extension (extension=lock in php.ini), for the web server\'s PHP and the command line\'s',
                PHP_BINARY,
                php_ini_loaded_file() ?: 'no php.ini',
            ));
        }
        if (isset($config['dsn'])) {
            return Factory::fromDsn((string) $config['dsn']);
        }
        $name = (string) ($config['connection'] ?? 'default');
        $connection = $database[$name] ?? null;
        if (!\is_array($connection)) {
            throw new \InvalidArgumentException(sprintf('The lock-ext cache store needs a "dsn" or the "connection" of a Redis connection in config/database.php: Redis connection [%s] is not configured', $name));
        }
        $prefix = $config['prefix'] ?? ($cachePrefix !== '' ? $cachePrefix . ':lock:' : 'lock:');

        return new Factory(new RedisStore(self::dsn($connection), self::options($connection, (string) $prefix)));
    }

    /**
     * A `lock-ext` store's `auto_refresh`: false (or absent, null) for none, true while a lock
     * object holds, or a number of seconds (a numeric string too, as env() gives it) bounding how
     * long the refreshing of one hold goes on.
     *
     * @param string $store the cache store's name, for the message
     *
     * @throws \InvalidArgumentException for anything else: negative, zero, NAN, INF, another type
     */
    public static function autoRefresh(mixed $value, string $store = ''): bool|float
    {
        if ($value === null || \is_bool($value)) {
            return $value ?? false;
        }
        if (\is_int($value) || \is_float($value) || \is_string($value) && is_numeric($value)) {
            $seconds = (float) $value;
            if ($seconds > 0.0 && is_finite($seconds)) {
                return $seconds;
            }
        }
        throw new \InvalidArgumentException(sprintf(
            'The lock-ext cache store [%s]: "auto_refresh" must be true, false or a positive number of seconds (how long the refreshing of a hold may go on), %s given',
            $store,
            \is_scalar($value) ? var_export($value, true) : get_debug_type($value),
        ));
    }

    /** @param array<string, mixed> $connection */
    private static function dsn(array $connection): string
    {
        if (!empty($connection['url'])) {
            $url = parse_url((string) $connection['url']);
            if ($url === false || !isset($url['scheme'])) {
                throw new \InvalidArgumentException('The Redis connection\'s "url" is not a URL');
            }
            $connection = array_merge($connection, array_filter([
                'scheme' => $url['scheme'] === 'rediss' || $url['scheme'] === 'tls' ? 'tls' : 'tcp',
                'host' => $url['host'] ?? null,
                'port' => $url['port'] ?? null,
                'username' => isset($url['user']) ? rawurldecode($url['user']) : null,
                'password' => isset($url['pass']) ? rawurldecode($url['pass']) : null,
                'database' => isset($url['path']) && trim($url['path'], '/') !== '' ? (int) trim($url['path'], '/') : null,
            ], static fn ($v) => $v !== null));
        }
        $host = (string) ($connection['host'] ?? '127.0.0.1');
        $scheme = (string) ($connection['scheme'] ?? 'tcp');
        if ($scheme === 'unix' || str_starts_with($host, '/')) {
            return 'redis://' . ($host[0] === '/' ? '' : '/') . $host;
        }
        $port = (int) ($connection['port'] ?? 6379);
        if (str_contains($host, ':')) {
            $host = '[' . trim($host, '[]') . ']';
        }

        return ($scheme === 'tls' || $scheme === 'rediss' ? 'rediss' : 'redis') . '://' . $host . ':' . $port;
    }

    /**
     * @param array<string, mixed> $connection
     * @return array<string, mixed>
     */
    private static function options(array $connection, string $prefix): array
    {
        $options = ['prefix' => $prefix];
        if (($connection['username'] ?? null) !== null && $connection['username'] !== '') {
            $options['username'] = (string) $connection['username'];
        }
        if (($connection['password'] ?? null) !== null && $connection['password'] !== '') {
            $options['password'] = (string) $connection['password'];
        }
        if (isset($connection['database'])) {
            $options['database'] = (int) $connection['database'];
        }
        if (isset($connection['timeout']) && (float) $connection['timeout'] > 0) {
            $options['timeout'] = (float) $connection['timeout'];
        }
        if (!empty($connection['persistent'])) {
            $options['persistent'] = true;
        }

        return $options;
    }
}
