<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Store;

/** A hold was restored on a store whose holds are bound to their process, and this process has none of that owner (it may be another process's). */
final class ProcessBoundException extends \LogicException
{
    public static function forRestore(Store $store, string $name, ?\Throwable $previous = null): self
    {
        return new self(sprintf(
            'Cache::restoreLock("%s"): %s binds a hold to the process that took it, and this process has no hold of this owner, so there is none to adopt here (another process\'s hold cannot be released or refreshed from this one); use a store whose holds outlive the process (Redis) for locks released elsewhere (queued jobs, the scheduler)',
            $name,
            $store::class,
        ), 0, $previous);
    }
}
