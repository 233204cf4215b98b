<?php

// adapters/laravel/tests/app.sh: puts the Laravel README's config/cache.php block, as written
// (its `default` line and its `locks` store), into an application's config/cache.php, then
// stores of the test's own for the process-bound checks.
//
//   php configure.php README.md config/cache.php

declare(strict_types=1);

[, $readme, $file] = $argv;
$text = file_get_contents($readme);
if (!preg_match('/^## Configuration \(`config\/cache.php`\)\n\n```php\n(.*?)^```/ms', $text, $block)
    || !preg_match("/^'default' => .*$/m", $block[1], $default)
    || !preg_match("/^    'locks' => \\[\n.*?^    \\],\n/ms", $block[1], $locks)) {
    fwrite(STDERR, "$readme: no config/cache.php block with a default line and a locks store\n");
    exit(1);
}
$ours = <<<'PHP'
        'locks_flock' => ['driver' => 'lock-ext', 'cache_store' => 'redis', 'dsn' => 'flock://' . storage_path('framework/locks')],
        'locks_pgsql' => ['driver' => 'lock-ext', 'cache_store' => 'redis', 'dsn' => env('LOCK_APP_PGSQL_DSN')],

PHP;
$config = file_get_contents($file);
$config = preg_replace("/^    'default' => .*$/m", '    ' . $default[0], $config, 1, $defaults);
$config = preg_replace("/^    'stores' => \\[\n/m", "\$0\n" . preg_replace('/^/m', '    ', $locks[0]) . $ours, $config, 1, $stores);
if ($defaults !== 1 || $stores !== 1) {
    fwrite(STDERR, "$file: no default line or no stores array\n");
    exit(1);
}
file_put_contents($file, $config);
