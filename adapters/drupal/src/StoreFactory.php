<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

use Lock\Factory;

/**
 * Builds the extension's factory, and the `lock` and `lock.persistent` services over it, from
 * settings.php:
 *
 * ```php
 * $settings['lock_ext'] = [
 *     'dsn' => 'redis://127.0.0.1:6379?prefix=mysite:',   // any DSN of Lock\Factory::fromDsn()
 *     'auto_refresh' => true,                             // optional: true, false or a bound in seconds
 * ];
 * ```
 */
final class StoreFactory
{
    private const KEYS = ['dsn', 'auto_refresh'];

    /**
     * @param array|object $settings Drupal's Settings (the `settings` service) or
     *                               the array under $settings['lock_ext']
     */
    public static function fromSettings(#[\SensitiveParameter] array|object $settings): Factory
    {
        $config = self::config($settings);
        if (!isset($config['dsn'])) {
            throw new \ValueError("\$settings['lock_ext']['dsn'] is missing: the DSN of the lock store, e.g. 'redis://127.0.0.1:6379?prefix=mysite:'");
        }
        if (!is_string($config['dsn'])) {
            throw new \TypeError(sprintf("\$settings['lock_ext']['dsn'] must be a string, %s given", get_debug_type($config['dsn'])));
        }

        return Factory::fromDsn($config['dsn']);
    }

    /**
     * $settings['lock_ext']['auto_refresh']: false (or absent, null) for none; true to refresh a hold
     * while its service holds it; a positive number of seconds to refresh it for at most that long.
     *
     * @param array|object $settings as for fromSettings()
     *
     * @throws \TypeError  for a value that is neither a bool nor a number
     * @throws \ValueError for a number that is not positive and finite
     */
    public static function autoRefresh(#[\SensitiveParameter] array|object $settings): bool|float
    {
        $value = self::config($settings)['auto_refresh'] ?? false;
        if (is_bool($value)) {
            return $value;
        }
        if (!is_int($value) && !is_float($value)) {
            throw new \TypeError(sprintf("\$settings['lock_ext']['auto_refresh'] must be true, false or a positive number of seconds, %s given", get_debug_type($value)));
        }
        if (!($value > 0 && is_finite((float) $value))) {
            throw new \ValueError(sprintf("\$settings['lock_ext']['auto_refresh'] must be true, false or a positive number of seconds (how long a hold may be refreshed), %s given", var_export($value, true)));
        }

        return (float) $value;
    }

    /** The `lock` service: a LockBackend over $factory, with the settings' auto_refresh. */
    public static function lockBackend(Factory $factory, #[\SensitiveParameter] array|object $settings): LockBackend
    {
        return new LockBackend($factory, self::autoRefresh($settings));
    }

    /**
     * The `lock.persistent` service: a PersistentLockBackend over $factory, owning its holds as
     * $lockId, with the settings' auto_refresh.
     */
    public static function persistentLockBackend(Factory $factory, #[\SensitiveParameter] array|object $settings, string $lockId = 'persistent'): PersistentLockBackend
    {
        return new PersistentLockBackend($factory, $lockId, self::autoRefresh($settings));
    }

    /** $settings['lock_ext'], its keys checked. */
    private static function config(#[\SensitiveParameter] array|object $settings): array
    {
        $config = is_array($settings) ? $settings : $settings->get('lock_ext');
        if (!is_array($config)) {
            throw new \ValueError("\$settings['lock_ext'] must be an array with a 'dsn' key: set it in settings.php");
        }
        $unknown = array_diff(array_keys($config), self::KEYS);
        if ($unknown !== []) {
            throw new \ValueError(sprintf("\$settings['lock_ext'] has unknown key '%s'; it takes: %s", reset($unknown), implode(', ', self::KEYS)));
        }

        return $config;
    }
}
