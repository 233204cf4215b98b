<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

use Lock\ExpiredException;
use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Lock\Store;

/**
 * Drupal's `lock.persistent` service: holds that outlive the request, owned by
 * one lock id shared by every request ('persistent', as Drupal's own), so that
 * a later request can adopt them (Factory::restoreLock()) and release them.
 * Only on stores whose holds are not bound to a process (Redis): on flock or
 * semaphore, acquire() and release() throw UnsupportedStoreException naming
 * the store.
 *
 * With $autoRefresh, a hold is refreshed while the request that took (or
 * renewed) it runs; when that request ends, it runs out its $timeout, as
 * Drupal's persistent holds do: that is what frees one an abandoned batch left.
 */
class PersistentLockBackend extends LockBackend
{
    /**
     * @param string     $lockId      the owner of every persistent hold: 1 to 255 bytes
     * @param bool|float $autoRefresh as for LockBackend, while the request holds
     */
    public function __construct(Factory $factory, string $lockId = 'persistent', bool|float $autoRefresh = false)
    {
        parent::__construct($factory, $autoRefresh);
        if ($lockId === '' || strlen($lockId) > 255) {
            throw new \ValueError(sprintf('%s::__construct(): Argument #2 ($lockId) must be 1 to 255 bytes', self::class));
        }
        $this->lockId = $lockId;
    }

    public function acquire($name, $timeout = 30.0)
    {
        $this->assertStoreOutlivesProcess();

        return parent::acquire($name, $timeout);
    }

    /**
     * Gives up the persistent hold of $name, whichever request took it: a hold
     * taken by another request is adopted by its owner, the lock id
     * (Factory::restoreLock()), and released. Silent when $name is not held
     * under the lock id (free, expired, or a `lock` hold of some request,
     * which it leaves alone).
     */
    public function release($name)
    {
        $this->assertStoreOutlivesProcess();
        $name = (string) $name;
        if (isset($this->locks[$name])) {
            parent::release($name);

            return;
        }
        try {
            $this->factory->restoreLock($name, $this->getLockId(), false, false)->release();
        } catch (ExpiredException) {
            // Not held under the persistent lock id (LostException: somebody else holds it): nothing of ours.
        }
    }

    /** Holds stay when the request ends. */
    protected function releaseAtRequestEnd(): void
    {
    }

    /**
     * The request ends with holds taken here: they stay, and run out their $timeout from the
     * last refresh. The extension goes on refreshing a hold whose lock object lets go of it
     * without releasing it; the restore that follows adopts that refreshing and stops it
     * (locally: nothing is sent to the store).
     */
    public function __destruct()
    {
        if ($this->autoRefresh === false || $this->locks === []) {
            return;
        }
        $names = array_keys($this->locks);
        $this->locks = [];
        foreach ($names as $name) {
            try {
                $this->factory->restoreLock((string) $name, $this->getLockId(), null, false, false);
            } catch (LockException) {
                // Nothing of this lock id to adopt here: nothing left refreshing.
            }
        }
    }

    protected function createLock(string $name, float $ttl, bool $autoRelease = true): Lock
    {
        return parent::createLock($name, $ttl, false);
    }

    private function assertStoreOutlivesProcess(): void
    {
        $store = $this->factory->getStore();
        if ($store->supports(Store::PROCESS_BOUND)) {
            throw new UnsupportedStoreException(sprintf(
                "lock.persistent needs holds that outlive the request, but %s frees a hold when its process ends "
                . "and cannot hand it to another request: set \$settings['lock_ext']['dsn'] to a store without "
                . "Lock\\Store::PROCESS_BOUND (redis://..., or a database's table holds: pgsql://...?holds=table, mysql://...?holds=table)",
                get_class($store),
            ));
        }
    }
}
