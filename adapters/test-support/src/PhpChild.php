<?php

declare(strict_types=1);

namespace Lock\Adapter\TestSupport;

/**
 * Another PHP process with the extension and this Composer install loaded, running $code
 * with $args (JSON) in $args. Its output is read line by line, so a test can wait for it to
 * reach a point ("held") before going on. With $extension false the child runs without the
 * extension (what an application meets where php.ini does not load it).
 */
final class PhpChild
{
    /** @var resource */
    private $process;
    /** @var array<int, resource> */
    private array $pipes = [];

    /** @param bool $extension false: a PHP without the extension, as a server where it was not installed */
    public function __construct(string $code, array $args = [], bool $extension = true)
    {
        $autoload = \dirname((new \ReflectionClass(\Composer\Autoload\ClassLoader::class))->getFileName(), 2) . '/autoload.php';
        $prelude = sprintf('declare(strict_types=1); require %s; $args = json_decode(%s, true);', var_export($autoload, true), var_export(json_encode($args), true));
        $command = $extension
            ? [PHP_BINARY, '-d', 'extension=' . self::extension(), '-r', $prelude . $code]
            : [PHP_BINARY, '-r', $prelude . $code];
        $this->process = proc_open($command, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $this->pipes);
        if (!\is_resource($this->process)) {
            throw new \RuntimeException('cannot start a PHP process');
        }
        fclose($this->pipes[0]);
    }

    public static function extension(): string
    {
        $ext = getenv('LOCK_TEST_EXT');
        if ($ext === false || $ext === '') {
            throw new \RuntimeException('LOCK_TEST_EXT is not set: run the suite through adapters/test.sh');
        }

        return $ext;
    }

    /** The next line the child prints (without its newline); fails when it ends first. */
    public function readLine(): string
    {
        $line = fgets($this->pipes[1]);
        if ($line === false) {
            throw new \RuntimeException('the child ended early: ' . stream_get_contents($this->pipes[2]));
        }

        return rtrim($line, "\n");
    }

    /** Waits for the child to end; returns the rest of its output, and fails on an error or a non-zero exit. */
    public function finish(): string
    {
        $out = stream_get_contents($this->pipes[1]);
        $err = stream_get_contents($this->pipes[2]);
        fclose($this->pipes[1]);
        fclose($this->pipes[2]);
        $status = proc_close($this->process);
        if ($status !== 0 || $err !== '') {
            throw new \RuntimeException(sprintf("the child exited with %d:\n%s%s", $status, $out, $err));
        }

        return $out;
    }

    /** Runs $code to its end in another process and returns its output. */
    public static function run(string $code, array $args = [], bool $extension = true): string
    {
        return (new self($code, $args, $extension))->finish();
    }

    /** Runs $code to its end in another process without the extension loaded, and returns its output. */
    public static function runWithoutExtension(string $code, array $args = []): string
    {
        return self::run($code, $args, false);
    }
}
