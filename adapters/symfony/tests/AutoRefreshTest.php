<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;
use Symfony\Component\Lock\LockFactory;

/**
 * ExtensionStore's $autoRefresh on Redis, through Symfony's LockFactory and Lock: Locks with a
 * TTL of 1 s kept while they hold, Lock::refresh() setting the TTL the refreshing goes on with,
 * holds that outlive their Key running out their TTL, Keys handed to another process.
 */
final class AutoRefreshTest extends TestCase
{
    private Store $native;
    private ExtensionStore $store;
    private LockFactory $factory;
    private string $resource;

    protected function setUp(): void
    {
        $this->native = Stores::create('redis');
        $this->store = new ExtensionStore($this->native, autoRefresh: true);
        $this->factory = new LockFactory($this->store);
        $this->resource = 'sf-ar-' . bin2hex(random_bytes(8));
    }

    /** Another process's Lock (a store without auto-refresh) on the resource: 'refused', or 'taken' (then released). */
    private function elsewhere(): string
    {
        return Child::run(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create('redis'));
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLock($args['resource'], 10.0);
            echo $lock->acquire() ? 'taken' : 'refused';
            $lock->release();
            PHP, ['resource' => $this->resource]);
    }

    public function testALockIsKeptPastItsTtlForAsLongAsItHolds(): void
    {
        $lock = $this->factory->createLock($this->resource, 1.0);
        self::assertTrue($lock->acquire());
        sleep(3);
        self::assertSame('refused', $this->elsewhere(), 'another process');
        self::assertFalse($this->factory->createLock($this->resource)->acquire(), 'another Lock');
        self::assertTrue($lock->isExpired(), 'the Key keeps the expiry the store last gave it, until the store is asked');
        self::assertTrue($lock->isAcquired());
        self::assertFalse($lock->isExpired(), 'isAcquired() gave the Key the expiry the refreshes set');
        self::assertGreaterThan(0.0, $lock->getRemainingLifetime());
        self::assertLessThanOrEqual(1.0, $lock->getRemainingLifetime());
        $lock->release();
        self::assertFalse($this->native->isLocked($this->resource), 'free right after the release');
        self::assertSame('taken', $this->elsewhere());
    }

    public function testRefreshStillWorksAndItsTtlIsTheOneTheRefreshingGoesOnWith(): void
    {
        $lock = $this->factory->createLock($this->resource, 1.0);
        self::assertTrue($lock->acquire());
        $lock->refresh(6.0);
        self::assertGreaterThan(1.0, $lock->getRemainingLifetime());
        sleep(3);
        // Refreshed every 2 s to 6 s: more than 3 s left (the Lock's own 1 s would leave at most 1).
        self::assertGreaterThan(3.0, $this->native->inspect($this->resource)['ttl']);
        self::assertTrue($lock->isAcquired());
        $lock->release();
        self::assertFalse($this->native->isLocked($this->resource));
    }

    /** Symfony: a Lock without autoRelease leaves its hold to its TTL. Refreshed while its Key holds, then left to it. */
    public function testAHoldThatOutlivesItsKeyRunsOutItsTtl(): void
    {
        $key = new Key($this->resource);
        $lock = new Lock($key, $this->store, 1.0, false);
        self::assertTrue($lock->acquire());
        unset($lock);
        sleep(2);
        self::assertTrue($this->native->isLocked($this->resource), 'the Key still holds it: refreshed');
        unset($key);
        sleep(2);
        self::assertFalse($this->native->isLocked($this->resource), 'the Key gone, the hold ran out its TTL');

        self::assertTrue($this->factory->createLock($this->resource, 1.0, false)->acquire(), 'a Lock dropped at once');
        sleep(2);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    /** A Key serialized to a worker: refreshed there while the worker's Lock holds it. */
    public function testAKeyHandedToAnotherProcessIsRefreshedThereWhileItHolds(): void
    {
        $key = new Key($this->resource);
        $lock = $this->factory->createLockFromKey($key, 1.0, false);
        self::assertTrue($lock->acquire());
        $serialized = serialize($key);
        unset($lock, $key);

        $out = Child::run(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create('redis'), autoRefresh: true);
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLockFromKey(unserialize($args['key']), 1.0, false);
            $lock->refresh();
            sleep(3);
            echo $lock->isAcquired() ? "held\n" : "lost\n";
            $lock->release();
            echo 'released';
            PHP, ['key' => $serialized]);
        self::assertSame("held\nreleased", $out);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testABoundEndsTheRefreshing(): void
    {
        $factory = new LockFactory(new ExtensionStore($this->native, autoRefresh: 1.0));
        $lock = $factory->createLock($this->resource, 1.0);
        self::assertTrue($lock->acquire());
        sleep(3);
        self::assertFalse($this->native->isLocked($this->resource), 'refreshed for 1 s, then ran out its last TTL');
        self::assertFalse($lock->isAcquired());
    }

    /** Stores whose holds do not expire take the option and need nothing. */
    public function testAProcessBoundStoreTakesTheOption(): void
    {
        $factory = new LockFactory(new ExtensionStore(Stores::create('flock'), autoRefresh: true));
        $lock = $factory->createLock($this->resource, 1.0);
        self::assertTrue($lock->acquire());
        self::assertFalse($factory->createLock($this->resource)->acquire());
        $lock->refresh();
        $lock->release();
        self::assertTrue($factory->createLock($this->resource)->acquire());
    }

    /** @return array<string, array{float}> */
    public static function badBounds(): array
    {
        return ['negative' => [-1.0], 'zero' => [0.0], 'NAN' => [NAN], 'INF' => [INF]];
    }

    #[DataProvider('badBounds')]
    public function testABadBoundIsRefused(float $bound): void
    {
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage('expects $autoRefresh to be true, false or a strictly positive number of seconds');
        new ExtensionStore($this->native, autoRefresh: $bound);
    }

    public function testAnythingButABoolOrANumberIsATypeError(): void
    {
        $this->expectException(\TypeError::class);
        new ExtensionStore($this->native, autoRefresh: 'yes');
    }
}
