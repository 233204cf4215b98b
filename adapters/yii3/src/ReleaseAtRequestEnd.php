<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3;

/**
 * An event listener that releases the holds of a LockMutexFactory's mutexes still alive when
 * a request ends: for yiisoft/yii-http's AfterRequest in a worker serving many requests in one
 * process (RoadRunner, FrankenPHP, Swoole), where a mutex kept alive past its request would
 * otherwise hold on until the worker exits (flock, semaphore) or its TTL (Redis).
 *
 * ```php
 * // config/common/di/mutex.php
 * LockMutexFactory::class => static fn () => LockMutexFactory::fromDsn('redis://127.0.0.1:6379?prefix=app:'),
 * MutexFactoryInterface::class => Reference::to(LockMutexFactory::class),
 * // config/web/events.php (events-web)
 * Yiisoft\Yii\Http\Event\AfterRequest::class => [[ReleaseAtRequestEnd::class, '__invoke']],
 * ```
 */
final class ReleaseAtRequestEnd
{
    public function __construct(private readonly LockMutexFactory $factory)
    {
    }

    /** @param object|null $event the event ending the request; not read */
    public function __invoke(?object $event = null): void
    {
        $this->factory->releaseAll();
    }
}
