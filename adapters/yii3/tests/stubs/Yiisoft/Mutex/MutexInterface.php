<?php

// Test-only stand-in for Yiisoft\Mutex\MutexInterface of yiisoft/mutex 1.1
// (checked against 1.1.0 and 1.1.1): acquire() waits up to $timeout seconds
// and says whether it got the lock; release() gives it up.

declare(strict_types=1);

namespace Yiisoft\Mutex;

interface MutexInterface
{
    public function acquire(int $timeout = 0): bool;

    public function release(): void;
}
