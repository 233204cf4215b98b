<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

final class SemaphoreLockTest extends ProcessBoundLockTestCase
{
    protected static function kind(): string
    {
        return 'semaphore';
    }
}
