<?php

declare(strict_types=1);

namespace Lock\Adapter\TestSupport;

/**
 * The stores the tests run on, and child processes that share them.
 * adapters/test.sh sets LOCK_TEST_REDIS_PORT, LOCK_TEST_REDLOCK_DSN (three more Redis servers),
 * LOCK_TEST_PGSQL_DSN, LOCK_TEST_MYSQL_DSN and LOCK_TEST_EXT (the path of lock.so).
 */
final class Env
{
    private static ?string $run = null;

    /** @var list<string> names given out since the last cleanUp() */
    private static array $names = [];

    /** @return array<string, array{string}> a data provider: one case per store */
    public static function stores(): array
    {
        return ['redis' => ['redis'], 'flock' => ['flock'], 'semaphore' => ['semaphore'],
            'pgsql' => ['pgsql'], 'mysql' => ['mysql']];
    }

    /** A DSN for $kind, private to this test run (own Redis prefix, own flock directory). */
    public static function dsn(string $kind): string
    {
        $run = self::run();

        return match ($kind) {
            'redis' => sprintf('redis://127.0.0.1:%d?prefix=%s:', self::redisPort(), $run),
            'flock' => 'flock://' . sys_get_temp_dir() . '/' . $run,
            'semaphore' => 'semaphore:',
            // The combined store: one hold over three independent Redis servers, a majority of them holding.
            'redlock' => self::serverDsn('LOCK_TEST_REDLOCK_DSN') . '?prefix=' . $run . ':',
            // Session holds (advisory locks, GET_LOCK): bound to the process, as flock and semaphore.
            'pgsql' => self::serverDsn('LOCK_TEST_PGSQL_DSN') . '?prefix=' . $run . ':',
            'mysql' => self::serverDsn('LOCK_TEST_MYSQL_DSN') . '?prefix=' . $run . ':',
            // Table holds: expiring rows that outlive the process, as Redis holds do.
            'pgsql-table' => self::serverDsn('LOCK_TEST_PGSQL_DSN') . '?holds=table&prefix=' . $run . ':',
            'mysql-table' => self::serverDsn('LOCK_TEST_MYSQL_DSN') . '?holds=table&prefix=' . $run . ':',
        };
    }

    /** The DSN of a database server adapters/test.sh started (or was given) in the environment variable $variable. */
    public static function serverDsn(string $variable): string
    {
        $dsn = getenv($variable);
        if ($dsn === false || $dsn === '') {
            throw new \RuntimeException("$variable is not set: run the tests through adapters/test.sh, which starts the server");
        }

        return $dsn;
    }

    /** A resource name no other test or run uses (semaphores are machine-wide). */
    public static function name(string $what = 'r'): string
    {
        return self::$names[] = self::run() . '-' . $what . '-' . bin2hex(random_bytes(4));
    }

    /**
     * Removes the semaphore sets of the names given out (they stay in the kernel
     * until forceRelease() or ipcrm); for a test's tearDown().
     */
    public static function cleanUp(): void
    {
        $names = self::$names;
        self::$names = [];
        if ($names === []) {
            return;
        }
        $semaphores = new \Lock\Store\SemaphoreStore();
        foreach ($names as $name) {
            $semaphores->forceRelease($name);
        }
    }

    public static function redisPort(): int
    {
        $port = getenv('LOCK_TEST_REDIS_PORT');
        if ($port === false || $port === '') {
            throw new \RuntimeException('LOCK_TEST_REDIS_PORT is not set: run the tests through tests/run.sh');
        }

        return (int) $port;
    }

    /**
     * Starts `php` with the extension and the tests' autoloader on $code, a
     * PHP script body that sees $argv; it talks to the test through stdout lines.
     */
    public static function child(string $code, string ...$args): Child
    {
        $script = tempnam(sys_get_temp_dir(), 'lock-adapter-child-');
        $autoload = var_export(AUTOLOAD_FILE, true);
        file_put_contents($script, "<?php\nrequire $autoload;\nunlink(__FILE__);\n" . $code);
        $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . self::extension(), $script, ...$args];

        return new Child($cmd);
    }

    private static function extension(): string
    {
        $so = getenv('LOCK_TEST_EXT');
        if ($so === false || $so === '') {
            throw new \RuntimeException('LOCK_TEST_EXT is not set: run the tests through tests/run.sh');
        }

        return $so;
    }

    private static function run(): string
    {
        if (self::$run === null) {
            self::$run = 'lockad-' . getmypid() . '-' . bin2hex(random_bytes(3));
            $directory = sys_get_temp_dir() . '/' . self::$run;
            register_shutdown_function(static function () use ($directory): void {
                foreach (glob($directory . '/*') ?: [] as $file) {
                    unlink($file);
                }
                if (is_dir($directory)) {
                    rmdir($directory);
                }
            });
        }

        return self::$run;
    }
}
