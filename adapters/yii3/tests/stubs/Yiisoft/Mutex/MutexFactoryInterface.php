<?php

// Test-only stand-in for Yiisoft\Mutex\MutexFactoryInterface of yiisoft/mutex 1.1.

declare(strict_types=1);

namespace Yiisoft\Mutex;

interface MutexFactoryInterface
{
    public function create(string $name): MutexInterface;

    /** @throws Exception\MutexLockedException when the lock is not acquired within $timeout seconds */
    public function createAndAcquire(string $name, int $timeout = 0): MutexInterface;
}
