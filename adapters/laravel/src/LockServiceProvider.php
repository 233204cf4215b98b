<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Console\Scheduling\EventMutex;
use Illuminate\Console\Scheduling\SchedulingMutex;
use Illuminate\Support\ServiceProvider;
use Lock\Adapter\Laravel\Console\InspectCommand;
use Lock\Adapter\Laravel\Console\ReleaseCommand;

/**
 * Registers the `lock-ext` cache driver: a store (config/cache.php) whose locks are the
 * extension's while its other calls go to the configured `cache_store`; releases the holds a
 * request or job took on a process-bound store (flock, semaphore, PostgreSQL and MySQL session
 * holds) and left held when the framework ends it; and binds the scheduler's mutexes, unless the
 * application binds its own, to Laravel's cache mutexes that refuse what a process-bound store
 * cannot keep (a background event's withoutOverlapping(), onOneServer()). In the console: the
 * commands lock:inspect and lock:release.
 */
final class LockServiceProvider extends ServiceProvider
{
    /** Events (by class name: Octane need not be installed) that begin a request or job. */
    public const BEGIN_EVENTS = [
        'Laravel\\Octane\\Events\\RequestReceived',
        'Laravel\\Octane\\Events\\TaskReceived',
        'Laravel\\Octane\\Events\\TickReceived',
        'Illuminate\\Queue\\Events\\JobProcessing',
    ];

    /**
     * Events that end one. A queue worker and the sync queue end every job they began with
     * JobProcessed or JobExceptionOccurred (JobFailed comes before one of them).
     */
    public const END_EVENTS = [
        'Laravel\\Octane\\Events\\RequestTerminated',
        'Laravel\\Octane\\Events\\TaskTerminated',
        'Laravel\\Octane\\Events\\TickTerminated',
        'Illuminate\\Queue\\Events\\JobProcessed',
        'Illuminate\\Queue\\Events\\JobExceptionOccurred',
    ];

    public function boot(): void
    {
        if (method_exists($this->app, 'runningInConsole') && $this->app->runningInConsole()) {
            $this->commands([InspectCommand::class, ReleaseCommand::class]);
        }
        if (!$this->app->bound('events')) {
            return;
        }
        $events = $this->app->make('events');
        $events->listen(self::BEGIN_EVENTS, static function (): void {
            Holds::begin();
        });
        $events->listen(self::END_EVENTS, static function (): void {
            Holds::end();
        });
    }

    public function register(): void
    {
        $this->app->bindIf(EventMutex::class, ExtensionEventMutex::class);
        $this->app->bindIf(SchedulingMutex::class, ExtensionSchedulingMutex::class);
        $this->callAfterResolving('cache', static function (CacheManager $cache, $app): void {
            $cache->extend('lock-ext', function ($app, array $config) use ($cache) {
                // Laravel puts this store's own name in "store".
                $inner = $config['cache_store'] ?? $app['config']['cache.default'];
                if ($inner === null || $inner === ($config['store'] ?? null)) {
                    throw new \InvalidArgumentException(sprintf('The lock-ext cache store [%s] needs a "cache_store" for its other cache calls, other than itself', $config['store'] ?? ''));
                }
                $autoRefresh = StoreFactory::autoRefresh($config['auto_refresh'] ?? false, (string) ($config['store'] ?? ''));
                $factory = StoreFactory::create(
                    $config,
                    (array) ($app['config']['database.redis'] ?? []),
                    (string) ($app['config']['cache.prefix'] ?? ''),
                );

                return $cache->repository(new ExtensionStore($cache->store($inner)->getStore(), $factory, $autoRefresh), $config);
            });
        });
    }
}
