<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Console\Scheduling\CacheEventMutex;
use Illuminate\Console\Scheduling\Event;

/**
 * The scheduler's withoutOverlapping() mutex (bound as Illuminate\Console\Scheduling\EventMutex):
 * Laravel's CacheEventMutex, which refuses a background event's mutex on a lock-ext store bound
 * to processes. schedule:finish, run by the background command when it ends, releases that mutex
 * from another process, while a process-bound hold ends with the schedule:run that took it.
 */
final class ExtensionEventMutex extends CacheEventMutex
{
    public function create(Event $event)
    {
        $store = $this->cache->store($this->store)->getStore();
        if ($event->runInBackground && $store instanceof ExtensionStore && $store->isProcessBound()) {
            throw ProcessBoundException::forBackgroundEvent($store->getFactory()->getStore(), ExtensionStore::nameIn($this->cache, $this->store), $event->getSummaryForDisplay());
        }

        return parent::create($event);
    }
}
