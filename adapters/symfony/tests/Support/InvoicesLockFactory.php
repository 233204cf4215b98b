<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use Symfony\Component\Lock\LockFactory;

/** A named resource's factory as an application autowires it: LockFactory $invoicesLockFactory. */
final class InvoicesLockFactory
{
    public function __construct(public readonly LockFactory $invoicesLockFactory)
    {
    }
}
