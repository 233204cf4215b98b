<?php

declare(strict_types=1);

// adapters/test.sh runs PHPUnit from the Composer install it made; its autoloader is loaded already.
if (!extension_loaded('lock')) {
    fwrite(STDERR, "The lock extension is not loaded: run the suite through adapters/test.sh\n");
    exit(1);
}
