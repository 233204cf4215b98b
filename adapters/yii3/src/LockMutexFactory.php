<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3;

use Lock\Factory;
use Yiisoft\Mutex\MutexFactory;
use Yiisoft\Mutex\MutexInterface;

/**
 * yiisoft/mutex's MutexFactoryInterface over the lock extension, so that
 * Synchronizer and createAndAcquire() use it.
 */
final class LockMutexFactory extends MutexFactory
{
    /** @param ?float $ttl seconds a hold lasts unless released (stores with expiry); null: no expiry */
    public function __construct(private readonly Factory $factory, private readonly ?float $ttl = 30.0)
    {
        if ($ttl !== null && !($ttl > 0.0 && is_finite($ttl))) {
            throw new \ValueError(sprintf('%s::__construct(): Argument #2 ($ttl) must be a positive number of seconds or null', self::class));
        }
    }

    /** @param string $dsn any DSN of Lock\Factory::fromDsn() */
    public static function fromDsn(#[\SensitiveParameter] string $dsn, ?float $ttl = 30.0): self
    {
        return new self(Factory::fromDsn($dsn), $ttl);
    }

    public function create(string $name): MutexInterface
    {
        return new LockMutex($this->factory, $name, $this->ttl);
    }
}
