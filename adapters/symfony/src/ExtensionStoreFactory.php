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
 * Symfony's own store. The DSN's query may also hold the store's own "auto_refresh" (true, false
 * or a bound in seconds: ExtensionStore's $autoRefresh), which the extension's DSN does not take.
 */
final class ExtensionStoreFactory
{
    /** What marks a DSN of the extension in framework.lock. */
    public const PREFIX = 'lock:';

    /** The query parameter of ExtensionStore's $autoRefresh. */
    public const AUTO_REFRESH = 'auto_refresh';

    /**
     * @throws \LogicException when the DSN is the extension's and the extension is not loaded
     * @throws \ValueError     when the extension refuses the DSN (its message names what is wrong), or auto_refresh is bad
     */
    public static function createStore(#[\SensitiveParameter] object|string $connection, ?LoggerInterface $logger = null): PersistingStoreInterface
    {
        if (!\is_string($connection) || !str_starts_with($connection, self::PREFIX)) {
            return StoreFactory::createStore($connection);
        }
        if (!\extension_loaded('lock')) {
            throw new \LogicException(self::notLoaded('framework.lock names a store of the lock extension ("lock:..." DSN)'));
        }

        [$dsn, $autoRefresh] = self::autoRefresh(substr($connection, \strlen(self::PREFIX)));
        $store = new ExtensionStore(Factory::fromDsn($dsn)->getStore(), autoRefresh: $autoRefresh);
        if ($logger !== null) {
            $store->setLogger($logger);
        }

        return $store;
    }

    /**
     * The extension's DSN without auto_refresh, and auto_refresh's value: "true", "false" or a
     * positive number of seconds. "1" and "0" are refused as ambiguous (one second, or on and off?).
     *
     * @return array{string, bool|float}
     *
     * @throws \ValueError for another value
     */
    private static function autoRefresh(#[\SensitiveParameter] string $dsn): array
    {
        $at = strpos($dsn, '?');
        if ($at === false) {
            return [$dsn, false];
        }
        $kept = [];
        $value = null;
        foreach (explode('&', substr($dsn, $at + 1)) as $parameter) {
            [$name, $given] = explode('=', $parameter, 2) + [1 => ''];
            if (rawurldecode($name) === self::AUTO_REFRESH) {
                $value = rawurldecode($given);
            } else {
                $kept[] = $parameter;
            }
        }
        $dsn = substr($dsn, 0, $at) . ($kept === [] ? '' : '?' . implode('&', $kept));

        return match (true) {
            $value === null, $value === 'false' => [$dsn, false],
            $value === 'true' => [$dsn, true],
            $value === '0', $value === '1' => throw new \ValueError(sprintf('The lock: DSN\'s %s=%s is ambiguous: write %1$s=%s, or a bound in seconds such as %1$s=3600', self::AUTO_REFRESH, $value, $value === '1' ? 'true' : 'false')),
            is_numeric($value) && (float) $value > 0.0 && is_finite((float) $value) => [$dsn, (float) $value],
            default => throw new \ValueError(sprintf('The lock: DSN\'s %s must be true, false or a positive number of seconds (how long a hold may be refreshed), "%s" given', self::AUTO_REFRESH, $value)),
        };
    }

    /** The message for a PHP without the extension: what needs it, and how to load it. */
    public static function notLoaded(string $what): string
    {
        return sprintf('%s, but the lock extension is not loaded in this PHP (SAPI %s): load it with extension=lock in its php.ini (php --ri lock shows whether the CLI has it; restart php-fpm after the change).', $what, \PHP_SAPI);
    }
}
