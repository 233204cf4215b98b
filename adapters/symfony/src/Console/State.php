<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Console;

use Symfony\Component\Console\Formatter\OutputFormatter;

/**
 * What Lock\Store::inspect() answered, for people (a table's rows, null read as "unknown") and
 * for scripts (one JSON object, null kept).
 *
 * @internal
 */
final class State
{
    /** What lock:release shows of the hold it broke. */
    public const BROKEN = ['mode', 'owners', 'holders', 'ttl', 'fencing'];

    /** @param array<string, mixed> $state the answer of Lock\Store::inspect() */
    public function __construct(public readonly array $state)
    {
    }

    /**
     * One row per key of the answer, in its order (or those of $keys), each value as a person reads it.
     *
     * @param list<string>|null $keys
     * @return list<array{string, string}>
     */
    public function rows(?array $keys = null): array
    {
        $rows = [];
        foreach ($this->state as $key => $value) {
            if ($keys === null || \in_array($key, $keys, true)) {
                $rows[] = [(string) $key, $this->text((string) $key, $value)];
            }
        }

        return $rows;
    }

    public function json(): string
    {
        return json_encode($this->state, \JSON_UNESCAPED_SLASHES | \JSON_PRESERVE_ZERO_FRACTION | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_THROW_ON_ERROR);
    }

    /** The owners, for a confirmation question. */
    public function owners(): string
    {
        return $this->text('owners', $this->state['owners'] ?? null);
    }

    /** An owner token (or lock name) as a person can read it: as it is when printable, else its bytes in hex; escaped for the console. */
    public static function token(string $token): string
    {
        return OutputFormatter::escape(preg_match('/^[\x20-\x7e]*$/', $token) ? $token : '0x' . bin2hex($token));
    }

    private function text(string $key, mixed $value): string
    {
        $free = ($this->state['held'] ?? null) === false;

        return match (true) {
            // inspect() answers a null mode for a free lock, and a null ttl for a hold without expiry.
            $key === 'mode' && $value === null => $free ? 'none' : 'unknown',
            $key === 'ttl' && $value === null => $free ? 'none' : 'no expiry',
            $value === null => 'unknown',
            \is_bool($value) => $value ? 'yes' : 'no',
            \is_float($value) => sprintf('%.3f s', $value),
            \is_array($value) => $value === [] ? 'none' : implode(', ', array_map(static fn ($v): string => \is_string($v) ? self::token($v) : (string) $v, $value)),
            default => OutputFormatter::escape((string) $value),
        };
    }
}
