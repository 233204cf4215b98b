<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use Symfony\Component\Lock\LockFactory;

/**
 * The application's two ways to the default factory: the service lock.factory asked for by id
 * (as Messenger's DeduplicateMiddleware and the rate limiter are) and LockFactory autowired.
 */
final class LockFactories
{
    public function __construct(public readonly LockFactory $byId, public readonly LockFactory $autowired)
    {
    }
}
