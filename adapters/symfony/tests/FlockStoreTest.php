<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

final class FlockStoreTest extends ProcessBoundStoreTestCase
{
    protected static function kind(): string
    {
        return 'flock';
    }
}
