<?php

declare(strict_types=1);

$autoload = getenv('LOCK_TEST_AUTOLOAD') ?: __DIR__ . '/../../.vendor/yii2/vendor/autoload.php';
define('AUTOLOAD_FILE', $autoload);
require $autoload;
require_once __DIR__ . '/stubs/Yii.php';

if (!extension_loaded('lock')) {
    fwrite(STDERR, "the lock extension is not loaded: run the tests through tests/run.sh\n");
    exit(1);
}
