<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

use Illuminate\Console\Scheduling\CacheSchedulingMutex;
use Illuminate\Console\Scheduling\Event;

/**
 * The scheduler's onOneServer() mutex (bound as Illuminate\Console\Scheduling\SchedulingMutex):
 * Laravel's CacheSchedulingMutex, which refuses a lock-ext store bound to processes. The mutex
 * must keep the other servers out for the minute's run (Laravel takes it for an hour and never
 * releases it), long after the schedule:run that took it has ended.
 */
final class ExtensionSchedulingMutex extends CacheSchedulingMutex
{
    public function create(Event $event, \DateTimeInterface $time)
    {
        $store = $this->cache->store($this->store)->getStore();
        if ($store instanceof ExtensionStore && $store->isProcessBound()) {
            throw ProcessBoundException::forOneServer($store->getFactory()->getStore(), ExtensionStore::nameIn($this->cache, $this->store), $event->getSummaryForDisplay());
        }

        return parent::create($event, $time);
    }
}
