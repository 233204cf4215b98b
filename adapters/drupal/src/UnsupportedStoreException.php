<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal;

/** A service was asked for holds its store cannot give (lock.persistent on flock or semaphore). */
final class UnsupportedStoreException extends \LogicException
{
}
