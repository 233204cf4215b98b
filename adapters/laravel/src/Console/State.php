<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Console;

/**
 * What Lock\Store::inspect() answered, for people (a table's rows, null read as "unknown") and
 * for scripts (one JSON object, null kept).
 *
 * @internal
 */
final class State
{
    /** @param array<string, mixed> $state the answer of Lock\Store::inspect() */
    public function __construct(public readonly array $state)
    {
    }

    /** @return list<array{string, string}> */
    public function rows(): array
    {
        $s = $this->state;
        $free = ($s['held'] ?? null) === false;

        return [
            ['held', match ($s['held'] ?? null) { true => 'yes', false => 'no', default => 'unknown' }],
            ['mode', $s['mode'] ?? ($free ? 'none' : 'unknown')],
            ['owners', self::listOf($s['owners'] ?? null)],
            // inspect() answers a null ttl for a hold without expiry.
            ['ttl', match (true) {
                isset($s['ttl']) => sprintf('%.3f s', $s['ttl']),
                $free => 'none',
                default => 'no expiry',
            }],
            ['fencing', isset($s['fencing']) ? (string) $s['fencing'] : 'unknown'],
            ['waiters', isset($s['waiters']) ? (string) $s['waiters'] : 'unknown'],
            ['queue', self::listOf($s['queue'] ?? null)],
        ];
    }

    public function json(): string
    {
        return json_encode($this->state, \JSON_UNESCAPED_SLASHES | \JSON_PRESERVE_ZERO_FRACTION | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_THROW_ON_ERROR);
    }

    /** The owners, for a confirmation question. */
    public function owners(): string
    {
        return self::listOf($this->state['owners'] ?? null);
    }

    /** An owner token as a person can read it: as it is when printable, else its bytes in hex. */
    public static function token(string $token): string
    {
        return preg_match('/^[\x20-\x7e]*$/', $token) ? $token : '0x' . bin2hex($token);
    }

    /** @param list<string>|null $tokens */
    private static function listOf(?array $tokens): string
    {
        if ($tokens === null) {
            return 'unknown';
        }

        return $tokens === [] ? 'none' : implode(', ', array_map(self::token(...), $tokens));
    }
}
