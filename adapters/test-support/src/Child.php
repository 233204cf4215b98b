<?php

declare(strict_types=1);

namespace Lock\Adapter\TestSupport;

/** A PHP child process that reports what it does on stdout, one line a step. */
final class Child
{
    /** @var resource */
    private $process;
    /** @var resource */
    private $out;
    private string $buffer = '';
    private string $seen = '';

    /** @param list<string> $cmd */
    public function __construct(array $cmd)
    {
        $process = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        if ($process === false) {
            throw new \RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        fclose($pipes[0]);
        $this->process = $process;
        $this->out = $pipes[1];
    }

    /** The next line the child prints; fails the test after $timeout seconds or at its end. */
    public function line(float $timeout = 10.0): string
    {
        $deadline = microtime(true) + $timeout;
        while (($eol = strpos($this->buffer, "\n")) === false) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new \RuntimeException("child said no line within {$timeout} s; so far:\n" . $this->seen . $this->buffer);
            }
            $read = [$this->out];
            $none = null;
            if (stream_select($read, $none, $none, (int) $left, (int) (fmod($left, 1.0) * 1e6)) === 1) {
                $chunk = fread($this->out, 8192);
                if ($chunk === '' || $chunk === false) {
                    throw new \RuntimeException("child ended; it said:\n" . $this->seen . $this->buffer);
                }
                $this->buffer .= $chunk;
            }
        }
        $line = substr($this->buffer, 0, $eol);
        $this->buffer = substr($this->buffer, $eol + 1);
        $this->seen .= $line . "\n";

        return $line;
    }

    /** Waits for the end; returns the exit code, failing on anything it printed that was not read. */
    public function wait(): int
    {
        $rest = stream_get_contents($this->out);
        fclose($this->out);
        $code = proc_close($this->process);
        if (trim($this->buffer . $rest) !== '') {
            throw new \RuntimeException("child said more than expected:\n" . $this->buffer . $rest);
        }

        return $code;
    }
}
