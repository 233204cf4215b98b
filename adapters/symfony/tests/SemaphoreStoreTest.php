<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

final class SemaphoreStoreTest extends ProcessBoundStoreTestCase
{
    protected static function kind(): string
    {
        return 'semaphore';
    }
}
