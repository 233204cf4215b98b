<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Cache\Lock as LaravelLock;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Lock\ExpiredException;
use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Lock\StorageException;
use Lock\Store;

/**
 * Laravel's cache lock over the lock extension: Cache::lock(), Cache::restoreLock(),
 * WithoutOverlapping, onOneServer() and Cache::funnel() use it unchanged. block() waits
 * natively, woken by the release, instead of Laravel's sleep loop.
 */
final class ExtensionLock extends LaravelLock
{
    /** The extension's lock, and whether this process holds through it (shared with restoreLock() here). */
    private readonly Hold $hold;

    private readonly Holds $holds;

    /**
     * @param int|float   $seconds the hold's TTL; 0 for no expiry
     * @param string|null $owner   the hold's owner, passed to the extension as it is; null: Laravel's Str::random()
     * @param bool        $restore adopt the owner's hold (restoreLock())
     */
    public function __construct(private readonly Factory $factory, string $name, int|float $seconds = 0, ?string $owner = null, bool $restore = false)
    {
        parent::__construct($name, $seconds, $owner);
        $this->holds = Holds::of($factory);
        $ttl = $seconds > 0 ? (float) $seconds : null;
        if (!$restore) {
            $this->hold = new Hold($factory->createLock($name, $ttl, false, $this->owner));

            return;
        }
        // A live lock object of this process holds it: share its hold (the extension would
        // refuse to adopt it on flock and semaphore, and leave that object unaware on Redis).
        $hold = $this->holds->find($name, $this->owner);
        if ($hold === null) {
            $hold = new Hold(self::restore($factory, $name, $this->owner, $ttl));
            $hold->held = true;
            $this->holds->remember($name, $this->owner, $hold);
        }
        $this->hold = $hold;
    }

    /** The owner's hold adopted from the store; ProcessBoundException when a store bound to processes has none of this process. */
    private static function restore(Factory $factory, string $name, string $owner, ?float $ttl): Lock
    {
        $store = $factory->getStore();
        try {
            return $factory->restoreLock($name, $owner, $ttl, false);
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException $e) {
            if (!$store->supports(Store::PROCESS_BOUND)) {
                throw $e;
            }
            throw ProcessBoundException::forRestore($store, $name, $e);
        }
    }

    /**
     * One attempt. False when the hold is taken, by anyone: this object included, as with
     * Laravel's RedisLock, and then without asking the store.
     */
    public function acquire(): bool
    {
        if ($this->hold->held && !$this->hold->lock->isExpired()) {
            return false;
        }

        return $this->took($this->hold->lock->acquire());
    }

    /** Waits natively up to $seconds, woken by the release; LockTimeoutException when not acquired. */
    public function block($seconds, $callback = null)
    {
        if ($this->hold->held && !$this->hold->lock->isExpired() || $this->holds->find($this->name, $this->owner) !== null) {
            // Held under our owner by a lock object of this process: no release can come while we wait.
            throw new LockTimeoutException();
        }
        $lock = $this->hold->lock;
        if (!$this->took($seconds > 0 ? $lock->acquire(true, (float) $seconds) : $lock->acquire())) {
            throw new LockTimeoutException();
        }
        if (\is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }

        return true;
    }

    /**
     * True when a hold of our owner was released: the one taken through this object, else (as
     * with Laravel's RedisLock) one our owner has elsewhere that restoreLock() can adopt. False
     * when there was none (expired, taken by another, never ours).
     */
    public function release(): bool
    {
        $hold = $this->hold->held ? $this->hold : $this->holds->find($this->name, $this->owner);
        if ($hold === null) {
            return $this->releaseByOwner();
        }
        $this->dropped($hold);
        try {
            $hold->lock->release();
        } catch (ExpiredException) {
            return false;
        }

        return true;
    }

    private function releaseByOwner(): bool
    {
        try {
            $this->factory->restoreLock($this->name, $this->owner, false, false)->release();
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException) {
            // Expired, lost, or (on flock and semaphore) no hold of this owner to adopt in this process.
            return false;
        }
        $this->holds->releasedProcessBound($this->name, $this->owner);

        return true;
    }

    /** Breaks the hold whoever has it. */
    public function forceRelease(): void
    {
        $this->factory->getStore()->forceRelease($this->name);
        if ($this->hold->held) {
            $this->dropped($this->hold);
        }
        $this->holds->releasedProcessBound($this->name);
    }

    /**
     * Extends our hold to $seconds (default: the lock's), false when it is no longer ours.
     * 0 keeps a hold without expiry as it is; a TTL, once given, cannot be taken off a hold.
     */
    public function refresh($seconds = null): bool
    {
        $seconds ??= $this->seconds;
        $lock = $this->hold->lock;
        if (!$this->hold->held) {
            return false;
        }
        if ($seconds <= 0 && $lock->getTtl() !== null) {
            throw new \ValueError(sprintf('%s::refresh(): Argument #1 ($seconds) must be greater than 0 for a lock that expires', self::class));
        }
        try {
            $lock->refresh($seconds > 0 ? (float) $seconds : null);
        } catch (ExpiredException) {
            $this->dropped($this->hold);

            return false;
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException) {
            // Not held.
            return false;
        }

        return true;
    }

    /** Asks the store whether $owner holds the lock (when not through a lock object of this process: through restoreLock()). */
    public function isOwnedBy($owner): bool
    {
        if ($owner === null || $owner === '') {
            return false;
        }
        $hold = $owner === $this->owner && $this->hold->held ? $this->hold : $this->holds->find($this->name, (string) $owner);
        try {
            return ($hold?->lock ?? $this->factory->restoreLock($this->name, (string) $owner, false, false))->isAcquired();
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException|\ValueError) {
            // An owner the store could not hold (too long), or a hold of another process.
            return false;
        }
    }

    /** Our owner when we hold it; null otherwise (the extension does not reveal other holders). */
    protected function getCurrentOwner(): ?string
    {
        return $this->isOwnedBy($this->owner) ? $this->owner : null;
    }

    /** The extension's lock underneath, for its fencing token or remaining lifetime. */
    public function getExtensionLock(): Lock
    {
        return $this->hold->lock;
    }

    private function took(bool $acquired): bool
    {
        if ($acquired) {
            $this->hold->held = true;
            $this->holds->remember($this->name, $this->owner, $this->hold);
            if ($this->factory->getStore()->supports(Store::PROCESS_BOUND)) {
                $this->holds->tookProcessBound($this->name, $this->owner);
            }
        }

        return $acquired;
    }

    private function dropped(Hold $hold): void
    {
        $hold->held = false;
        $this->holds->forget($this->name, $this->owner, $hold);
    }
}
