<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;

/** Stores whose holds expire and outlive the process: TTLs on the Key, expiry, Keys restored in another process. */
abstract class ExpiringStoreTestCase extends StoreTestCase
{
    public function testTtlLivesOnTheKey(): void
    {
        $lock = $this->factory->createLock($this->resource, 10.0);
        self::assertTrue($lock->acquire());
        $left = $lock->getRemainingLifetime();
        self::assertNotNull($left);
        self::assertGreaterThan(0.0, $left);
        self::assertLessThanOrEqual(10.0, $left);

        $lock->refresh(60.0);
        self::assertGreaterThan(10.0, $lock->getRemainingLifetime());
        $lock->release();
    }

    public function testPutOffExpirationSetsTheHoldsLifetime(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        $this->store->putOffExpiration($key, 0.3);
        self::assertTrue($this->store->exists($key));
        self::assertGreaterThan(0.0, $key->getRemainingLifetime());
        self::assertLessThanOrEqual(0.3, $key->getRemainingLifetime());

        usleep(450_000);
        self::assertFalse($this->store->exists($key), 'the hold ran out with the TTL put on it');
        self::assertFalse($this->native->isLocked($this->resource));
        $other = new Key($this->resource);
        $this->store->save($other);
        $this->store->delete($other);
    }

    public function testPutOffExpirationToATtlOverBeforeItIsSetThrowsAndHoldsNothing(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        try {
            $this->store->putOffExpiration($key, 0.000001);
            self::fail('put off the expiration to a TTL that ran out before the store answered');
        } catch (LockExpiredException) {
        }
        self::assertFalse($this->store->exists($key));
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testExpiredHoldIsGoneAndTakenByAnother(): void
    {
        $lock = $this->factory->createLock($this->resource, 0.2);
        self::assertTrue($lock->acquire());
        usleep(400_000);
        self::assertTrue($lock->isExpired());
        self::assertFalse($lock->isAcquired());

        $other = $this->factory->createLock($this->resource);
        self::assertTrue($other->acquire());
        try {
            $lock->refresh();
            self::fail('refreshed a hold somebody else has taken');
        } catch (LockConflictedException) {
        }
        $lock->release();
        self::assertTrue($other->isAcquired(), 'releasing an expired hold leaves the new holder alone');
        $other->release();
    }

    public function testSaveOfAnExpiredKeyThrowsAndHoldsNothing(): void
    {
        $key = new Key($this->resource);
        $key->reduceLifetime(0);
        try {
            $this->store->save($key);
            self::fail('saved a Key whose lifetime was over');
        } catch (LockExpiredException) {
        }
        self::assertFalse($this->native->isLocked($this->resource));
        $other = new Key($this->resource);
        $this->store->save($other);
        self::assertTrue($this->store->exists($other), 'the expired Key left nothing behind');
        $this->store->delete($other);
    }

    public function testPutOffExpirationBeyondTheKeysLifetimeThrows(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        $key->reduceLifetime(0);
        try {
            $this->store->putOffExpiration($key, 10.0);
            self::fail('put off the expiration of a Key whose lifetime was over');
        } catch (LockExpiredException) {
        }
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testHoldLostRightAfterTheAcquireIsSeenByTheNextRefresh(): void
    {
        $lock = $this->factory->createLock($this->resource);
        self::assertTrue($lock->acquire());
        $this->native->forceRelease($this->resource);
        self::assertFalse($lock->isAcquired());
        try {
            $lock->refresh();
            self::fail('refreshed a hold that was broken');
        } catch (LockConflictedException) {
        }
        $other = $this->factory->createLock($this->resource);
        self::assertTrue($other->acquire());
        $lock->release();
        self::assertTrue($other->isAcquired(), 'releasing the lost hold leaves the new holder alone');
        $other->release();
    }

    public function testPutOffExpirationRightAfterTheSaveOfAKeyOutOfLifetimeThrows(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        $key->reduceLifetime(0);
        try {
            $this->store->putOffExpiration($key, 300.0);
            self::fail('put off the expiration of a Key whose lifetime was over');
        } catch (LockExpiredException) {
        }
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testPutOffExpirationOfAKeyNeverSavedConflicts(): void
    {
        $this->expectException(LockConflictedException::class);
        $this->store->putOffExpiration(new Key($this->resource), 10.0);
    }

    public function testInitialTtlMustBePositive(): void
    {
        $this->expectException(InvalidTtlException::class);
        new ExtensionStore($this->native, 0.0);
    }

    public function testKeyIsRestoredInAnotherProcess(): void
    {
        $key = new Key($this->resource);
        $lock = new Lock($key, $this->store, 300.0, false);
        self::assertTrue($lock->acquire());
        $serialized = serialize($key);

        $out = Child::run(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create($args['kind']));
            $key = unserialize($args['key']);
            $lock = new Symfony\Component\Lock\Lock($key, $store, 300.0, false);
            echo $lock->isAcquired() ? "acquired\n" : "not acquired\n";
            $lock->refresh(30.0);
            echo $lock->acquire() ? "kept\n" : "lost\n";
            $stranger = new Symfony\Component\Lock\Lock(new Symfony\Component\Lock\Key($args['resource']), $store);
            echo $stranger->acquire() ? "stranger took it\n" : "stranger refused\n";
            $lock->release();
            echo $lock->isAcquired() ? 'still held' : 'released';
            PHP, ['key' => $serialized, 'resource' => $this->resource, 'kind' => static::kind()]);

        self::assertSame("acquired\nkept\nstranger refused\nreleased", $out);
        self::assertFalse($lock->isAcquired());
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testKeyUnserializedInTheSameProcessAdoptsTheHold(): void
    {
        $key = new Key($this->resource);
        $lock = new Lock($key, $this->store, 300.0, false);
        self::assertTrue($lock->acquire());

        $copy = new Lock(unserialize(serialize($key)), $this->store, 300.0, false);
        self::assertTrue($copy->isAcquired());
        $copy->refresh(30.0);
        $copy->release();
        self::assertFalse($this->native->isLocked($this->resource));
        self::assertFalse($lock->isAcquired());

        $other = $this->factory->createLock($this->resource);
        self::assertTrue($other->acquire(), 'the hold released through the copy is free for another Key');
        $other->release();
    }
}
