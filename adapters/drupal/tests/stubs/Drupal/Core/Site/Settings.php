<?php

// Test-only stand-in for Drupal\Core\Site\Settings (Drupal 10.x and 11.x):
// the read-only singleton that settings.php's $settings array becomes, read
// through the static get(). Only what StoreFactory and its tests use.

namespace Drupal\Core\Site;

final class Settings
{
    private static ?Settings $instance = null;

    public function __construct(private array $storage)
    {
        self::$instance = $this;
    }

    public static function get($name, $default = null)
    {
        return self::$instance->storage[$name] ?? $default;
    }

    public static function getInstance()
    {
        return self::$instance;
    }
}
