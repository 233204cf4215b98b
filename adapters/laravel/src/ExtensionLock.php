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

    /** The longest resource name the extension takes, bytes. */
    private const NAME_MAX = 65536;

    /**
     * @param int|float|string|null $seconds the hold's TTL, as Laravel takes it (a numeric string too); 0 or null for no expiry
     * @param string|int|null       $owner   the hold's owner, passed to the extension as a string; null: Laravel's Str::random()
     * @param bool                  $restore adopt the owner's hold (restoreLock())
     */
    public function __construct(private readonly Factory $factory, string $name, int|float|string|null $seconds = 0, string|int|null $owner = null, bool $restore = false)
    {
        $seconds = self::seconds($seconds);
        parent::__construct($name, $seconds, $owner === null ? null : (string) $owner);
        $this->holds = Holds::of($factory);
        $ttl = $seconds > 0 ? (float) $seconds : null;
        $resource = self::resource($name);
        if (!$restore) {
            $this->hold = new Hold($factory->createLock($resource, $ttl, false, $this->owner));

            return;
        }
        // A live lock object of this process holds it: share its hold (the extension would
        // refuse to adopt it on flock and semaphore, and leave that object unaware on Redis).
        $hold = $this->holds->find($name, $this->owner);
        if ($hold === null) {
            $lock = self::restore($factory, $name, $resource, $this->owner, $ttl);
            $hold = new Hold($lock ?? $factory->createLock($resource, $ttl, false, $this->owner));
            if ($lock !== null) {
                $hold->held = true;
                $this->holds->remember($name, $this->owner, $hold);
            }
        }
        $this->hold = $hold;
    }

    /** Laravel's $seconds as a number: what PHP reads as a number is taken, as Laravel's own stores take it. */
    private static function seconds(int|float|string|null $seconds): int|float
    {
        if ($seconds === null) {
            return 0;
        }
        if (\is_string($seconds)) {
            if (!is_numeric($seconds)) {
                throw new \ValueError(sprintf('%s::__construct(): Argument #3 ($seconds) must be a number of seconds, "%s" given', self::class, $seconds));
            }

            return $seconds + 0;
        }

        return $seconds;
    }

    /**
     * The extension's resource for a Laravel lock name. Laravel takes any name; the extension
     * 1 byte to 64 KiB: an empty or longer name becomes a digest of itself, the same in every
     * process, that no name under 64 KiB written by hand starts with (a NUL byte, then a tag).
     *
     * @internal
     */
    public static function resource(string $name): string
    {
        if ($name !== '' && \strlen($name) <= self::NAME_MAX) {
            return $name;
        }

        return "\0laravel-name:" . hash('sha256', $name);
    }

    /**
     * The owner's hold adopted from the store, or null where it owns nothing to adopt: on a
     * store bound to processes, when nobody holds the name or this process holds it under
     * another owner. ProcessBoundException only for what cannot be done: another process's hold.
     */
    private static function restore(Factory $factory, string $name, string $resource, string $owner, ?float $ttl): ?Lock
    {
        $store = $factory->getStore();
        try {
            return $factory->restoreLock($resource, $owner, $ttl, false);
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException $e) {
            if (!$store->supports(Store::PROCESS_BOUND)) {
                throw $e;
            }
            if (!$store->isLocked($resource) || Holds::of($factory)->heldHere($name)) {
                return null;
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
            $this->factory->restoreLock(self::resource($this->name), $this->owner, false, false)->release();
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
        $this->factory->getStore()->forceRelease(self::resource($this->name));
        if ($this->hold->held) {
            $this->dropped($this->hold);
        }
        $this->holds->releasedProcessBound($this->name);
    }

    /**
     * Extends our hold to $seconds (default: the lock's), false when it is no longer ours.
     * 0 takes the expiry off, as Laravel's RedisLock does (PERSIST): the hold then lasts
     * until released.
     */
    public function refresh($seconds = null): bool
    {
        $seconds = self::seconds($seconds ?? $this->seconds);
        $lock = $this->hold->lock;
        if (!$this->hold->held) {
            return false;
        }
        try {
            if ($seconds <= 0 && $lock->getTtl() !== null && $this->factory->getStore()->supports(Store::EXPIRING)) {
                // The extension refreshes to a lock's own TTL: a lock without one keeps the hold without expiry.
                $this->hold->lock = $this->factory->restoreLock(self::resource($this->name), $this->owner, null, false);
                $lock = $this->hold->lock;
            }
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

    /**
     * Asks the store whether $owner holds the lock (when not through a lock object of this
     * process: through restoreLock()). As in Laravel (getCurrentOwner() === $owner), null is
     * the owner of a free lock: true while nobody holds it.
     */
    public function isOwnedBy($owner): bool
    {
        if ($owner === null) {
            return !$this->factory->getStore()->isLocked(self::resource($this->name));
        }
        $owner = (string) $owner;
        if ($owner === '') {
            return false;
        }
        $hold = $owner === $this->owner && $this->hold->held ? $this->hold : $this->holds->find($this->name, $owner);
        try {
            return ($hold?->lock ?? $this->factory->restoreLock(self::resource($this->name), $owner, false, false))->isAcquired();
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
