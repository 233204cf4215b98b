<?php

declare(strict_types=1);

$autoload = getenv('LOCK_TEST_AUTOLOAD') ?: __DIR__ . '/../../.vendor/drupal/vendor/autoload.php';
define('AUTOLOAD_FILE', $autoload);
// Drush's stand-ins (tests/stubs/Drush) beside run.sh's autoloading of Drupal's.
(require $autoload)->addPsr4('Drush\\', __DIR__ . '/stubs/Drush/');

if (!extension_loaded('lock')) {
    fwrite(STDERR, "the lock extension is not loaded: run the tests through tests/run.sh\n");
    exit(1);
}
