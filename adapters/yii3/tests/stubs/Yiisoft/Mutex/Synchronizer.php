<?php

// Test-only stand-in for Yiisoft\Mutex\Synchronizer of yiisoft/mutex 1.1:
// createAndAcquire(), the callback with PHP warnings turned into
// ErrorException, release() in finally.

declare(strict_types=1);

namespace Yiisoft\Mutex;

final class Synchronizer
{
    public function __construct(private MutexFactoryInterface $mutexFactory)
    {
    }

    public function execute(string $name, callable $callback, int $timeout = 0)
    {
        $mutex = $this->mutexFactory->createAndAcquire($name, $timeout);
        set_error_handler(static function (int $severity, string $message, string $file, int $line): bool {
            if ((error_reporting() & $severity) === 0) {
                return true;
            }
            throw new \ErrorException($message, $severity, $severity, $file, $line);
        });
        try {
            return $callback();
        } finally {
            restore_error_handler();
            $mutex->release();
        }
    }
}
