<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Store;

/** A hold that must outlive its process (restored by a queue worker, the scheduler) was asked of a store whose holds cannot. */
final class ProcessBoundException extends \LogicException
{
    public static function forRestore(Store $store, string $name, ?\Throwable $previous = null): self
    {
        return new self(sprintf(
            'Cache::restoreLock("%s"): %s binds a hold to the process that took it, so no other process can release or refresh it; use a store whose holds outlive the process (Redis) for locks released elsewhere (queued jobs, the scheduler)',
            $name,
            $store::class,
        ), 0, $previous);
    }
}
