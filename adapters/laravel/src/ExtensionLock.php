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
 *
 * With the store's auto_refresh, the extension refreshes a hold with a TTL ($seconds) while a
 * lock object of this process holds it (taken by get() or block(), or shared through
 * restoreLock() here), within the bound. A hold whose lock objects are all dropped unreleased
 * runs out its $seconds, as Laravel promises of such a hold, save a unique job's: Laravel drops
 * that lock object at dispatch, and its refreshing goes on in the dispatching process until the
 * worker releases the lock, the bound passes or that process ends.
 */
final class ExtensionLock extends LaravelLock
{
    /** The extension's lock, and whether this process holds through it (shared with restoreLock() here). */
    private readonly Hold $hold;

    private readonly Holds $holds;

    /**
     * The store binds a hold to this process (flock, semaphore, PostgreSQL and MySQL session
     * holds): it cannot expire, so it ends with the PHP request that took it at the latest.
     */
    private readonly bool $processBound;

    /** The longest resource name the extension takes, bytes. */
    private const NAME_MAX = 65536;

    /** How Laravel's ShouldBeUnique names the lock it takes when a job is dispatched (Illuminate\Bus\UniqueLock::getKey()). */
    private const UNIQUE_JOB_PREFIX = 'laravel_unique_job:';

    /**
     * The store's auto_refresh for the holds this lock takes: false where there is nothing to
     * refresh (no TTL, a store whose holds do not expire).
     */
    private readonly bool|float $autoRefresh;

    /**
     * @param int|float|string|null $seconds     the hold's TTL, as Laravel takes it (a numeric string too); 0 or null for no expiry
     * @param string|int|null       $owner       the hold's owner, passed to the extension as a string; null: Laravel's Str::random()
     * @param bool                  $restore     adopt the owner's hold (restoreLock())
     * @param bool|float            $autoRefresh the store's auto_refresh (ExtensionStore validates it)
     */
    public function __construct(private readonly Factory $factory, string $name, int|float|string|null $seconds = 0, string|int|null $owner = null, bool $restore = false, bool|float $autoRefresh = false)
    {
        $seconds = self::seconds($seconds);
        parent::__construct($name, $seconds, $owner === null ? null : (string) $owner);
        $this->holds = Holds::of($factory);
        $this->processBound = $factory->getStore()->supports(Store::PROCESS_BOUND);
        $ttl = $seconds > 0 ? (float) $seconds : null;
        $this->autoRefresh = $ttl !== null && $factory->getStore()->supports(Store::EXPIRING) ? $autoRefresh : false;
        $resource = self::resource($name);
        if (!$restore) {
            $this->hold = new Hold($this->createLock($resource, $ttl), $this->refreshedWhileHeld() ? $factory : null);

            return;
        }
        // This process holds it through a lock object (on a process-bound store, also one since
        // dropped): share that hold, which a Redis restore would leave that object unaware of.
        $hold = $this->holds->find($name, $this->owner);
        if ($hold === null) {
            $lock = $this->restore($resource, $ttl);
            $hold = new Hold($lock ?? $this->createLock($resource, $ttl));
            if ($lock !== null) {
                $this->held($hold);
            }
        }
        $this->hold = $hold;
    }

    /**
     * The extension's lock for this one. A Redis hold lasts until released or its TTL, as with
     * Laravel's RedisLock (no autoRelease). A process-bound hold, which cannot expire, ends with
     * the PHP request at the latest (autoRelease), also after a fatal error or a time limit;
     * until then Holds keeps it, whether its lock objects are alive or dropped.
     */
    private function createLock(string $resource, ?float $ttl): Lock
    {
        return $this->factory->createLock($resource, $ttl, $this->processBound, $this->owner, $ttl !== null ? $this->autoRefresh : false);
    }

    /**
     * Whether the refreshing of a hold this lock takes ends when its lock objects are dropped
     * (Hold), so that the hold runs out its $seconds as Laravel's are meant to: every refreshed
     * hold but a unique job's, whose lock object Laravel drops at dispatch while the job has yet
     * to be queued, let alone run.
     */
    private function refreshedWhileHeld(): bool
    {
        return $this->autoRefresh !== false && !str_starts_with($this->name, self::UNIQUE_JOB_PREFIX);
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
    private function restore(string $resource, ?float $ttl): ?Lock
    {
        $store = $this->factory->getStore();
        try {
            return $this->factory->restoreLock($resource, $this->owner, $ttl, $this->processBound);
        } catch (StorageException $e) {
            throw $e;
        } catch (LockException $e) {
            if (!$this->processBound) {
                throw $e;
            }
            if (!$store->isLocked($resource) || $this->holds->heldHere($this->name)) {
                return null;
            }
            throw ProcessBoundException::forRestore($store, $this->name, $e);
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
        $this->refuseUniqueJob();

        return $this->took($this->hold->lock->acquire());
    }

    /** Waits natively up to $seconds, woken by the release; LockTimeoutException when not acquired. */
    public function block($seconds, $callback = null)
    {
        if ($this->hold->held && !$this->hold->lock->isExpired() || $this->holds->find($this->name, $this->owner) !== null) {
            // Held under our owner by a lock object of this process: no release can come while we wait.
            throw new LockTimeoutException();
        }
        $this->refuseUniqueJob();
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
     * until released. With auto_refresh, the refreshing goes on with the TTL given last.
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
                unset($lock);
                $this->hold->lock = $this->factory->restoreLock(self::resource($this->name), $this->owner, null, false);
                // The lock replaced let go of the hold: its auto-refresh, left going on, would put a TTL back.
                Hold::stopRefreshing($this->factory, self::resource($this->name), $this->owner);
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

    /**
     * Whether anybody holds the lock (Laravel 13's Lock::isLocked(), which the scheduler's
     * CacheEventMutex asks): the store's answer, a shared hold included.
     */
    public function isLocked(): bool
    {
        return $this->factory->getStore()->isLocked(self::resource($this->name));
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

    /**
     * ShouldBeUnique's lock must last until a queue worker has run the job: a process-bound
     * hold would end with the dispatching request or command, and the job could be queued twice.
     */
    private function refuseUniqueJob(): void
    {
        if ($this->processBound && str_starts_with($this->name, self::UNIQUE_JOB_PREFIX)) {
            throw ProcessBoundException::forUniqueJob($this->factory->getStore(), $this->name);
        }
    }

    private function took(bool $acquired): bool
    {
        if ($acquired) {
            $this->held($this->hold);
        }

        return $acquired;
    }

    /** The hold is ours now: shared with restoreLock() here and, when process-bound, kept until released. */
    private function held(Hold $hold): void
    {
        $hold->held = true;
        $this->holds->remember($this->name, $this->owner, $hold);
        if ($this->processBound) {
            $this->holds->tookProcessBound($this->name, $this->owner, $hold);
        }
    }

    private function dropped(Hold $hold): void
    {
        $hold->held = false;
        $this->holds->forget($this->name, $this->owner, $hold);
    }
}
