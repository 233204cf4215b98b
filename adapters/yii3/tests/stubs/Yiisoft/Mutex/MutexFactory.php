<?php

// Test-only stand-in for Yiisoft\Mutex\MutexFactory of yiisoft/mutex 1.1: a
// final createAndAcquire() over the subclass's create(), throwing
// MutexLockedException when acquire() answers false.

declare(strict_types=1);

namespace Yiisoft\Mutex;

use Yiisoft\Mutex\Exception\MutexLockedException;

abstract class MutexFactory implements MutexFactoryInterface
{
    final public function createAndAcquire(string $name, int $timeout = 0): MutexInterface
    {
        $mutex = $this->create($name);
        if ($mutex->acquire($timeout)) {
            return $mutex;
        }

        throw new MutexLockedException(sprintf('Unable to acquire the "%s" mutex.', $name));
    }
}
