<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use Psr\Log\AbstractLogger;

/** A PSR-3 logger that keeps its records, as the application's "logger" service. */
final class CollectingLogger extends AbstractLogger
{
    /** @var list<array{level: string, message: string, context: array<string, mixed>}> */
    public array $records = [];

    public function log($level, string|\Stringable $message, array $context = []): void
    {
        $this->records[] = ['level' => (string) $level, 'message' => (string) $message, 'context' => $context];
    }

    /** @return list<string> "level: message" of each record whose message contains $part */
    public function matching(string $part): array
    {
        $found = [];
        foreach ($this->records as $record) {
            if (str_contains($record['message'], $part)) {
                $found[] = $record['level'] . ': ' . $record['message'];
            }
        }

        return $found;
    }
}
