<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Lock\Store;

/**
 * Laravel asked a store whose holds are bound to their process (flock, semaphore, PostgreSQL
 * and MySQL session holds) for a hold that must outlive that process, or for another process's
 * hold: refused, rather than hand out a lock that does not exclude.
 */
final class ProcessBoundException extends \LogicException
{
    /** What to use instead, the same advice in every message. */
    private const INSTEAD = 'use a cache store whose locks outlive the process: lock-ext on Redis (a "connection" or a redis:// "dsn"), or Laravel\'s own redis or database store';

    public static function forRestore(Store $store, string $name, ?\Throwable $previous = null): self
    {
        return new self(sprintf(
            'Cache::restoreLock("%s"): %s binds a hold to the process that took it, and this process has no hold of this owner, so there is none to adopt here (another process\'s hold cannot be released or refreshed from this one); %s for locks released elsewhere (queued jobs, the scheduler)',
            $name,
            $store::class,
            self::INSTEAD,
        ), 0, $previous);
    }

    /** ShouldBeUnique: the lock taken at dispatch must last until a queue worker has run the job. */
    public static function forUniqueJob(Store $store, string $name): self
    {
        return new self(sprintf(
            'Unique job lock "%s": %s binds a hold to the process that takes it and cannot expire, so it would end with the request or command that dispatches the job, while the job waits in the queue, and the job could be queued twice; %s, for the default store or the job\'s uniqueVia()',
            $name,
            $store::class,
            self::INSTEAD,
        ));
    }

    /** runInBackground()->withoutOverlapping(): schedule:finish, another process, releases the mutex. */
    public static function forBackgroundEvent(Store $store, string $cacheStore, string $event): self
    {
        return new self(sprintf(
            'withoutOverlapping() for the background event "%s": the cache store [%s] (%s) binds its mutex to the schedule:run process that takes it, which ends while the command still runs (schedule:finish, another process, is to release it), so the command could overlap; %s, with Schedule::useCache() or as the default store, or run the event in the foreground',
            $event,
            $cacheStore,
            $store::class,
            self::INSTEAD,
        ));
    }

    /** onOneServer(): the mutex must keep every other server out for its hour, its schedule:run long gone. */
    public static function forOneServer(Store $store, string $cacheStore, string $event): self
    {
        return new self(sprintf(
            'onOneServer() for the event "%s": the cache store [%s] (%s) binds its mutex to the schedule:run process that takes it, which ends before the other servers\' schedule:run may ask, so the event could run on several servers; %s, with Schedule::useCache() or as the default store',
            $event,
            $cacheStore,
            $store::class,
            self::INSTEAD,
        ));
    }
}
