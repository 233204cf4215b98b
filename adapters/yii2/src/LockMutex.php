<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii2;

use Lock\ExpiredException;
use Lock\Factory;
use Lock\Lock;
use Lock\LockException;
use Lock\Store;
use yii\base\Application;
use yii\mutex\Mutex;

/**
 * Yii 2's `mutex` component over the lock extension.
 *
 * ```php
 * 'components' => [
 *     'mutex' => [
 *         'class' => \Lock\Adapter\Yii2\LockMutex::class,
 *         'dsn' => 'redis://127.0.0.1:6379?prefix=myapp:',
 *         'ttl' => 30.0,
 *         'autoRefresh' => true,   // optional: keep a hold refreshed while it is held
 *     ],
 * ],
 * ```
 *
 * acquire($name, $timeout) waits up to $timeout seconds in the store's native
 * wait (woken by the release), not in Yii's 50 ms retry loop.
 *
 * With autoRelease (the default) the holds are released at the end of the
 * request: on the application's EVENT_AFTER_REQUEST as well as in Yii's
 * shutdown function, so that a worker serving many requests in one process
 * (RoadRunner, Swoole, FrankenPHP) does not keep what a request forgot.
 *
 * With $autoRefresh the extension refreshes each hold (stores with expiry)
 * about every third of $ttl while this component holds it, whatever the code
 * under the mutex does meanwhile; a killed process's hold expires within $ttl.
 */
class LockMutex extends Mutex
{
    /** Where the locks live: any DSN Lock\Factory::fromDsn() takes. */
    public string $dsn = 'flock:';

    /**
     * Seconds a hold lasts unless released, on stores with expiry (Redis).
     * null: no expiry. Stores without expiry (flock, semaphore) hold until
     * release or the end of the process whatever this says.
     */
    public ?float $ttl = 30.0;

    /**
     * Refresh each hold (stores with expiry) while this component holds it:
     * true, or a number of seconds bounding how long a hold is refreshed after
     * its acquisition (then it runs out $ttl); false: never. Without
     * autoRelease, a hold still taken when the component goes (the end of the
     * script or request) is refreshed no more, and runs out $ttl.
     *
     * @var bool|float
     */
    public mixed $autoRefresh = false;

    /** A ready factory; when set, $dsn is not used. */
    public ?Factory $factory = null;

    /** @var array<string, Lock> the holds this component took, by name */
    private array $holds = [];

    /** Set by releaseLock() when the hold it gave up had expired or been broken. */
    private bool $releasedLost = false;

    public function init(): void
    {
        if ($this->ttl !== null && !($this->ttl > 0.0 && is_finite($this->ttl))) {
            throw new \ValueError(sprintf('%s::$ttl must be a positive number of seconds or null', static::class));
        }
        if (!\is_bool($this->autoRefresh)) {
            if (!\is_int($this->autoRefresh) && !\is_float($this->autoRefresh)) {
                throw new \TypeError(sprintf('%s::$autoRefresh must be true, false or a positive number of seconds, %s given', static::class, get_debug_type($this->autoRefresh)));
            }
            if (!($this->autoRefresh > 0 && is_finite((float) $this->autoRefresh))) {
                throw new \ValueError(sprintf('%s::$autoRefresh must be true, false or a positive number of seconds, %s given', static::class, var_export($this->autoRefresh, true)));
            }
            $this->autoRefresh = (float) $this->autoRefresh;
        }
        $this->factory ??= Factory::fromDsn($this->dsn);
        parent::init();
        if ($this->autoRelease && class_exists(\Yii::class, false) && \Yii::$app instanceof Application) {
            \Yii::$app->on(Application::EVENT_AFTER_REQUEST, [$this, 'releaseAll']);
        }
    }

    /**
     * Without autoRelease, the holds still taken stay when the component goes,
     * and run out $ttl from their last refresh, as Yii's own mutexes' do: the
     * extension goes on refreshing a hold whose lock object lets go of it, and
     * the restore that follows adopts that refreshing and stops it (locally:
     * nothing is sent to the store).
     */
    public function __destruct()
    {
        if ($this->autoRelease || $this->autoRefresh === false || $this->holds === []) {
            return;
        }
        $owners = array_map(static fn (Lock $lock): string => $lock->getOwner(), $this->holds);
        $this->holds = [];
        foreach ($owners as $name => $owner) {
            try {
                $this->factory->restoreLock((string) $name, $owner, null, false, false);
            } catch (LockException) {
                // Nothing of this owner to adopt here: nothing left refreshing.
            }
        }
    }

    /**
     * Releases every hold this component took (what autoRelease does at the
     * end of a request and of the script). A hold found expired or broken is
     * forgotten all the same.
     */
    public function releaseAll(): void
    {
        foreach (array_keys($this->holds) as $name) {
            $this->release((string) $name);
        }
    }

    /**
     * The extension's lock behind a hold of this component (fencing token,
     * remaining lifetime), or null when $name is not held here.
     */
    public function getLock(string $name): ?Lock
    {
        return $this->holds[$name] ?? null;
    }

    /**
     * The store the holds live in. A name given to acquire() is the resource
     * there as it is (the store's own prefix or directory set apart the
     * application's names): `yii lock/inspect NAME` reads it by that name.
     */
    public function getStore(): Store
    {
        return $this->factory->getStore();
    }

    /**
     * Releases $name. false when it is not held here, or when the hold had
     * expired or been broken meanwhile (as Yii's RedisMutex answers for a
     * lost key); either way the name is free to acquire again afterwards.
     */
    public function release($name)
    {
        $this->releasedLost = false;

        return parent::release($name) && !$this->releasedLost;
    }

    /**
     * @param string $name
     * @param int|float $timeout seconds to wait; 0 (or less): one attempt
     */
    protected function acquireLock($name, $timeout = 0): bool
    {
        $name = (string) $name;
        if (isset($this->holds[$name])) {
            // Not re-entrant, like Yii's own mutexes: a second acquire of a
            // name held here fails at once instead of waiting for itself.
            return false;
        }
        $lock = $this->factory->createLock($name, $this->ttl, (bool) $this->autoRelease, null, $this->ttl !== null ? $this->autoRefresh : false);
        $timeout = (float) $timeout;
        $acquired = $timeout > 0.0 ? $lock->acquire(true, $timeout) : $lock->acquire();
        if ($acquired) {
            $this->holds[$name] = $lock;
        }

        return $acquired;
    }

    /**
     * false when $name is not held here. A hold found expired or broken is
     * gone all the same: true here, so that Yii's base class forgets the
     * name, and release() answers false.
     */
    protected function releaseLock($name): bool
    {
        $name = (string) $name;
        $lock = $this->holds[$name] ?? null;
        if ($lock === null) {
            return false;
        }
        unset($this->holds[$name]);
        try {
            $lock->release();
        } catch (ExpiredException) {
            $this->releasedLost = true;
        }

        return true;
    }
}
