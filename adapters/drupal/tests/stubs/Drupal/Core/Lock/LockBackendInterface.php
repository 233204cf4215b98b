<?php

// Test-only stand-in for Drupal\Core\Lock\LockBackendInterface, checked against
// Drupal 10.x and 11.x core/lib/Drupal/Core/Lock/LockBackendInterface.php: the
// same six untyped methods. acquire()'s $timeout is the hold's lifetime in
// seconds; wait() answers TRUE while the lock still holds, FALSE when it may be
// available (its $delay is seconds, as LockBackendAbstract::wait() counts it).

namespace Drupal\Core\Lock;

interface LockBackendInterface
{
    public function acquire($name, $timeout = 30.0);

    public function lockMayBeAvailable($name);

    public function wait($name, $delay = 30);

    public function release($name);

    public function releaseAll($lockId = null);

    public function getLockId();
}
