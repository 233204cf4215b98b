<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

/**
 * A plain RESP connection to the suite's redis-server, to look at what the extension left
 * there (a key's PTTL, the server's command counts) without going through the extension.
 */
final class RedisProbe
{
    /** @var resource */
    private $socket;

    public function __construct()
    {
        $dsn = parse_url(Stores::redisDsn());
        $socket = stream_socket_client(sprintf('tcp://%s:%d', $dsn['host'], $dsn['port']), $errno, $error, 2.0);
        if ($socket === false) {
            throw new \RuntimeException("cannot reach redis-server: $error");
        }
        $this->socket = $socket;
    }

    /** The server's key of $resource on a store with $prefix (as the extension names it). */
    public static function key(string $resource, string $prefix = 'lock-adapters-symfony:'): string
    {
        return $prefix . '{' . $resource . '}';
    }

    public function command(string ...$args): mixed
    {
        $out = '*' . \count($args) . "\r\n";
        foreach ($args as $arg) {
            $out .= '$' . \strlen($arg) . "\r\n" . $arg . "\r\n";
        }
        fwrite($this->socket, $out);

        return $this->reply();
    }

    /** How many times the server has run $command (as INFO commandstats counts, Lua calls included). */
    public function calls(string $command): int
    {
        $info = $this->command('INFO', 'commandstats');

        return preg_match('/^cmdstat_' . preg_quote(strtolower($command), '/') . ':calls=(\d+)/m', $info, $m) ? (int) $m[1] : 0;
    }

    private function reply(): mixed
    {
        $line = rtrim((string) fgets($this->socket), "\r\n");

        return match ($line[0] ?? '') {
            '+' => substr($line, 1),
            ':' => (int) substr($line, 1),
            '-' => throw new \RuntimeException(substr($line, 1)),
            '$' => (int) substr($line, 1) < 0 ? null : substr((string) stream_get_contents($this->socket, (int) substr($line, 1) + 2), 0, -2),
            '*' => (int) substr($line, 1) <= 0 ? [] : array_map(fn () => $this->reply(), range(1, (int) substr($line, 1))),
            default => throw new \RuntimeException("unexpected reply from redis-server: $line"),
        };
    }
}
