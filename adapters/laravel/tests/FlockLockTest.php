<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use PHPUnit\Framework\Attributes\Group;

final class FlockLockTest extends ProcessBoundLockTestCase
{
    protected static function kind(): string
    {
        return 'flock';
    }

    public function testReleaseAfterForceReleaseIsFalse(): void
    {
        $this->releaseAfterForceRelease();
    }
}
