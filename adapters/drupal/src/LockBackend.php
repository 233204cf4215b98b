<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

use Drupal\Core\Lock\LockBackendInterface;
use Lock\ExpiredException;
use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Lock\LostException;
use Lock\Store;

/**
 * Drupal's `lock` service over the lock extension: holds of one request,
 * released by release(), by releaseAll() at the end of the request, or when
 * their TTL (acquire()'s $timeout) runs out on stores with expiry. Every hold
 * is owned by the request's lock id (getLockId()).
 *
 * With $autoRefresh the extension refreshes each hold (stores with expiry) to
 * its $timeout about every third of it while this service holds it, whatever
 * the request does meanwhile: a long cron run keeps its lock, and a request
 * that dies frees it within $timeout.
 */
class LockBackend implements LockBackendInterface
{
    /** The longest wait the extension takes, seconds; a longer $delay waits without a limit. */
    private const WAIT_MAX = 1e9;

    /** @var array<string, Lock> the holds taken through this object, by name */
    protected array $locks = [];

    protected ?string $lockId = null;

    /**
     * @param bool|float $autoRefresh refresh each hold while it is held here (true), for at most
     *                                that many seconds from its acquisition (a float); false: never
     */
    public function __construct(protected readonly Factory $factory, protected readonly bool|float $autoRefresh = false)
    {
        if (is_float($autoRefresh) && !($autoRefresh > 0.0 && is_finite($autoRefresh))) {
            throw new \ValueError(sprintf('%s::__construct(): $autoRefresh must be true, false or a positive number of seconds', static::class));
        }
        $this->releaseAtRequestEnd();
    }

    /** Registers releaseAll() to run at the end of the request, as Drupal's DatabaseLockBackend does. */
    protected function releaseAtRequestEnd(): void
    {
        $release = [$this, 'releaseAll'];
        if (function_exists('drupal_register_shutdown_function')) {
            drupal_register_shutdown_function($release);
        } else {
            register_shutdown_function($release);
        }
    }

    /**
     * Takes $name for $timeout seconds (at least 1 ms); a second acquire of a
     * name held here renews it for $timeout from now, also once its $timeout ran
     * out if nobody took it meanwhile, as Drupal's database backend renews its
     * own row whatever its expiry. false when someone else holds it (took it
     * meanwhile included). Stores without expiry (flock, semaphore) hold until
     * release.
     */
    public function acquire($name, $timeout = 30.0)
    {
        $name = (string) $name;
        $ttl = max((float) $timeout, 0.001);
        $held = $this->locks[$name] ?? null;
        if ($held !== null) {
            try {
                $held->refresh($ttl);

                return true;
            } catch (LostException) {
                unset($this->locks[$name]);

                return false;
            } catch (ExpiredException) {
                // Ran out with nobody in between: take it anew, unless somebody is quicker.
                unset($this->locks[$name]);
            }
        }
        $lock = $this->createLock($name, $ttl);
        if (!$lock->acquire()) {
            return false;
        }
        $this->locks[$name] = $lock;

        return true;
    }

    /** Nobody holds $name right now (this request included). */
    public function lockMayBeAvailable($name)
    {
        return !$this->factory->getStore()->isLocked((string) $name);
    }

    /**
     * Waits until nobody holds $name, up to $delay seconds, without taking it.
     * true: still held after $delay; false: it may be available (acquire it).
     *
     * The wait is the store's own (Store::waitUntilFree()), woken by the
     * release, on every store.
     */
    public function wait($name, $delay = 30)
    {
        $name = (string) $name;
        $delay = (float) $delay;
        $store = $this->factory->getStore();
        if (!($delay > 0.0)) {
            return $store->isLocked($name);
        }
        $timeout = $delay > self::WAIT_MAX ? null : $delay;

        return !$store->waitUntilFree($name, $timeout);
    }

    /** Gives up $name if held here; silent when it was not, or had expired or been broken. */
    public function release($name)
    {
        $name = (string) $name;
        $lock = $this->locks[$name] ?? null;
        if ($lock === null) {
            return;
        }
        unset($this->locks[$name]);
        try {
            $lock->release();
        } catch (ExpiredException) {
            // Gone already: nothing to give up.
        }
    }

    /**
     * Gives up every hold taken through this object; called at the end of the
     * request. Another request's lock id releases nothing: this backend knows
     * only its own holds. Never throws (a store found down is left to the TTL).
     */
    public function releaseAll($lockId = null)
    {
        if ($lockId !== null && $lockId !== $this->getLockId()) {
            return;
        }
        $locks = $this->locks;
        $this->locks = [];
        foreach ($locks as $lock) {
            try {
                $lock->release();
            } catch (LockException) {
                // Expired, lost or unreachable: nothing more to do at request end.
            }
        }
    }

    public function getLockId()
    {
        return $this->lockId ??= bin2hex(random_bytes(16));
    }

    /**
     * The store the holds live in (shared with lock.persistent). A lock name is
     * the resource there as it is (the store's own prefix or directory sets the
     * site's names apart): `drush lock:inspect NAME` reads it by that name.
     */
    public function getStore(): Store
    {
        return $this->factory->getStore();
    }

    /** The extension's lock behind a hold of this request (fencing token, lifetime), or null. */
    public function getLock(string $name): ?Lock
    {
        return $this->locks[$name] ?? null;
    }

    /** A lock of $name whose owner is this backend's lock id, auto-refreshed as configured. */
    protected function createLock(string $name, float $ttl, bool $autoRelease = true): Lock
    {
        return $this->factory->createLock($name, $ttl, $autoRelease, $this->getLockId(), $this->autoRefresh);
    }
}
