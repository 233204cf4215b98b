<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Contracts\Cache\Factory as CacheFactory;
use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\Store;
use Lock\Factory;

/**
 * A cache store whose locks are the extension's, while every other cache call goes to the
 * application's configured store.
 */
final class ExtensionStore implements Store, LockProvider
{
    private readonly bool|float $autoRefresh;

    /**
     * @param bool|float $autoRefresh the store's `auto_refresh`: the extension refreshes a hold with
     *                                a TTL while its lock object holds (true), for at most that many
     *                                seconds (a float); false: never (ExtensionLock says what is covered)
     *
     * @throws \InvalidArgumentException for an $autoRefresh that is not true, false or a positive number
     */
    public function __construct(private readonly Store $store, private readonly Factory $factory, bool|float $autoRefresh = false)
    {
        $this->autoRefresh = StoreFactory::autoRefresh($autoRefresh);
    }

    /** A lock for $name held $seconds (0: no expiry), under $owner (null: the extension's own random token). */
    public function lock($name, $seconds = 0, $owner = null): ExtensionLock
    {
        return new ExtensionLock($this->factory, (string) $name, $seconds, $owner, false, $this->autoRefresh);
    }

    /** Adopts the hold $owner took on $name, in this or (on stores whose holds outlive a process) another process. */
    public function restoreLock($name, $owner): ExtensionLock
    {
        return new ExtensionLock($this->factory, (string) $name, 0, (string) $owner, true, $this->autoRefresh);
    }

    public function getFactory(): Factory
    {
        return $this->factory;
    }

    /** The store's `auto_refresh`: false, true, or the bound in seconds. */
    public function getAutoRefresh(): bool|float
    {
        return $this->autoRefresh;
    }

    /** Whether the extension's store binds a hold to its process (it cannot expire): flock, semaphore, PostgreSQL and MySQL session holds. */
    public function isProcessBound(): bool
    {
        return $this->factory->getStore()->supports(\Lock\Store::PROCESS_BOUND);
    }

    /**
     * The name under which $cache knows the store $store (null: the default one), for messages.
     *
     * @internal
     */
    public static function nameIn(CacheFactory $cache, ?string $store): string
    {
        return $store ?? (method_exists($cache, 'getDefaultDriver') ? (string) $cache->getDefaultDriver() : 'default');
    }

    /** The store the other cache calls go to. */
    public function getStore(): Store
    {
        return $this->store;
    }

    public function get($key)
    {
        return $this->store->get($key);
    }

    public function many(array $keys)
    {
        return $this->store->many($keys);
    }

    public function put($key, $value, $seconds)
    {
        return $this->store->put($key, $value, $seconds);
    }

    public function putMany(array $values, $seconds)
    {
        return $this->store->putMany($values, $seconds);
    }

    public function increment($key, $value = 1)
    {
        return $this->store->increment($key, $value);
    }

    public function decrement($key, $value = 1)
    {
        return $this->store->decrement($key, $value);
    }

    public function forever($key, $value)
    {
        return $this->store->forever($key, $value);
    }

    public function forget($key)
    {
        return $this->store->forget($key);
    }

    public function flush()
    {
        return $this->store->flush();
    }

    public function getPrefix()
    {
        return $this->store->getPrefix();
    }

    /** Laravel 13's Store::touch(): a new expiry for a cached item (Cache::touch()). */
    public function touch($key, $seconds)
    {
        return $this->store->touch($key, $seconds);
    }

    /** Methods of newer Store contracts and of the store's own class (add(), ...). */
    public function __call(string $method, array $arguments): mixed
    {
        return $this->store->{$method}(...$arguments);
    }
}
