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
    private readonly Lock $lock;

    /** Taken through this object (or adopted by restoreLock()), as far as this process knows. */
    private bool $held = false;

    /**
     * @param int|float   $seconds the hold's TTL; 0 for no expiry
     * @param string|null $owner   the hold's owner, passed to the extension as it is; null: Laravel's Str::random()
     * @param bool        $restore adopt the owner's hold (restoreLock())
     */
    public function __construct(private readonly Factory $factory, string $name, int|float $seconds = 0, ?string $owner = null, bool $restore = false)
    {
        parent::__construct($name, $seconds, $owner);
        $ttl = $seconds > 0 ? (float) $seconds : null;
        if (!$restore) {
            $this->lock = $factory->createLock($name, $ttl, false, $this->owner);

            return;
        }
        $store = $factory->getStore();
        try {
            $this->lock = $factory->restoreLock($name, $this->owner, $ttl, false);
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException $e) {
            if (!$store->supports(Store::PROCESS_BOUND)) {
                throw $e;
            }
            throw ProcessBoundException::forRestore($store, $name, $e);
        }
        $this->held = true;
    }

    /**
     * One attempt. False when the hold is taken, by anyone: this object included, as with
     * Laravel's RedisLock, and then without asking the store.
     */
    public function acquire(): bool
    {
        if ($this->held && !$this->lock->isExpired()) {
            return false;
        }

        return $this->held = $this->lock->acquire();
    }

    /** Waits natively up to $seconds, woken by the release; LockTimeoutException when not acquired. */
    public function block($seconds, $callback = null)
    {
        if ($this->held && !$this->lock->isExpired()) {
            // Held through this object: no release can come while we wait for it.
            throw new LockTimeoutException();
        }
        $this->held = $seconds > 0 ? $this->lock->acquire(true, (float) $seconds) : $this->lock->acquire();
        if (!$this->held) {
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
        if (!$this->held) {
            return $this->releaseByOwner();
        }
        $this->held = false;
        try {
            $this->lock->release();
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

        return true;
    }

    /** Breaks the hold whoever has it. */
    public function forceRelease(): void
    {
        $this->factory->getStore()->forceRelease($this->name);
        $this->held = false;
    }

    /**
     * Extends our hold to $seconds (default: the lock's), false when it is no longer ours.
     * 0 keeps a hold without expiry as it is; a TTL, once given, cannot be taken off a hold.
     */
    public function refresh($seconds = null): bool
    {
        $seconds ??= $this->seconds;
        if (!$this->held) {
            return false;
        }
        if ($seconds <= 0 && $this->lock->getTtl() !== null) {
            throw new \ValueError(sprintf('%s::refresh(): Argument #1 ($seconds) must be greater than 0 for a lock that expires', self::class));
        }
        try {
            $this->lock->refresh($seconds > 0 ? (float) $seconds : null);
        } catch (ExpiredException) {
            $this->held = false;

            return false;
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException) {
            // Not held.
            return false;
        }

        return $this->held = true;
    }

    /** Asks the store whether $owner holds the lock (when not through this object: through restoreLock()). */
    public function isOwnedBy($owner): bool
    {
        if ($owner === $this->owner && $this->held) {
            return $this->lock->isAcquired();
        }
        if ($owner === null || $owner === '') {
            return false;
        }
        try {
            return $this->factory->restoreLock($this->name, (string) $owner, false, false)->isAcquired();
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException|\ValueError) {
            // An owner the store could not hold (too long; "shared" on Redis), or a hold of another process or lock object.
            return false;
        }
    }

    /** Our owner when we hold it; null otherwise (the extension does not reveal other holders). */
    protected function getCurrentOwner(): ?string
    {
        return $this->lock->isAcquired() ? $this->owner : null;
    }

    /** The extension's lock underneath, for its fencing token or remaining lifetime. */
    public function getExtensionLock(): Lock
    {
        return $this->lock;
    }
}
