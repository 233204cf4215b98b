<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Tests;

use Drupal\Core\Lock\LockBackendInterface;
use Lock\Adapter\Drupal\LockBackend;
use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use Lock\StorageException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\Attributes\Group;
use PHPUnit\Framework\TestCase;

final class LockBackendTest extends TestCase
{
    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    public static function stores(): array
    {
        return Env::stores();
    }

    private static function backend(string $store): LockBackend
    {
        return new LockBackend(Factory::fromDsn(Env::dsn($store)));
    }

    #[DataProvider('stores')]
    public function testExcludesAnotherRequestUntilReleased(string $store): void
    {
        $name = Env::name();
        $a = self::backend($store);
        $b = self::backend($store);
        self::assertInstanceOf(LockBackendInterface::class, $a);

        self::assertTrue($a->lockMayBeAvailable($name));
        self::assertTrue($a->acquire($name));
        self::assertFalse($a->lockMayBeAvailable($name), 'held by this request');
        self::assertFalse($b->lockMayBeAvailable($name));
        self::assertFalse($b->acquire($name));
        $a->release($name);
        self::assertTrue($b->lockMayBeAvailable($name));
        self::assertTrue($b->acquire($name));
        $b->release($name);
        $b->release($name); // not held: silent
    }

    #[DataProvider('stores')]
    public function testASecondAcquireInTheRequestRenews(string $store): void
    {
        $name = Env::name();
        $a = self::backend($store);
        self::assertTrue($a->acquire($name, 0.3));
        self::assertTrue($a->acquire($name, 30.0));
        if ($store === 'redis') {
            self::assertEqualsWithDelta(30.0, $a->getLock($name)->getRemainingLifetime(), 1.0);
            usleep(500000);
        }
        self::assertFalse(self::backend($store)->acquire($name), 'renewed: still held');
        $a->release($name);
    }

    public function testTheTimeoutIsTheLifetimeOnRedis(): void
    {
        $name = Env::name();
        $a = self::backend('redis');
        $b = self::backend('redis');
        self::assertTrue($a->acquire($name, 0.2));
        usleep(400000);
        self::assertTrue($b->lockMayBeAvailable($name));
        self::assertTrue($b->acquire($name), 'the expired hold no longer excludes');
        self::assertFalse($a->acquire($name), 'the renewal of a lost hold fails');
        self::assertFalse($a->acquire($name), 'and it is not held here any more');
        $a->release($name); // silent
        self::assertFalse($a->lockMayBeAvailable($name));
        $b->releaseAll();
    }

    public function testAcquireAgainAfterItsTimeoutRanOutWithNobodyInBetweenRenewsAsDrupalsDatabaseBackend(): void
    {
        $name = Env::name();
        $a = self::backend('redis');
        self::assertTrue($a->acquire($name, 0.2));
        usleep(400000);
        self::assertTrue($a->lockMayBeAvailable($name), 'ran out');
        self::assertTrue($a->acquire($name, 30.0), 'renewed: nobody took it meanwhile');
        self::assertFalse(self::backend('redis')->acquire($name), 'held again');
        self::assertEqualsWithDelta(30.0, $a->getLock($name)->getRemainingLifetime(), 1.0);
        $a->release($name);
        self::assertTrue($a->lockMayBeAvailable($name));
    }

    #[DataProvider('stores')]
    public function testReleaseAllGivesUpEveryHoldOfTheRequest(string $store): void
    {
        $names = [Env::name(), Env::name()];
        $a = self::backend($store);
        foreach ($names as $name) {
            self::assertTrue($a->acquire($name));
        }
        $a->releaseAll('another-request');
        self::assertFalse($a->lockMayBeAvailable($names[0]), 'another lock id releases nothing here');
        $a->releaseAll($a->getLockId());
        foreach ($names as $name) {
            self::assertTrue($a->lockMayBeAvailable($name));
        }
        self::assertTrue($a->acquire($names[0]));
        $a->releaseAll();
        self::assertTrue($a->lockMayBeAvailable($names[0]));
    }

    public function testLockIdsDifferPerRequest(): void
    {
        $a = self::backend('flock');
        $b = self::backend('flock');
        self::assertSame($a->getLockId(), $a->getLockId());
        self::assertNotSame($a->getLockId(), $b->getLockId());
        self::assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $a->getLockId());
    }

    #[DataProvider('stores')]
    public function testReleaseAtRequestEnd(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\LockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2], 60.0) ? "held\n" : "refused\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        self::assertSame(0, $child->wait());
        $a = self::backend($store);
        self::assertTrue($a->acquire($name), 'the request\'s end released it');
        $a->release($name);
    }

    #[DataProvider('stores')]
    public function testWaitEndsWithTheReleaseAndTakesNothing(string $store): void
    {
        $name = Env::name();
        $child = self::holdInChild($store, $name, 300000);
        $a = self::backend($store);
        self::assertFalse($a->acquire($name));
        $start = microtime(true);
        self::assertFalse($a->wait($name, 10), 'false: it may be available now');
        self::assertLessThan(5.0, microtime(true) - $start);
        self::assertTrue($a->lockMayBeAvailable($name), 'wait() took nothing');
        self::assertSame('released', $child->line());
        self::assertSame(0, $child->wait());
        self::assertTrue(self::backend($store)->acquire($name));
    }

    #[DataProvider('stores')]
    public function testWaitGivesUpAfterTheDelay(string $store): void
    {
        $name = Env::name();
        $child = self::holdInChild($store, $name, 1500000);
        $a = self::backend($store);
        $start = microtime(true);
        self::assertTrue($a->wait($name, 0.3), 'true: still held');
        $elapsed = microtime(true) - $start;
        self::assertGreaterThanOrEqual(0.29, $elapsed);
        self::assertLessThan(1.4, $elapsed);
        self::assertTrue($a->wait($name, 0), 'no delay: still held');
        self::assertSame('released', $child->line());
        self::assertSame(0, $child->wait());
        self::assertFalse($a->wait($name, 0));
        self::assertFalse($a->wait($name, 5), 'free: at once');
        self::assertFalse($a->wait($name, INF), 'no limit: at once when free');
        self::assertFalse($a->wait($name, 2e9));
    }

    #[DataProvider('stores')]
    public function testWaitIsTheStoresOwnWait(string $store): void
    {
        self::assertTrue(Factory::fromDsn(Env::dsn($store))->getStore()->waitUntilFree(Env::name(), 0.0), 'implemented');
        $this->testWaitEndsWithTheReleaseAndTakesNothing($store);
        $this->testWaitGivesUpAfterTheDelay($store);
    }

    public function testWaitOnAStoreThatIsDownThrows(): void
    {
        $server = stream_socket_server('tcp://127.0.0.1:0');
        $port = substr(strrchr(stream_socket_get_name($server, false), ':'), 1);
        fclose($server);
        $backend = new LockBackend(Factory::fromDsn("redis://127.0.0.1:$port?timeout=0.5"));
        $this->expectException(StorageException::class);
        $backend->wait(Env::name(), 1);
    }

    #[DataProvider('stores')]
    public function testReleaseAfterForceReleaseIsSilent(string $store): void
    {
        $name = Env::name();
        $a = self::backend($store);
        self::assertTrue($a->acquire($name));
        Factory::fromDsn(Env::dsn($store))->getStore()->forceRelease($name);
        $a->release($name);
        self::assertTrue($a->acquire($name));
        $a->release($name);
    }

    public function testGivesTheLockBehindAHold(): void
    {
        $name = Env::name();
        $a = self::backend('redis');
        self::assertNull($a->getLock($name));
        $a->acquire($name);
        self::assertIsInt($a->getLock($name)->getFencingToken());
        $a->release($name);
        self::assertNull($a->getLock($name));
    }

    #[DataProvider('stores')]
    public function testHoldsCarryTheRequestsLockId(string $store): void
    {
        $name = Env::name();
        $a = self::backend($store);
        self::assertTrue($a->acquire($name));
        self::assertSame($a->getLockId(), $a->getLock($name)->getOwner());
        self::assertFalse(self::backend($store)->acquire($name), 'another request, another owner');
        $a->release($name);
    }

    private static function holdInChild(string $store, string $name, int $microseconds)
    {
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\LockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2], 60.0) ? "held\n" : "refused\n";
            usleep((int) $argv[3]);
            $lock->release($argv[2]);
            echo "released\n";
            PHP, Env::dsn($store), $name, (string) $microseconds);
        self::assertSame('held', $child->line());

        return $child;
    }
}
