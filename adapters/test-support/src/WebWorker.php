<?php

declare(strict_types=1);

namespace Lock\Adapter\TestSupport;

/**
 * A web server of one worker process, as php-fpm's or `artisan serve`'s: PHP's built-in server
 * (`php -S`, without PHP_CLI_SERVER_WORKERS) with the extension and this Composer install loaded,
 * whose every request runs $code with the request's $args (JSON). What one request leaves in the
 * worker process is there for the next one, as in php-fpm; a request that dies of a fatal error
 * ends as a php-fpm request does (the extension's request end runs), and the worker goes on.
 */
final class WebWorker
{
    /** @var resource */
    private $process;
    private string $dir;
    private int $port;

    public function __construct(string $code)
    {
        $this->dir = sys_get_temp_dir() . '/lock-web-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $autoload = \dirname((new \ReflectionClass(\Composer\Autoload\ClassLoader::class))->getFileName(), 2) . '/autoload.php';
        file_put_contents($this->dir . '/router.php', sprintf(
            "<?php\ndeclare(strict_types=1);\nheader('Content-Type: text/plain');\nrequire %s;\n\$args = json_decode(\$_GET['args'] ?? '[]', true);\n%s\n",
            var_export($autoload, true),
            $code,
        ));
        $env = getenv();
        unset($env['PHP_CLI_SERVER_WORKERS']);
        // A port found free can be taken before the server binds it: then it exits, and another is tried.
        for ($attempt = 1; ; $attempt++) {
            $this->port = self::freePort();
            $command = [PHP_BINARY, '-d', 'extension=' . PhpChild::extension(), '-d', 'max_execution_time=0',
                '-d', 'display_errors=1', '-d', 'log_errors=0', '-S', '127.0.0.1:' . $this->port, '-t', $this->dir, $this->dir . '/router.php'];
            $log = $this->dir . '/server.log';
            $this->process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes, null, $env);
            if (!\is_resource($this->process)) {
                throw new \RuntimeException('cannot start php -S');
            }
            if ($this->listening()) {
                return;
            }
            proc_terminate($this->process);
            proc_close($this->process);
            if ($attempt === 3) {
                throw new \RuntimeException('php -S did not start: ' . file_get_contents($log));
            }
        }
    }

    /** The worker's process id: the one every request runs in. */
    public function pid(): int
    {
        return proc_get_status($this->process)['pid'];
    }

    /** Sends a GET with $args to the worker and returns the body of its answer, read to its end (the request's end). */
    public function get(array $args = []): string
    {
        $socket = stream_socket_client('tcp://127.0.0.1:' . $this->port, $errno, $error, 10.0);
        if ($socket === false) {
            throw new \RuntimeException("cannot reach php -S: $error");
        }
        fwrite($socket, 'GET /?' . http_build_query(['args' => json_encode($args)]) . " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
        // The server closes the connection after the request's end, bailout or not.
        stream_set_timeout($socket, 120);
        $answer = stream_get_contents($socket);
        $timedOut = stream_get_meta_data($socket)['timed_out'];
        fclose($socket);
        if ($timedOut || $answer === false || !str_contains($answer, "\r\n\r\n")) {
            throw new \RuntimeException('no answer from php -S: ' . var_export($answer, true));
        }

        return substr($answer, strpos($answer, "\r\n\r\n") + 4);
    }

    /** Stops the server and removes its directory. */
    public function stop(): void
    {
        if (\is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }

    public function __destruct()
    {
        $this->stop();
    }

    private function listening(): bool
    {
        $deadline = microtime(true) + 60.0;
        while (microtime(true) < $deadline) {
            if (!proc_get_status($this->process)['running']) {
                return false;
            }
            $socket = @stream_socket_client('tcp://127.0.0.1:' . $this->port, $errno, $error, 1.0);
            if ($socket !== false) {
                fclose($socket);

                return true;
            }
            usleep(50_000);
        }

        return false;
    }

    private static function freePort(): int
    {
        $server = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) parse_url('tcp://' . stream_socket_get_name($server, false), PHP_URL_PORT);
        fclose($server);

        return $port;
    }
}
