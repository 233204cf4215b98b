<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3\Tests;

use Lock\Adapter\Yii3\LockMutex;
use Lock\Adapter\Yii3\LockMutexFactory;
use Lock\Adapter\Yii3\ReleaseAtRequestEnd;
use Lock\Adapter\TestSupport\Env;
use Lock\ExpiredException;
use Lock\Factory;
use Lock\LostException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\Attributes\Group;
use PHPUnit\Framework\TestCase;
use Yiisoft\Mutex\Exception\MutexLockedException;
use Yiisoft\Mutex\Exception\MutexReleaseException;
use Yiisoft\Mutex\MutexFactoryInterface;
use Yiisoft\Mutex\Synchronizer;

final class LockMutexTest extends TestCase
{
    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    public static function stores(): array
    {
        return Env::stores();
    }

    public static function storesButFlock(): array
    {
        return array_diff_key(Env::stores(), ['flock' => true]);
    }

    private static function factory(string $store, ?float $ttl = 30.0): LockMutexFactory
    {
        return LockMutexFactory::fromDsn(Env::dsn($store), $ttl);
    }

    #[DataProvider('stores')]
    public function testExcludesUntilReleased(string $store): void
    {
        $name = Env::name();
        $factory = self::factory($store);
        self::assertInstanceOf(MutexFactoryInterface::class, $factory);
        $a = $factory->create($name);
        $b = $factory->create($name);

        self::assertTrue($a->acquire());
        self::assertFalse($b->acquire());
        $a->release();
        self::assertTrue($b->acquire());
        $b->release();
        $b->release(); // not held: a no-op
    }

    #[DataProvider('stores')]
    public function testIsNotReentrantAndFailsAtOnce(string $store): void
    {
        $name = Env::name();
        $factory = self::factory($store);
        $a = $factory->create($name);
        $b = $factory->create($name);
        self::assertTrue($a->acquire());

        $start = microtime(true);
        self::assertFalse($a->acquire(5), 'the same mutex again');
        self::assertFalse($b->acquire(5), 'another mutex of this process on the same name');
        self::assertLessThan(2.0, microtime(true) - $start, 'neither waits for its own process');
        $a->release();
    }

    #[DataProvider('stores')]
    public function testExcludesAnotherFactoryOnTheSameBackend(string $store): void
    {
        $name = Env::name();
        $a = self::factory($store)->create($name);
        $b = self::factory($store)->create($name);
        self::assertTrue($a->acquire());
        self::assertFalse($b->acquire());
        $start = microtime(true);
        self::assertFalse($b->acquire(1));
        self::assertGreaterThanOrEqual(0.99, microtime(true) - $start, 'the timeout is a wait');
        $a->release();
        self::assertTrue($b->acquire());
        $b->release();
    }

    #[DataProvider('stores')]
    public function testReleasesOnDestruction(string $store): void
    {
        $name = Env::name();
        $factory = self::factory($store);
        $a = $factory->create($name);
        self::assertTrue($a->acquire());
        unset($a);
        $b = $factory->create($name);
        self::assertTrue($b->acquire());
        $b->release();
    }

    #[DataProvider('stores')]
    public function testReleaseAtRequestEndReleasesWhatTheFactorysLiveMutexesHold(string $store): void
    {
        $kept = Env::name();
        $broken = Env::name();
        $theirs = Env::name();
        $factory = self::factory($store);
        $elsewhere = self::factory($store);
        $a = $factory->create($kept);
        $b = $factory->create($broken);
        $idle = $factory->create(Env::name());
        $c = $elsewhere->create($theirs);
        self::assertTrue($a->acquire());
        self::assertTrue($b->acquire());
        self::assertTrue($c->acquire());
        Factory::fromDsn(Env::dsn($store))->getStore()->forceRelease($broken);

        // The worker ends the request (yiisoft/yii-http's AfterRequest).
        (new ReleaseAtRequestEnd($factory))(new \stdClass());
        self::assertNull($a->getLock());
        self::assertNull($b->getLock(), 'a broken hold does not stop the others');
        self::assertNull($idle->getLock());
        $probe = $elsewhere->create($kept);
        self::assertTrue($probe->acquire(), 'the end of the request released it');
        $probe->release();
        self::assertNotNull($c->getLock(), "another factory's mutexes are left");
        self::assertFalse($factory->create($theirs)->acquire());

        // The next request of the same worker.
        self::assertTrue($a->acquire());
        $factory->releaseAll();
        self::assertNull($a->getLock());
        $factory->releaseAll();
        $c->release();
    }

    #[DataProvider('stores')]
    public function testCreateAndAcquireThrowsWhenLocked(string $store): void
    {
        $name = Env::name();
        $factory = self::factory($store);
        $held = $factory->createAndAcquire($name);
        self::assertInstanceOf(LockMutex::class, $held);
        try {
            $factory->createAndAcquire($name);
            self::fail('MutexLockedException expected');
        } catch (MutexLockedException $e) {
            self::assertStringContainsString($name, $e->getMessage());
        }
        $held->release();
        $factory->createAndAcquire($name)->release();
    }

    #[DataProvider('stores')]
    public function testSynchronizerRunsTheCallbackUnderTheLock(string $store): void
    {
        $name = Env::name();
        $factory = self::factory($store);
        $synchronizer = new Synchronizer($factory);
        $probe = self::factory($store);

        $result = $synchronizer->execute($name, function () use ($probe, $name): string {
            self::assertFalse($probe->create($name)->acquire(), 'held while the callback runs');

            return 'done';
        });
        self::assertSame('done', $result);

        try {
            $synchronizer->execute($name, static fn () => throw new \DomainException('boom'));
            self::fail('the callback\'s exception is expected');
        } catch (\DomainException $e) {
            self::assertSame('boom', $e->getMessage());
        }
        $free = $probe->create($name);
        self::assertTrue($free->acquire(), 'released after the callback, also when it threw');
        $free->release();
    }

    #[DataProvider('stores')]
    public function testTimeoutWaitsForAnotherProcessToRelease(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = Lock\Adapter\Yii3\LockMutexFactory::fromDsn($argv[1])->create($argv[2]);
            echo $mutex->acquire() ? "held\n" : "refused\n";
            usleep(300000);
            $mutex->release();
            echo "released\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());

        $mutex = self::factory($store)->create($name);
        self::assertFalse($mutex->acquire());
        $start = microtime(true);
        self::assertTrue($mutex->acquire(10), 'the wait ends with the child\'s release');
        self::assertLessThan(5.0, microtime(true) - $start);
        self::assertSame('released', $child->line());
        self::assertSame(0, $child->wait());
        $mutex->release();
    }

    #[DataProvider('stores')]
    public function testAHoldLeftAtTheEndOfAScriptIsReleased(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = Lock\Adapter\Yii3\LockMutexFactory::fromDsn($argv[1], 60.0)->create($argv[2]);
            echo $mutex->acquire() ? "held\n" : "refused\n";
            $GLOBALS['keep'] = $mutex;
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        self::assertSame(0, $child->wait());
        $mutex = self::factory($store)->create($name);
        self::assertTrue($mutex->acquire());
        $mutex->release();
    }

    public function testAHoldExpiresAfterItsTtlOnRedis(): void
    {
        $name = Env::name();
        $a = self::factory('redis', 0.2)->create($name);
        $b = self::factory('redis')->create($name);
        self::assertTrue($a->acquire());
        self::assertEqualsWithDelta(0.2, $a->getLock()->getRemainingLifetime(), 0.1);
        usleep(400000);
        self::assertTrue($b->acquire(), 'the expired hold no longer excludes');
        try {
            $a->release();
            self::fail('MutexReleaseException expected');
        } catch (MutexReleaseException $e) {
            self::assertInstanceOf(LostException::class, $e->getPrevious());
            self::assertStringContainsString($name, $e->getMessage());
        }
        $a->release(); // released locally: a no-op now
        $b->release();
        self::assertTrue($a->acquire());
        $a->release();
    }

    public function testDestructionOfAnExpiredHoldIsSilent(): void
    {
        $a = self::factory('redis', 0.1)->create(Env::name());
        self::assertTrue($a->acquire());
        usleep(250000);
        unset($a);
        $this->addToAssertionCount(1);
    }

    #[DataProvider('storesButFlock')]
    public function testReleaseAfterForceReleaseThrows(string $store): void
    {
        $this->releaseAfterForceRelease($store);
    }

    public function testReleaseAfterForceReleaseThrowsOnFlock(): void
    {
        $this->releaseAfterForceRelease('flock');
    }

    private function releaseAfterForceRelease(string $store): void
    {
        $name = Env::name();
        $mutex = self::factory($store)->create($name);
        self::assertTrue($mutex->acquire());
        Factory::fromDsn(Env::dsn($store))->getStore()->forceRelease($name);
        try {
            $mutex->release();
            self::fail('MutexReleaseException expected');
        } catch (MutexReleaseException $e) {
            self::assertInstanceOf(ExpiredException::class, $e->getPrevious());
        }
        self::assertTrue($mutex->acquire());
        $mutex->release();
    }

    /** A redlock:// DSN: the combined store, one hold over three Redis servers. */
    public function testARedlockDsnGivesTheCombinedStore(): void
    {
        $name = Env::name();
        $factory = self::factory('redlock');
        self::assertInstanceOf(\Lock\Store\CombinedStore::class, $factory->getStore());
        $a = $factory->create($name);
        $b = self::factory('redlock')->create($name);

        self::assertTrue($a->acquire());
        self::assertFalse($b->acquire());
        $a->release();
        self::assertTrue($b->acquire());
        $b->release();
        self::assertFalse($factory->getStore()->isLocked($name));
    }

    public function testNullTtlMeansNoExpiry(): void
    {
        $mutex = self::factory('redis', null)->create(Env::name());
        self::assertTrue($mutex->acquire());
        self::assertNull($mutex->getLock()->getRemainingLifetime());
        $mutex->release();
        self::assertNull($mutex->getLock());
    }

    public function testRefusesABadTtl(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('$ttl');
        new LockMutexFactory(Factory::fromDsn('flock:'), 0.0);
    }
}
