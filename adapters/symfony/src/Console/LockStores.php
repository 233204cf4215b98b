<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Console;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Store;
use Psr\Container\ContainerInterface;
use Symfony\Component\Console\Input\InputInterface;

/**
 * The stores of framework.lock's resources (lock.<resource>.factory), by resource name, for the
 * lock:inspect and lock:release commands; and what those commands share: reading their input.
 *
 * @internal
 */
final class LockStores
{
    public const FORMATS = ['table', 'json'];

    /** @param ContainerInterface $stores the Symfony store of each framework.lock resource, by resource name */
    public function __construct(private readonly ContainerInterface $stores)
    {
    }

    /**
     * The lock name, the format and the extension's store the input names.
     *
     * @return array{string, string, Store}
     *
     * @throws \InvalidArgumentException bad input: an empty name, an unknown format or resource
     * @throws \LogicException           the resource's store is not one the commands can inspect
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

        return [$name, $format, $this->get((string) $input->getOption('store'))];
    }

    /** The extension's store behind framework.lock's resource $resource. */
    private function get(string $resource): Store
    {
        if (!$this->stores->has($resource)) {
            throw new \InvalidArgumentException(sprintf('framework.lock has no resource "%s" (no service lock.%s.factory).', $resource, $resource));
        }
        $store = $this->stores->get($resource);
        if (!$store instanceof ExtensionStore) {
            throw new \LogicException(sprintf('The store of framework.lock\'s resource "%s" is %s, not the lock extension\'s (a "lock:" DSN): it cannot be inspected.', $resource, get_debug_type($store)));
        }
        $native = $store->getStore();
        if (!method_exists($native, 'inspect')) {
            throw new \LogicException(sprintf('The store of framework.lock\'s resource "%s" (%s) cannot be inspected: it has no inspect().', $resource, get_debug_type($native)));
        }

        return $native;
    }
}
