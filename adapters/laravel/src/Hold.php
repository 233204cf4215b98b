<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Lock;

/**
 * The extension's lock under one name and owner, and whether this process holds it through
 * that lock: shared by the ExtensionLocks Cache::lock() and Cache::restoreLock() make for it
 * in one process, so that a release through one is seen by the others.
 *
 * @internal
 */
final class Hold
{
    public bool $held = false;

    public function __construct(public Lock $lock)
    {
    }
}
