<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3;

use Lock\Factory;
use Lock\Store;
use Yiisoft\Mutex\Exception\MutexReleaseException;
use Yiisoft\Mutex\MutexFactory;
use Yiisoft\Mutex\MutexInterface;

/**
 * yiisoft/mutex's MutexFactoryInterface over the lock extension, so that
 * Synchronizer and createAndAcquire() use it.
 *
 * With $autoRefresh, the extension refreshes a mutex's hold (stores with expiry)
 * about every third of $ttl while the mutex holds it, whatever the code under
 * the mutex does meanwhile; it stops at release() or the mutex's destruction,
 * and with the process: a killed holder's hold expires within $ttl.
 */
final class LockMutexFactory extends MutexFactory
{
    /** @var \WeakMap<LockMutex, true> the mutexes made here that are still alive */
    private \WeakMap $live;

    /**
     * @param ?float     $ttl         seconds a hold lasts unless released or refreshed (stores with expiry); null: no expiry
     * @param bool|float $autoRefresh refresh a hold while its mutex holds it (true), for at most that many
     *                                seconds from the acquisition (a float: then it runs out $ttl); false: never
     */
    public function __construct(private readonly Factory $factory, private readonly ?float $ttl = 30.0, private readonly bool|float $autoRefresh = false)
    {
        if ($ttl !== null && !($ttl > 0.0 && is_finite($ttl))) {
            throw new \ValueError(sprintf('%s::__construct(): Argument #2 ($ttl) must be a positive number of seconds or null', self::class));
        }
        if (\is_float($autoRefresh) && !($autoRefresh > 0.0 && is_finite($autoRefresh))) {
            throw new \ValueError(sprintf('%s::__construct(): Argument #3 ($autoRefresh) must be true, false or a positive number of seconds', self::class));
        }
        $this->live = new \WeakMap();
    }

    /** @param string $dsn any DSN of Lock\Factory::fromDsn() */
    public static function fromDsn(#[\SensitiveParameter] string $dsn, ?float $ttl = 30.0, bool|float $autoRefresh = false): self
    {
        return new self(Factory::fromDsn($dsn), $ttl, $autoRefresh);
    }

    public function create(string $name): MutexInterface
    {
        $mutex = new LockMutex($this->factory, $name, $this->ttl, $this->autoRefresh);
        $this->live[$mutex] = true;

        return $mutex;
    }

    /**
     * The store the mutexes' holds live in. A mutex name is the resource there
     * as it is (the store's own prefix or directory sets the application's
     * names apart): `yii lock:inspect NAME` reads it by that name.
     */
    public function getStore(): Store
    {
        return $this->factory->getStore();
    }

    /**
     * Releases every mutex made here that is still alive and holds (kept by a long-lived
     * service, or in a reference cycle not yet collected): the end of a request in a worker,
     * see ReleaseAtRequestEnd. A hold found expired or broken, or a store that fails, does not
     * stop the others; the mutexes stay usable and can acquire again.
     */
    public function releaseAll(): void
    {
        $mutexes = [];
        foreach ($this->live as $mutex => $_) {
            $mutexes[] = $mutex;
        }
        foreach ($mutexes as $mutex) {
            try {
                $mutex->release();
            } catch (MutexReleaseException) {
                // Lost or unreachable: nothing left to give up.
            }
        }
    }
}
