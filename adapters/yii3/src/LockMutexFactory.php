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
 */
final class LockMutexFactory extends MutexFactory
{
    /** @var \WeakMap<LockMutex, true> the mutexes made here that are still alive */
    private \WeakMap $live;

    /** @param ?float $ttl seconds a hold lasts unless released (stores with expiry); null: no expiry */
    public function __construct(private readonly Factory $factory, private readonly ?float $ttl = 30.0)
    {
        if ($ttl !== null && !($ttl > 0.0 && is_finite($ttl))) {
            throw new \ValueError(sprintf('%s::__construct(): Argument #2 ($ttl) must be a positive number of seconds or null', self::class));
        }
        $this->live = new \WeakMap();
    }

    /** @param string $dsn any DSN of Lock\Factory::fromDsn() */
    public static function fromDsn(#[\SensitiveParameter] string $dsn, ?float $ttl = 30.0): self
    {
        return new self(Factory::fromDsn($dsn), $ttl);
    }

    public function create(string $name): MutexInterface
    {
        $mutex = new LockMutex($this->factory, $name, $this->ttl);
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
