<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

/** Session holds on the database server (a `dsn` of the lock-ext store): bound to the process, as flock. */
final class MysqlLockTest extends ProcessBoundLockTestCase
{
    protected static function kind(): string
    {
        return 'mysql';
    }

    public function testReleaseAfterForceReleaseIsFalse(): void
    {
        $this->releaseAfterForceRelease();
    }
}
