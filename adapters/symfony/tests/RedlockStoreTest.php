<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Factory;
use Lock\Store\CombinedStore;
use Lock\Store\RedisStore;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;

/**
 * The extension's CombinedStore, as a redlock:// DSN makes it over three independent Redis
 * servers: one hold on every server it reaches, a majority of them deciding (or every one, with
 * strategy=unanimous). Not Symfony's own CombinedStore over several stores (CombinedStoreTest).
 */
final class RedlockStoreTest extends ExpiringStoreTestCase
{
    private const PREFIX = 'lock-adapters-symfony:';

    protected static function kind(): string
    {
        return 'redlock';
    }

    public function testTheRedlockDsnGivesOneHoldOnEveryServer(): void
    {
        self::assertInstanceOf(CombinedStore::class, $this->native);
        $lock = $this->factory->createLock($this->resource);
        self::assertTrue($lock->acquire());
        foreach (self::servers() as $host => $server) {
            self::assertTrue($server->isLocked($this->resource), "held on $host");
        }
        $lock->release();
        foreach (self::servers() as $host => $server) {
            self::assertFalse($server->isLocked($this->resource), "released on $host");
        }
    }

    public function testAMajorityOfTheServersDecides(): void
    {
        [$first, $second] = array_values(self::servers());
        // Somebody's hold on one server of three: the lock can still be taken on the other two.
        $stray = new \Lock\Lock($this->resource, $first, 30.0);
        self::assertTrue($stray->acquire());
        self::assertFalse($this->native->isLocked($this->resource));
        $lock = $this->factory->createLock($this->resource);
        self::assertTrue($lock->acquire());
        self::assertTrue($lock->isAcquired());
        $lock->release();

        // On two of three: it is held.
        $stray2 = new \Lock\Lock($this->resource, $second, 30.0);
        self::assertTrue($stray2->acquire());
        self::assertTrue($this->native->isLocked($this->resource));
        self::assertFalse($lock->acquire());
        self::assertFalse($lock->isAcquired());
        $stray->release();
        $stray2->release();
        self::assertTrue($lock->acquire());
        $lock->release();
    }

    public function testTheUnanimousStrategyNeedsEveryServer(): void
    {
        $factory = new LockFactory(new ExtensionStore(Factory::fromDsn(Stores::redlockDsn() . '?prefix=' . self::PREFIX . '&strategy=unanimous')->getStore()));
        $stray = new \Lock\Lock($this->resource, array_values(self::servers())[2], 30.0);
        self::assertTrue($stray->acquire());
        $lock = $factory->createLock($this->resource);
        self::assertFalse($lock->acquire(), 'one server of three holds it for somebody else');
        $stray->release();
        self::assertTrue($lock->acquire());
        self::assertTrue($this->native->isLocked($this->resource));
        $lock->release();
    }

    public function testOneServerDownOfThreeStillLocks(): void
    {
        [$first, $second] = Stores::redlockHosts();
        [$dead] = self::deadPorts(1);
        $factory = new LockFactory(new ExtensionStore(Factory::fromDsn(sprintf('redlock://%s,%s,127.0.0.1:%d?prefix=%s&timeout=0.5', $first, $second, $dead, self::PREFIX))->getStore()));
        $lock = $factory->createLock($this->resource);
        self::assertTrue($lock->acquire());
        self::assertTrue($this->native->isLocked($this->resource), 'held on the two servers up, a majority of the three');
        self::assertFalse($this->factory->createLock($this->resource)->acquire());
        $lock->refresh(60.0);
        $lock->release();
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testAMajorityOfServersDownIsAFailureOfTheStore(): void
    {
        [$dead1, $dead2] = self::deadPorts(2);
        $store = new ExtensionStore(Factory::fromDsn(sprintf('redlock://%s,127.0.0.1:%d,127.0.0.1:%d?prefix=%s&timeout=0.5', Stores::redlockHosts()[0], $dead1, $dead2, self::PREFIX))->getStore());
        try {
            $store->save(new Key($this->resource));
            self::fail('saved with one server of three');
        } catch (LockStorageException $e) {
            self::assertInstanceOf(\Lock\StorageException::class, $e->getPrevious());
        }
        try {
            (new LockFactory($store))->createLock($this->resource)->acquire();
            self::fail('acquired with one server of three');
        } catch (LockAcquiringException $e) {
            self::assertInstanceOf(LockStorageException::class, $e->getPrevious());
        }
        self::assertFalse($this->native->isLocked($this->resource));

        // With strategy=unanimous, one server down of three is enough.
        [$first, $second] = Stores::redlockHosts();
        $unanimous = new ExtensionStore(Factory::fromDsn(sprintf('redlock://%s,%s,127.0.0.1:%d?prefix=%s&timeout=0.5&strategy=unanimous', $first, $second, $dead1, self::PREFIX))->getStore());
        try {
            $unanimous->save(new Key($this->resource));
            self::fail('saved unanimously with two servers of three');
        } catch (LockStorageException $e) {
            self::assertInstanceOf(\Lock\StorageException::class, $e->getPrevious());
        }
        self::assertFalse($this->native->isLocked($this->resource), 'nothing left on the servers up');
    }

    public function testTheRefreshRightAfterTheSaveGoesToTheServers(): void
    {
        $refreshed = static fn (): int => \Lock\stats()[CombinedStore::class]['refreshed'] ?? 0;
        $before = $refreshed();
        // The Lock's TTL is the store's initial one: on Redis the refresh would stay local.
        $lock = $this->factory->createLock($this->resource);
        self::assertTrue($lock->acquire());
        self::assertSame($before + 1, $refreshed());
        self::assertLessThanOrEqual(300.0, $lock->getRemainingLifetime());
        $lock->release();
    }

    /** @return array<string, RedisStore> the extension's store on each server alone, under the suite's prefix */
    private static function servers(): array
    {
        $servers = [];
        foreach (Stores::redlockHosts() as $host) {
            $servers[$host] = new RedisStore('redis://' . $host, ['prefix' => self::PREFIX, 'timeout' => 2.0]);
        }

        return $servers;
    }

    /** @return list<int> $count different loopback ports nothing listens on */
    private static function deadPorts(int $count): array
    {
        $servers = [];
        for ($i = 0; $i < $count; ++$i) {
            $servers[] = stream_socket_server('tcp://127.0.0.1:0');
        }
        // Held open together, so that the ports differ; closed, so that nothing answers there.
        $ports = array_map(static fn ($s): int => parse_url('tcp://' . stream_socket_get_name($s, false), PHP_URL_PORT), $servers);
        array_map(fclose(...), $servers);

        return $ports;
    }
}
