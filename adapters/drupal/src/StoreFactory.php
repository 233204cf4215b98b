<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

use Lock\Factory;

/**
 * Builds the extension's factory from settings.php:
 *
 * ```php
 * $settings['lock_ext'] = [
 *     'dsn' => 'redis://127.0.0.1:6379?prefix=mysite:',   // any DSN of Lock\Factory::fromDsn()
 * ];
 * ```
 */
final class StoreFactory
{
    private const KEYS = ['dsn'];

    /**
     * @param array|object $settings Drupal's Settings (the `settings` service) or
     *                               the array under $settings['lock_ext']
     */
    public static function fromSettings(#[\SensitiveParameter] array|object $settings): Factory
    {
        $config = is_array($settings) ? $settings : $settings->get('lock_ext');
        if (!is_array($config)) {
            throw new \ValueError("\$settings['lock_ext'] must be an array with a 'dsn' key: set it in settings.php");
        }
        $unknown = array_diff(array_keys($config), self::KEYS);
        if ($unknown !== []) {
            throw new \ValueError(sprintf("\$settings['lock_ext'] has unknown key '%s'; it takes: %s", reset($unknown), implode(', ', self::KEYS)));
        }
        if (!isset($config['dsn'])) {
            throw new \ValueError("\$settings['lock_ext']['dsn'] is missing: the DSN of the lock store, e.g. 'redis://127.0.0.1:6379?prefix=mysite:'");
        }
        if (!is_string($config['dsn'])) {
            throw new \TypeError(sprintf("\$settings['lock_ext']['dsn'] must be a string, %s given", get_debug_type($config['dsn'])));
        }

        return Factory::fromDsn($config['dsn']);
    }
}
