<?php

declare(strict_types=1);

/*
 * A stand-in for Symfony Flex's recipe server, for tests/app.sh where that server is out of reach
 * (php -S 127.0.0.1:PORT flex-endpoint.php, and SYMFONY_ENDPOINT=http://127.0.0.1:PORT for Composer).
 * It answers Flex's "legacy endpoint" requests: versions.json, aliases.json and /p/<packages>,
 * with recipes of its own for the packages whose recipes a symfony/skeleton application and this
 * adapter's install run into: Flex (.env), FrameworkBundle (the kernel, config/, .env, cache:clear after every
 * Composer run), Console (bin/console) and Lock (config/packages/lock.yaml, LOCK_DSN in .env).
 * They lay out the files those packages' recipes lay out, minimal; any other package gets none,
 * as this adapter gets none from Symfony's server (Flex then registers its bundle by itself).
 */

$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
header('Content-Type: application/json');

if ($path === '/versions.json') {
    // No "splits": Flex restricts no package to extra.symfony.require; PHP 8.2 keeps Symfony at 7.4.
    echo json_encode(['splits' => new stdClass(), 'lts' => '7.4', 'next' => '8.1', 'dev-name' => '8.1']);

    return;
}
if ($path === '/aliases.json') {
    echo '{}';

    return;
}
if (!str_starts_with($path, '/p/')) {
    http_response_code(404);

    return;
}

$kernel = <<<'PHP'
    <?php

    namespace App;

    use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
    use Symfony\Component\HttpKernel\Kernel as BaseKernel;

    class Kernel extends BaseKernel
    {
        use MicroKernelTrait;
    }

    PHP;
$console = <<<'PHP'
    #!/usr/bin/env php
    <?php

    use App\Kernel;
    use Symfony\Bundle\FrameworkBundle\Console\Application;

    require_once dirname(__DIR__).'/vendor/autoload_runtime.php';

    return function (array $context) {
        return new Application(new Kernel($context['APP_ENV'], (bool) $context['APP_DEBUG']));
    };

    PHP;
$services = <<<'YAML'
    services:
        _defaults:
            autowire: true
            autoconfigure: true

        App\:
            resource: '../src/'
            exclude:
                - '../src/Kernel.php'

    YAML;
$framework = <<<'YAML'
    framework:
        secret: '%env(APP_SECRET)%'

    YAML;
$lock = <<<'YAML'
    framework:
        lock: '%env(LOCK_DSN)%'

    YAML;

$recipes = [
    'symfony/flex' => [
        'manifest' => ['copy-from-recipe' => ['.env' => '.env']],
        'files' => ['.env' => "# Environment variables of the application; .env.local (not committed) overrides them.\n"],
    ],
    'symfony/framework-bundle' => [
        'manifest' => [
            'bundles' => ['Symfony\\Bundle\\FrameworkBundle\\FrameworkBundle' => ['all']],
            'copy-from-recipe' => ['config/' => '%CONFIG_DIR%/', 'src/' => '%SRC_DIR%/'],
            'composer-scripts' => ['cache:clear' => 'symfony-cmd'],
            'env' => ['APP_ENV' => 'dev', 'APP_SECRET' => 'stand-in-secret'],
        ],
        'files' => [
            'config/services.yaml' => $services,
            'config/packages/framework.yaml' => $framework,
            'src/Kernel.php' => $kernel,
        ],
    ],
    'symfony/console' => [
        'manifest' => ['copy-from-recipe' => ['bin/' => '%BIN_DIR%/']],
        'files' => ['bin/console' => $console],
    ],
    'symfony/lock' => [
        'manifest' => [
            'copy-from-recipe' => ['config/' => '%CONFIG_DIR%/'],
            'env' => ['LOCK_DSN' => 'flock'],
        ],
        'files' => ['config/packages/lock.yaml' => $lock],
    ],
];

// "/p/vendor,name,i1.2.3[,date];vendor,name,..." (i: install, u: update, r: remove)
$manifests = $locks = [];
foreach (explode(';', rawurldecode(substr($path, 3))) as $entry) {
    $parts = explode(',', $entry);
    $name = ($parts[0] ?? '') . '/' . ($parts[1] ?? '');
    if (!isset($recipes[$name])) {
        continue;
    }
    $recipe = $recipes[$name];
    $ref = sha1(serialize($recipe));
    $files = [];
    foreach ($recipe['files'] as $file => $contents) {
        $files[$file] = ['contents' => $contents, 'executable' => str_starts_with($file, 'bin/')];
    }
    $manifests[$name] = [
        'manifest' => $recipe['manifest'],
        'files' => $files,
        'ref' => $ref,
        'origin' => $name . ':7.4@stand-in:tests/app/flex-endpoint.php',
        'package' => $name,
        'version' => '7.4',
    ];
    $locks[$name] = ['version' => '7.4', 'recipe' => ['repo' => 'stand-in', 'branch' => 'main', 'version' => '7.4', 'ref' => $ref]];
}
echo json_encode(['manifests' => (object) $manifests, 'locks' => (object) $locks]);
