<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Factory;
use Lock\Lock;
use Lock\LockException;

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

    /**
     * @param Factory|null $refreshed the factory of a lock the extension auto-refreshes, whose
     *                                refreshing is to end when the last lock object holding it is dropped
     */
    public function __construct(public Lock $lock, private readonly ?Factory $refreshed = null)
    {
    }

    /**
     * Dropped unreleased: a Laravel lock has no autoRelease, and the hold runs out its TTL from
     * the last refresh, as Laravel's $seconds promise (a lock taken as a "once per N seconds"
     * guard, the scheduler's mutexes), instead of being refreshed on while the process lives.
     */
    public function __destruct()
    {
        if ($this->refreshed === null || !$this->held) {
            return;
        }
        $resource = $this->lock->getResource();
        $owner = $this->lock->getOwner();
        // The lock lets go of its hold (no autoRelease); the extension leaves its refreshing going on.
        unset($this->lock);
        self::stopRefreshing($this->refreshed, $resource, $owner);
    }

    /**
     * Ends the refreshing that a lock object of this process, dropped without releasing, left going
     * on for $owner's hold of $resource (the extension hands it to the next restoreLock() here,
     * which stops it when it has no autoRefresh of its own). Local: nothing is sent to the store.
     */
    public static function stopRefreshing(Factory $factory, string $resource, string $owner): void
    {
        try {
            $factory->restoreLock($resource, $owner, null, false, false);
        } catch (LockException) {
            // Nothing of this owner to adopt here: nothing left refreshing.
        }
    }
}
