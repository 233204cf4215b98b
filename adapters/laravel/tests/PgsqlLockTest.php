<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

/** Session holds on the database server (a `dsn` of the lock-ext store): bound to the process, as flock. */
final class PgsqlLockTest extends ProcessBoundLockTestCase
{
    protected static function kind(): string
    {
        return 'pgsql';
    }

    public function testReleaseAfterForceReleaseIsFalse(): void
    {
        $this->releaseAfterForceRelease();
    }
}
