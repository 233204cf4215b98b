<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests\Support;

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Support\Facades\Facade;
use Lock\Adapter\Laravel\LockServiceProvider;
use Lock\Adapter\TestSupport\Env;

/**
 * The part of a Laravel application cache locks use: a container with config/cache.php and
 * config/database.php, the cache manager, the event dispatcher, the facades and our service
 * provider (registered and booted). The default
 * cache store is `locks` (driver lock-ext) over the `array` store.
 */
final class App
{
    /**
     * @param Container|null       $app   the container to set up (a Laravel Application, for artisan); null: a new Container
     * @param array<string, mixed> $locks more settings of the `locks` store (auto_refresh)
     */
    public static function boot(string $kind, ?Container $app = null, array $locks = []): Container
    {
        $port = getenv('LOCK_TEST_REDIS_PORT');
        if ($port === false || $port === '') {
            throw new \RuntimeException('LOCK_TEST_REDIS_PORT is not set: run the suite through adapters/test.sh');
        }
        $locks = $locks + ['driver' => 'lock-ext', 'cache_store' => 'array'] + match ($kind) {
            'redis' => ['connection' => 'locks', 'prefix' => 'lock-adapters-laravel:'],
            'redlock' => ['dsn' => Env::serverDsn('LOCK_TEST_REDLOCK_DSN') . '?prefix=lock-adapters-laravel:'],
            'flock' => ['dsn' => 'flock://' . sys_get_temp_dir() . '/lock-adapters-laravel'],
            'semaphore' => ['dsn' => 'semaphore:'],
            'pgsql' => ['dsn' => Env::serverDsn('LOCK_TEST_PGSQL_DSN') . '?prefix=lock-adapters-laravel:'],
            'mysql' => ['dsn' => Env::serverDsn('LOCK_TEST_MYSQL_DSN') . '?prefix=lock-adapters-laravel:'],
        };

        $app ??= new Container();
        Container::setInstance($app);
        $app->instance('config', new Config([
            'cache' => [
                'default' => 'locks',
                'prefix' => 'lock_adapters_test',
                'stores' => ['array' => ['driver' => 'array'], 'locks' => $locks],
            ],
            'database' => [
                'redis' => [
                    'client' => 'phpredis',
                    'locks' => ['host' => '127.0.0.1', 'port' => (int) $port, 'database' => 0, 'timeout' => 2.0],
                ],
            ],
        ]));
        $app->singleton('cache', static fn ($app) => new CacheManager($app));
        $app->singleton('cache.store', static fn ($app) => $app['cache']->driver());
        $app->alias('cache', \Illuminate\Contracts\Cache\Factory::class);
        $app->alias('cache.store', \Illuminate\Contracts\Cache\Repository::class);
        $app->singleton('events', static fn ($app) => new \Illuminate\Events\Dispatcher($app));
        $provider = new LockServiceProvider($app);
        $provider->register();
        $provider->boot();

        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);

        return $app;
    }
}
