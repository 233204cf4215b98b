<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony;

use Lock\ExpiredException;
use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Lock\LostException;
use Lock\StorageException;
use Lock\Store;
use Psr\Log\LoggerAwareInterface;
use Psr\Log\LoggerAwareTrait;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Exception\LockReleasingException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock as SymfonyLock;

/**
 * A Symfony Lock store over any store of the lock extension (Redis, flock, semaphore, combined).
 *
 * Symfony's Lock keeps deciding: the TTL lives on the Key, and autoRelease is Symfony's: a hold
 * for a Lock with it is released by the extension at the end of the request (fatal errors too),
 * one for a Lock without it lives with its Key, except on flock and semaphore, where a hold
 * always ends with its Key as with Symfony's own stores there. Blocking acquires
 * use the extension's native wait (woken by the release), never Symfony's retry loop.
 *
 * reset() can end a request in a long-running worker, called by the application: it releases
 * the holds still taken here by Symfony Locks with autoRelease. Nothing calls it on its own, as
 * Symfony's own stores release nothing between messages (a worker may keep a lock across them).
 *
 * The logger (setLogger(); the bundle gives it the "lock" channel) hears what Symfony's Lock
 * cannot see: a hold found expired or lost when it is released, and a release reset() could not make.
 *
 * With $autoRefresh, the extension refreshes each hold (expiring stores) while its Key holds it,
 * to the TTL Symfony's Lock last put on it, within the bound. A hold that outlives its Key (a
 * Lock without autoRelease) then runs out that TTL, as Symfony promises of it. The Key learns the
 * expiry the refreshes set at each call to the store (isAcquired(), refresh(), acquire()).
 */
final class ExtensionStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface, LoggerAwareInterface
{
    use LoggerAwareTrait;

    private readonly Factory $factory;
    private readonly bool $expiring;
    private readonly bool $processBound;

    /**
     * The extension's Lock whose hold the last take() on this store has just taken (expiring
     * stores whose holds outlive the process only): the putOffExpiration() Symfony's Lock makes
     * right after a save can find that hold already lasting as long as asked, and skip the round trip.
     * Weak: it keeps no Lock, nor so its hold's refreshing, alive past its Key.
     *
     * @var \WeakReference<Lock>|null
     */
    private ?\WeakReference $justTaken = null;

    /** @var \WeakMap<Key, true> Keys holding here through a Symfony Lock with autoRelease: what reset() releases */
    private \WeakMap $autoReleased;

    /**
     * @param float      $initialTtl  seconds a hold lasts before Symfony's Lock refreshes it to its own TTL
     *                                (expiring stores only), as for Symfony's own RedisStore
     * @param bool|float $autoRefresh the extension refreshes a hold while its Key holds it (true), for at most
     *                                that many seconds from the acquisition (a float); false: only Symfony's
     *                                refresh() does. Stores whose holds do not expire take it and need nothing.
     *
     * @throws InvalidTtlException      for an $initialTtl that is not positive and finite
     * @throws InvalidArgumentException for an $autoRefresh that is neither a bool nor a positive, finite number
     */
    public function __construct(private readonly Store $store, private readonly float $initialTtl = 300.0, private readonly bool|float $autoRefresh = false)
    {
        if (!($initialTtl > 0.0) || is_infinite($initialTtl)) {
            throw new InvalidTtlException(sprintf('"%s()" expects a strictly positive TTL. Got %s.', __METHOD__, $initialTtl));
        }
        if (\is_float($autoRefresh) && !($autoRefresh > 0.0 && is_finite($autoRefresh))) {
            throw new InvalidArgumentException(sprintf('"%s()" expects $autoRefresh to be true, false or a strictly positive number of seconds (how long a hold may be refreshed). Got %s.', __METHOD__, $autoRefresh));
        }
        $this->factory = new Factory($store, $initialTtl);
        $this->expiring = $store->supports(Store::EXPIRING);
        $this->processBound = $store->supports(Store::PROCESS_BOUND);
        $this->autoReleased = new \WeakMap();
    }

    /**
     * Releases the holds taken here by Symfony Locks with autoRelease that are still alive (kept
     * by a service, or in a reference cycle not yet collected): the end of a request in a
     * long-running worker, where those Locks would never die. Locks without autoRelease keep
     * their holds, as Symfony's autoRelease decides. A hold that cannot be released (Redis
     * unreachable) is left to its TTL, so that ending a request never fails.
     */
    public function reset(): void
    {
        $keys = [];
        foreach ($this->autoReleased as $key => $_) {
            $keys[] = $key;
        }
        $this->autoReleased = new \WeakMap();
        foreach ($keys as $key) {
            try {
                $this->delete($key);
            } catch (LockReleasingException $e) {
                // Left to its TTL (expiring stores are the only ones whose release can fail).
                $this->logger?->warning('Failed to release the "{resource}" lock at reset(): it is left to its TTL.', ['resource' => $key, 'exception' => $e]);
            }
        }
    }

    /** The extension's store underneath. */
    public function getStore(): Store
    {
        return $this->store;
    }

    /** false, true, or the bound of the refreshing in seconds ($autoRefresh). */
    public function getAutoRefresh(): bool|float
    {
        return $this->autoRefresh;
    }

    /**
     * Ends the refreshing the extension left going on for $owner's hold of $resource when a Lock
     * of this store let go of it without releasing it (its Key gone): the extension hands it to
     * the next restoreLock() of this process, which stops it. Local: nothing is sent to the store.
     *
     * @internal
     */
    public function stopRefreshing(string $resource, string $owner): void
    {
        try {
            $this->factory->restoreLock($resource, $owner, null, false, false);
        } catch (LockException) {
            // Nothing of this owner to adopt here: nothing left refreshing.
        }
    }

    public function save(Key $key): void
    {
        $this->take($key, false, false);
    }

    public function saveRead(Key $key): void
    {
        $this->take($key, true, false);
    }

    public function waitAndSave(Key $key): void
    {
        $this->take($key, false, true);
    }

    public function waitAndSaveRead(Key $key): void
    {
        $this->take($key, true, true);
    }

    public function putOffExpiration(Key $key, float $ttl): void
    {
        if (!$this->expiring) {
            return;
        }
        $lock = $this->lockOf($key);
        if ($lock !== null && $this->justTaken?->get() === $lock) {
            $this->justTaken = null;
            if ($this->lastsAsAsked($key, $lock, $ttl)) {
                return;
            }
        }
        $this->justTaken = null;
        $key->reduceLifetime($ttl);
        if ($lock === null) {
            throw new LockConflictedException(sprintf('The "%s" lock is not held by this key.', $key));
        }
        try {
            $lock->refresh($ttl);
        } catch (ExpiredException $e) {
            throw new LockConflictedException(sprintf('The "%s" lock was lost: %s', $key, $e->getMessage()), 0, $e);
        } catch (StorageException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        } catch (LockException $e) {
            // refresh() of a lock that is not held.
            throw new LockConflictedException(sprintf('The "%s" lock is not held by this key.', $key), 0, $e);
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        $this->justTaken = null;
        unset($this->autoReleased[$key]);
        $lock = $this->lockOf($key);
        if ($lock === null) {
            return;
        }
        try {
            $lock->release();
        } catch (ExpiredException $e) {
            // The hold was no longer ours: there is nothing of ours to delete, as with Symfony's stores.
            // Symfony's Lock then logs a successful release: what happened to the hold is said here.
            $this->logger?->warning($e instanceof LostException
                ? 'The "{resource}" lock was lost before its release: someone else holds it.'
                : 'The "{resource}" lock had expired before its release.', ['resource' => $key, 'exception' => $e]);
        } catch (StorageException $e) {
            throw new LockReleasingException(sprintf('Failed to release the "%s" lock: %s', $key, $e->getMessage()), 0, $e);
        }
    }

    public function exists(Key $key): bool
    {
        $lock = $this->lockOf($key);
        if ($lock === null) {
            return false;
        }
        try {
            $held = $lock->isAcquired();
        } catch (StorageException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
        if ($held && $this->refreshes()) {
            $this->learnLifetime($key, $lock);
        }

        return $held;
    }

    /** Whether the extension refreshes the holds taken here. */
    private function refreshes(): bool
    {
        return $this->autoRefresh !== false && $this->expiring;
    }

    /**
     * The Key's lifetime becomes what is left of the hold as the extension's refreshes set it
     * (Symfony's Key keeps an expiry of its own, which only the store's calls can move).
     */
    private function learnLifetime(Key $key, Lock $lock): void
    {
        $left = $lock->getRemainingLifetime();
        if ($left !== null) {
            $key->resetLifetime();
            $key->reduceLifetime($left);
        }
    }

    /** Takes (or refreshes, or converts) this Key's hold; LockConflictedException when it is someone else's. */
    private function take(Key $key, bool $read, bool $blocking): void
    {
        $this->justTaken = null;
        $lock = $this->lockOf($key, true);
        // The hold's TTL starts when it is taken; a wait does not eat into it.
        if ($this->expiring && !$blocking) {
            $key->reduceLifetime($this->initialTtl);
        }
        try {
            $acquired = $read ? $lock->acquireRead($blocking) : $lock->acquire($blocking);
        } catch (ExpiredException $e) {
            throw new LockConflictedException(sprintf('The "%s" lock was lost: %s', $key, $e->getMessage()), 0, $e);
        } catch (StorageException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
        if (!$acquired) {
            throw new LockConflictedException(sprintf('The "%s" lock is held by someone else.', $key));
        }
        if ($this->expiring && $blocking) {
            $key->reduceLifetime($this->initialTtl);
        }
        if (self::takenWithAutoRelease()) {
            $this->autoReleased[$key] = true;
        } else {
            unset($this->autoReleased[$key]);
        }
        if ($this->processBound) {
            // The OS ties the hold to this process: another process could not adopt it.
            $key->markUnserializable();
        } elseif ($this->expiring) {
            // Not on process-bound stores: keeping their Lock here would keep its hold past the Key.
            $this->justTaken = \WeakReference::create($lock);
        }
        $this->checkNotExpired($key);
    }

    /**
     * Whether the hold just taken already lasts $ttl from now, give or take 1/1000 of $ttl (the
     * save's round trip and Symfony's own steps in between), so that putting its expiration off
     * would change nothing that matters to the server or anyone else: then the Key's lifetime
     * becomes what the extension knows is left of the hold (counted from before the request that
     * took it, so never beyond the server's expiry), and no round trip is made. A hold lost
     * meanwhile goes unnoticed only as one lost just after a refresh would.
     */
    private function lastsAsAsked(Key $key, Lock $lock, float $ttl): bool
    {
        $left = $lock->getRemainingLifetime();
        if ($left === null || abs($left - $ttl) > $ttl / 1000) {
            return false;
        }
        $key->reduceLifetime(min($left, $ttl));
        $this->checkNotExpired($key);

        return true;
    }

    /**
     * The extension's Lock for this Key on this store, under the Key's owner: the one this
     * process made, else (a Key serialized by another process, on stores whose holds outlive a
     * process) the owner's hold adopted. Null when the Key has never been through here.
     */
    private function lockOf(Key $key, bool $create = false): ?Lock
    {
        $state = $key->hasState(self::class) ? $key->getState(self::class) : null;
        if (!$state instanceof KeyState) {
            if (!$create) {
                return null;
            }
            // The extension's own token format: 128 random bits, hex.
            $state = new KeyState(bin2hex(random_bytes(16)));
            $key->setState(self::class, $state);
        }
        if (isset($state->holds[$this])) {
            return $state->holds[$this];
        }
        /*
         * Symfony's autoRelease decides whether the hold ends with the request: the extension
         * releases it then also after a fatal error or a time limit, where Symfony's Lock never
         * gets to its destructor. On flock and semaphore the hold ends with the Key, as with
         * Symfony's own stores there (else the process would keep it, let go, until it ends).
         */
        $autoRelease = $this->processBound || self::takenWithAutoRelease();
        $autoRefresh = $this->refreshes() ? $this->autoRefresh : false;
        if ($state->unserialized && !$this->processBound) {
            // Another process may hold under this owner: restoreLock() adopts the hold (acquire() takes it anew when there is none).
            $lock = $this->factory->restoreLock((string) $key, $state->owner, $this->initialTtl, $autoRelease, $autoRefresh);
        } elseif ($create) {
            $lock = $this->factory->createLock((string) $key, $this->expiring ? $this->initialTtl : null, $autoRelease, $state->owner, $autoRefresh);
        } else {
            return null;
        }
        if ($autoRefresh !== false && !$autoRelease) {
            // Its hold outlives the Key: KeyState ends the refreshing with the Key.
            $state->refreshed[$this] = true;
        }

        return $state->holds[$this] = $lock;
    }

    /**
     * Whether the Symfony Lock this store is called by (directly or through CombinedStore) has
     * autoRelease. Symfony's Lock tells its store nothing of it, so it is read from the caller's
     * Lock object; a store called without one (no Lock in the calling frames) answers false.
     */
    private static function takenWithAutoRelease(): bool
    {
        foreach (debug_backtrace(DEBUG_BACKTRACE_PROVIDE_OBJECT, 8) as $frame) {
            $object = $frame['object'] ?? null;
            if ($object instanceof SymfonyLock) {
                return (fn (): bool => (bool) $this->autoRelease)->call($object);
            }
        }

        return false;
    }

    private function checkNotExpired(Key $key): void
    {
        if ($key->isExpired()) {
            try {
                $this->delete($key);
            } catch (\Exception) {
                // The expiry is the failure to report.
            }
            throw new LockExpiredException(sprintf('Failed to store the "%s" lock.', $key));
        }
    }
}
