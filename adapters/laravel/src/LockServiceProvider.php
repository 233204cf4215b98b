<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the `lock-ext` cache driver: a store (config/cache.php) whose locks are the
 * extension's while its other calls go to the configured `cache_store`.
 */
final class LockServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->callAfterResolving('cache', static function (CacheManager $cache, $app): void {
            $cache->extend('lock-ext', function ($app, array $config) use ($cache) {
                // Laravel puts this store's own name in "store".
                $inner = $config['cache_store'] ?? $app['config']['cache.default'];
                if ($inner === null || $inner === ($config['store'] ?? null)) {
                    throw new \InvalidArgumentException(sprintf('The lock-ext cache store [%s] needs a "cache_store" for its other cache calls, other than itself', $config['store'] ?? ''));
                }
                $factory = StoreFactory::create(
                    $config,
                    (array) ($app['config']['database.redis'] ?? []),
                    (string) ($app['config']['cache.prefix'] ?? ''),
                );

                return $cache->repository(new ExtensionStore($cache->store($inner)->getStore(), $factory), $config);
            });
        });
    }
}
