<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

use Drupal\Core\Lock\LockBackendInterface;
use Symfony\Component\EventDispatcher\EventSubscriberInterface;

/**
 * Releases the `lock` service's holds when the kernel ends a request
 * (kernel.terminate), after the other terminate listeners (automated cron
 * among them). Under php-fpm the shutdown function would do it a moment
 * later; in a worker serving many requests in one process it is the only
 * request end there is.
 */
final class ReleaseAtRequestEnd implements EventSubscriberInterface
{
    public function __construct(private readonly LockBackendInterface $lock)
    {
    }

    public static function getSubscribedEvents(): array
    {
        return ['kernel.terminate' => ['onTerminate', -1024]];
    }

    public function onTerminate(): void
    {
        $this->lock->releaseAll();
    }
}
