<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Console;

use Illuminate\Contracts\Cache\Factory as CacheFactory;
use Illuminate\Contracts\Config\Repository as Config;
use Lock\Adapter\Laravel\ExtensionLock;
use Lock\Adapter\Laravel\ExtensionStore;
use Lock\Store;
use Symfony\Component\Console\Input\InputInterface;

/**
 * What the lock:inspect and lock:release commands share: their input read into the extension's
 * resource and store for a Laravel lock name on a lock-ext cache store.
 *
 * @internal
 */
final class LockStores
{
    public const FORMATS = ['table', 'json'];

    public function __construct(private readonly CacheFactory $cache, private readonly Config $config)
    {
    }

    /**
     * The lock name, the extension's resource for it, the format, the cache store's name and the extension's store.
     *
     * @return array{string, string, string, string, Store}
     *
     * @throws \InvalidArgumentException bad input: an empty name, an unknown format or cache store
     * @throws \LogicException           the cache store is not a lock-ext store, or its store cannot be inspected
     */
    public function read(InputInterface $input): array
    {
        $name = (string) $input->getArgument('name');
        if ($name === '') {
            throw new \InvalidArgumentException('The lock name is empty.');
        }
        $format = (string) $input->getOption('format');
        if (!\in_array($format, self::FORMATS, true)) {
            throw new \InvalidArgumentException(sprintf('Unknown format "%s" (known: %s).', $format, implode(', ', self::FORMATS)));
        }
        $storeName = $input->getOption('store');
        $storeName = $storeName === null || $storeName === '' ? (string) $this->config->get('cache.default') : (string) $storeName;
        if (!\is_array($this->config->get('cache.stores.' . $storeName))) {
            throw new \InvalidArgumentException(sprintf('Cache store [%s] is not defined (config/cache.php).', $storeName));
        }
        $store = $this->cache->store($storeName)->getStore();
        if (!$store instanceof ExtensionStore) {
            throw new \LogicException(sprintf('Cache store [%s] is not a lock-ext store (its driver is %s): its locks are not the lock extension\'s, and cannot be inspected.', $storeName, (string) $this->config->get('cache.stores.' . $storeName . '.driver')));
        }
        $native = $store->getFactory()->getStore();
        if (!method_exists($native, 'inspect')) {
            throw new \LogicException(sprintf('The store of cache store [%s] (%s) cannot be inspected: it has no inspect().', $storeName, get_debug_type($native)));
        }

        return [$name, ExtensionLock::resource($name), $format, $storeName, $native];
    }
}
