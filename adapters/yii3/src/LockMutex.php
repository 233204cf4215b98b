<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3;

use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Yiisoft\Mutex\Exception\MutexReleaseException;
use Yiisoft\Mutex\MutexInterface;

/**
 * One named mutex of yiisoft/mutex over the lock extension; LockMutexFactory
 * makes them. Not re-entrant: while a mutex of this process holds a name on a
 * store, acquire() of that name through any other mutex answers false at once.
 * Released on destruction (silently, as the extension's automatic release is).
 */
final class LockMutex implements MutexInterface
{
    /** @var array<string, true> the names held in this process, by store */
    private static array $held = [];

    private ?Lock $lock = null;
    private readonly string $key;

    /** @param bool|float $autoRefresh LockMutexFactory's: refresh the hold while this mutex holds it (a float: for at most that many seconds) */
    public function __construct(
        private readonly Factory $factory,
        private readonly string $name,
        private readonly ?float $ttl = 30.0,
        private readonly bool|float $autoRefresh = false,
    ) {
        $this->key = spl_object_id($factory->getStore()) . "\0" . $name;
    }

    public function __destruct()
    {
        try {
            $this->release();
        } catch (MutexReleaseException) {
            // Lost or unreachable: nothing left to give up.
        }
    }

    /** @param int $timeout seconds to wait, woken by the release; 0 (or less): one attempt */
    public function acquire(int $timeout = 0): bool
    {
        if ($this->lock !== null || isset(self::$held[$this->key])) {
            return false;
        }
        $lock = $this->factory->createLock($this->name, $this->ttl, true, null, $this->ttl !== null ? $this->autoRefresh : false);
        if (!($timeout > 0 ? $lock->acquire(true, (float) $timeout) : $lock->acquire())) {
            return false;
        }
        $this->lock = $lock;
        self::$held[$this->key] = true;

        return true;
    }

    /**
     * No-op when not held. MutexReleaseException when the hold had expired or
     * been broken, or the store failed; the mutex is released locally all the same.
     */
    public function release(): void
    {
        $lock = $this->lock;
        if ($lock === null) {
            return;
        }
        $this->lock = null;
        unset(self::$held[$this->key]);
        try {
            $lock->release();
        } catch (LockException $e) {
            throw new MutexReleaseException(sprintf('Unable to release the "%s" mutex: %s', $this->name, $e->getMessage()), 0, $e);
        }
    }

    /** The extension's lock behind the hold (fencing token, remaining lifetime), null when not held. */
    public function getLock(): ?Lock
    {
        return $this->lock;
    }
}
