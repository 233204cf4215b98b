<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

/** Session holds on the database server: bound to the process (its connection), as flock and semaphore. */
final class MysqlStoreTest extends ProcessBoundStoreTestCase
{
    protected static function kind(): string
    {
        return 'mysql';
    }
}
