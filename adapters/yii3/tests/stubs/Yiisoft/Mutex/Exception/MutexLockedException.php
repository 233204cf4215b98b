<?php

// Test-only stand-in for the exception of yiisoft/mutex 1.1 (since 1.1.0).

declare(strict_types=1);

namespace Yiisoft\Mutex\Exception;

final class MutexLockedException extends \RuntimeException
{
}
