<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Symfony\Component\Lock\Exception\UnserializableKeyException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;

/** Stores whose holds the OS ties to a process: no expiry, Keys that cannot leave the process. */
abstract class ProcessBoundStoreTestCase extends StoreTestCase
{
    public function testKeyIsUnserializable(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        try {
            serialize($key);
            self::fail('a Key holding a process-bound lock was serialized');
        } catch (UnserializableKeyException) {
            $this->addToAssertionCount(1);
        } finally {
            $this->store->delete($key);
        }
    }

    public function testAHoldEndsWithItsKey(): void
    {
        // As with Symfony's own FlockStore and SemaphoreStore, whose Key keeps the file or semaphore.
        $key = new Key($this->resource);
        $lock = new Lock($key, $this->store, 300.0, false);
        self::assertTrue($lock->acquire());
        unset($lock);
        self::assertTrue($this->native->isLocked($this->resource), 'no autoRelease: held while the Key lives');
        unset($key);
        self::assertFalse($this->native->isLocked($this->resource), 'released with its Key');
    }

    public function testPutOffExpirationChangesNothing(): void
    {
        $lock = $this->factory->createLock($this->resource, 0.5);
        self::assertTrue($lock->acquire());
        self::assertNull($lock->getRemainingLifetime());
        self::assertFalse($lock->isExpired());
        $lock->refresh(0.1);
        self::assertNull($lock->getRemainingLifetime());
        self::assertTrue($lock->isAcquired());
        $lock->release();
    }
}
