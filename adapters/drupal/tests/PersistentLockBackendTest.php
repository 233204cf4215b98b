<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Tests;

use Lock\Adapter\Drupal\LockBackend;
use Lock\Adapter\Drupal\PersistentLockBackend;
use Lock\Adapter\TestSupport\Env;
use Lock\Adapter\Drupal\UnsupportedStoreException;
use Lock\Factory;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class PersistentLockBackendTest extends TestCase
{
    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    private static function persistent(string $store = 'redis'): PersistentLockBackend
    {
        return new PersistentLockBackend(Factory::fromDsn(Env::dsn($store)));
    }

    public static function processBound(): array
    {
        return ['flock' => ['flock', 'Lock\Store\FlockStore'], 'semaphore' => ['semaphore', 'Lock\Store\SemaphoreStore'],
            'pgsql' => ['pgsql', 'Lock\Store\PostgresStore'], 'mysql' => ['mysql', 'Lock\Store\MysqlStore']];
    }

    /** @return array<string, array{string}> the stores whose holds outlive the request: Redis, and the databases' table holds */
    public static function outliving(): array
    {
        return ['redis' => ['redis'], 'pgsql-table' => ['pgsql-table'], 'mysql-table' => ['mysql-table']];
    }

    #[DataProvider('processBound')]
    public function testRefusesAProcessBoundStore(string $store, string $class): void
    {
        $backend = self::persistent($store);
        foreach (['acquire', 'release'] as $method) {
            try {
                $backend->$method(Env::name());
                self::fail("$method(): UnsupportedStoreException expected");
            } catch (UnsupportedStoreException $e) {
                self::assertStringContainsString($class, $e->getMessage());
                self::assertStringContainsString('lock.persistent', $e->getMessage());
            }
        }
        self::assertTrue($backend->lockMayBeAvailable(Env::name()));
    }

    public function testTheLockIdIsSharedByAllRequests(): void
    {
        self::assertSame('persistent', self::persistent()->getLockId());
        self::assertSame('site-a', (new PersistentLockBackend(Factory::fromDsn(Env::dsn('redis')), 'site-a'))->getLockId());
    }

    public function testRefusesABadLockId(): void
    {
        foreach (['', str_repeat('x', 256)] as $lockId) {
            try {
                new PersistentLockBackend(Factory::fromDsn(Env::dsn('redis')), $lockId);
                self::fail("ValueError expected for '$lockId'");
            } catch (\ValueError $e) {
                self::assertStringContainsString('$lockId', $e->getMessage());
            }
        }
    }

    #[DataProvider('outliving')]
    public function testAHoldOutlivesTheRequestAndAnotherRequestReleasesIt(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\PersistentLockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2], 60.0) ? "held\n" : "refused\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        self::assertSame(0, $child->wait());

        $request = new LockBackend(Factory::fromDsn(Env::dsn($store)));
        self::assertFalse($request->acquire($name), 'still held after the request ended');
        $persistent = self::persistent($store);
        self::assertFalse($persistent->acquire($name), 'held by an earlier request, as in Drupal\'s own backend');
        $persistent->release($name);
        self::assertTrue($request->lockMayBeAvailable($name));
        self::assertTrue($persistent->acquire($name));
        self::assertTrue($persistent->acquire($name, 60.0), 'a second acquire in the request renews');
        $persistent->releaseAll();
        self::assertTrue($request->lockMayBeAvailable($name));
    }

    #[DataProvider('outliving')]
    public function testTheTimeoutIsTheLifetime(string $store): void
    {
        $name = Env::name();
        $persistent = self::persistent($store);
        self::assertTrue($persistent->acquire($name, 0.2));
        usleep(400000);
        $request = new LockBackend(Factory::fromDsn(Env::dsn($store)));
        self::assertTrue($request->acquire($name));
        self::assertFalse($persistent->acquire($name), 'the renewal of a lost hold fails');
        $request->release($name);
    }

    #[DataProvider('outliving')]
    public function testWaitEndsWhenAnotherRequestReleases(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\PersistentLockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2], 60.0) ? "held\n" : "refused\n";
            usleep(300000);
            $lock->release($argv[2]);
            echo "released\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        $persistent = self::persistent($store);
        self::assertFalse($persistent->wait($name, 10));
        self::assertTrue($persistent->lockMayBeAvailable($name));
        self::assertSame('released', $child->line());
        self::assertSame(0, $child->wait());
    }

    #[DataProvider('outliving')]
    public function testReleaseNeverBreaksARequestsHold(string $store): void
    {
        $name = Env::name();
        $request = new LockBackend(Factory::fromDsn(Env::dsn($store)));
        self::assertTrue($request->acquire($name));
        self::persistent($store)->release($name);
        self::assertFalse($request->lockMayBeAvailable($name), 'lock.persistent releases only its own holds');
        $request->release($name);
    }

    #[DataProvider('outliving')]
    public function testReleaseLeavesAnotherLockIdsHold(string $store): void
    {
        $name = Env::name();
        $other = new PersistentLockBackend(Factory::fromDsn(Env::dsn($store)), 'site-a');
        self::assertTrue($other->acquire($name));
        self::persistent($store)->release($name);
        self::assertFalse($other->lockMayBeAvailable($name), 'held under another lock id: left alone');
        (new PersistentLockBackend(Factory::fromDsn(Env::dsn($store)), 'site-a'))->release($name);
        self::assertTrue($other->lockMayBeAvailable($name), 'released under its own lock id');
    }

    #[DataProvider('outliving')]
    public function testHoldsCarryThePersistentLockId(string $store): void
    {
        $name = Env::name();
        $persistent = self::persistent($store);
        self::assertTrue($persistent->acquire($name));
        self::assertSame('persistent', $persistent->getLock($name)->getOwner());
        self::assertFalse(self::persistent($store)->acquire($name), 'one lock id, two backends: still one holder');
        $persistent->release($name);
    }
}
