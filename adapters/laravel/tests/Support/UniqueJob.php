<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests\Support;

use Illuminate\Contracts\Queue\ShouldBeUnique;

/** A ShouldBeUnique job, as far as Illuminate\Bus\UniqueLock reads one. */
final class UniqueJob implements ShouldBeUnique
{
    public int $uniqueFor = 60;

    public function __construct(public string $uniqueId)
    {
    }
}
