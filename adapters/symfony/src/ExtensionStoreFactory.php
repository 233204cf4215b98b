<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony;

use Lock\Factory;
use Psr\Log\LoggerInterface;
use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * Builds the stores of framework.lock (LockSymfonyBundle makes FrameworkBundle call it where it
 * calls Symfony's StoreFactory): "lock:" followed by a DSN of the extension, as
 * Lock\Factory::fromDsn() takes it ("lock:redis://127.0.0.1:6379?prefix=app:", "lock:flock:"),
 * is an ExtensionStore over that store of the extension, logging to $logger; anything else is
 * Symfony's own store.
 */
final class ExtensionStoreFactory
{
    /** What marks a DSN of the extension in framework.lock. */
    public const PREFIX = 'lock:';

    /**
     * @throws \LogicException when the DSN is the extension's and the extension is not loaded
     * @throws \ValueError     when the extension refuses the DSN (its message names what is wrong)
     */
    public static function createStore(#[\SensitiveParameter] object|string $connection, ?LoggerInterface $logger = null): PersistingStoreInterface
    {
        if (!\is_string($connection) || !str_starts_with($connection, self::PREFIX)) {
            return StoreFactory::createStore($connection);
        }
        if (!\extension_loaded('lock')) {
            throw new \LogicException(self::notLoaded('framework.lock names a store of the lock extension ("lock:..." DSN)'));
        }

        $store = new ExtensionStore(Factory::fromDsn(substr($connection, \strlen(self::PREFIX)))->getStore());
        if ($logger !== null) {
            $store->setLogger($logger);
        }

        return $store;
    }

    /** The message for a PHP without the extension: what needs it, and how to load it. */
    public static function notLoaded(string $what): string
    {
        return sprintf('%s, but the lock extension is not loaded in this PHP (SAPI %s): load it with extension=lock in its php.ini (php --ri lock shows whether the CLI has it; restart php-fpm after the change).', $what, \PHP_SAPI);
    }
}
