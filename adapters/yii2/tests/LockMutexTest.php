<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii2\Tests;

use Lock\Adapter\Yii2\LockMutex;
use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\Attributes\Group;
use PHPUnit\Framework\TestCase;
use yii\base\Application;

final class LockMutexTest extends TestCase
{
    protected function tearDown(): void
    {
        \Yii::$app = null;
        Env::cleanUp();
    }

    public static function stores(): array
    {
        return Env::stores();
    }

    private static function mutex(string $store, array $config = []): LockMutex
    {
        return new LockMutex(['dsn' => Env::dsn($store)] + $config);
    }

    #[DataProvider('stores')]
    public function testExcludesAnotherComponentUntilReleased(string $store): void
    {
        $name = Env::name();
        $a = self::mutex($store);
        $b = self::mutex($store);

        self::assertTrue($a->acquire($name));
        self::assertFalse($b->acquire($name));
        self::assertTrue($a->release($name));
        self::assertTrue($b->acquire($name));
        self::assertFalse($a->acquire($name));
        self::assertTrue($b->release($name));
    }

    #[DataProvider('stores')]
    public function testIsNotReentrantAndFailsAtOnce(string $store): void
    {
        $name = Env::name();
        $mutex = self::mutex($store);

        self::assertTrue($mutex->acquire($name));
        $start = microtime(true);
        self::assertFalse($mutex->acquire($name, 5));
        self::assertLessThan(2.0, microtime(true) - $start, 'a second acquire of a name held here must not wait for itself');
        self::assertTrue($mutex->release($name));
        self::assertFalse($mutex->release($name), 'a name not held answers false');
    }

    #[DataProvider('stores')]
    public function testTimeoutIsAWaitThatEndsWithFalse(string $store): void
    {
        $name = Env::name();
        $a = self::mutex($store);
        $b = self::mutex($store);
        self::assertTrue($a->acquire($name));

        $start = microtime(true);
        self::assertFalse($b->acquire($name, 0.3));
        $elapsed = microtime(true) - $start;
        self::assertGreaterThanOrEqual(0.29, $elapsed);
        self::assertLessThan(3.0, $elapsed);
        $a->release($name);
    }

    #[DataProvider('stores')]
    public function testTimeoutWaitsForAnotherProcessToRelease(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1]]);
            echo $mutex->acquire($argv[2]) ? "held\n" : "refused\n";
            usleep(300000);
            echo $mutex->release($argv[2]) ? "released\n" : "not released\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());

        $mutex = self::mutex($store);
        self::assertFalse($mutex->acquire($name), 'held by the child');
        $start = microtime(true);
        self::assertTrue($mutex->acquire($name, 10), 'the wait ends with the child\'s release');
        self::assertLessThan(5.0, microtime(true) - $start);
        self::assertSame('released', $child->line());
        self::assertSame(0, $child->wait());
        self::assertTrue($mutex->release($name));
    }

    #[DataProvider('stores')]
    public function testAutoReleaseFreesWhatAScriptLeftHeld(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1], 'ttl' => 60.0]);
            echo $mutex->acquire($argv[2]) ? "held\n" : "refused\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        self::assertSame(0, $child->wait());

        $mutex = self::mutex($store);
        self::assertTrue($mutex->acquire($name));
        $mutex->release($name);
    }

    #[DataProvider('stores')]
    public function testAutoReleaseFreesWhatARequestLeftHeldWhenTheApplicationEndsIt(string $store): void
    {
        $app = new Application();
        $first = Env::name();
        $second = Env::name();
        $mutex = self::mutex($store);
        $other = self::mutex($store);

        self::assertTrue($mutex->acquire($first));
        self::assertTrue($mutex->acquire($second));
        $app->trigger(Application::EVENT_BEFORE_REQUEST);
        self::assertFalse($other->acquire($first), 'held until the request ends');

        $app->trigger(Application::EVENT_AFTER_REQUEST);
        self::assertNull($mutex->getLock($first));
        self::assertFalse($mutex->release($first), 'no longer held here');
        self::assertTrue($other->acquire($first), 'the end of the request released it');
        self::assertTrue($other->acquire($second));
        self::assertTrue($other->release($first));
        self::assertTrue($other->release($second));

        // The next request of the same worker takes the name again.
        self::assertTrue($mutex->acquire($first));
        $app->trigger(Application::EVENT_AFTER_REQUEST);
        self::assertTrue($other->acquire($first));
        self::assertTrue($other->release($first));
    }

    #[DataProvider('stores')]
    public function testWithoutAutoReleaseTheEndOfARequestKeepsTheHolds(string $store): void
    {
        $app = new Application();
        $name = Env::name();
        $mutex = self::mutex($store, ['autoRelease' => false]);

        self::assertTrue($mutex->acquire($name));
        $app->trigger(Application::EVENT_AFTER_REQUEST);
        self::assertFalse(self::mutex($store)->acquire($name), 'still held after the request');
        self::assertTrue($mutex->release($name));
    }

    public function testReleaseAllReleasesEveryHoldOfTheComponentOnly(): void
    {
        $mine = Env::name();
        $theirs = Env::name();
        $mutex = self::mutex('flock');
        $other = self::mutex('flock');

        self::assertTrue($mutex->acquire($mine));
        self::assertTrue($other->acquire($theirs));
        $mutex->releaseAll();
        self::assertTrue($other->acquire($mine));
        self::assertFalse($mutex->acquire($theirs), 'the other component still holds its own');
        $other->releaseAll();
        self::assertTrue($mutex->acquire($theirs));
        self::assertTrue($mutex->release($theirs));
    }

    public function testWithoutAutoReleaseARedisHoldOutlivesTheScriptUntilItsTtl(): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1], 'ttl' => 0.5, 'autoRelease' => false]);
            echo $mutex->acquire($argv[2]) ? "held\n" : "refused\n";
            PHP, Env::dsn('redis'), $name);
        self::assertSame('held', $child->line());
        self::assertSame(0, $child->wait());

        $mutex = self::mutex('redis');
        self::assertFalse($mutex->acquire($name), 'the hold outlives its script');
        self::assertTrue($mutex->acquire($name, 5), 'until its TTL');
        $mutex->release($name);
    }

    public static function processBound(): array
    {
        return ['flock' => ['flock'], 'semaphore' => ['semaphore']];
    }

    #[DataProvider('processBound')]
    public function testWithoutAutoReleaseAFlockOrSemaphoreHoldEndsWithTheProcess(string $store): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1], 'autoRelease' => false]);
            echo $mutex->acquire($argv[2]) ? "held\n" : "refused\n";
            unset($mutex);
            gc_collect_cycles();
            echo Lock\Factory::fromDsn($argv[1])->getStore()->isLocked($argv[2]) ? "outlives the component\n" : "gone with the component\n";
            PHP, Env::dsn($store), $name);
        self::assertSame('held', $child->line());
        self::assertSame('outlives the component', $child->line());
        self::assertSame(0, $child->wait());

        $mutex = self::mutex($store);
        self::assertTrue($mutex->acquire($name), 'the end of the process ended it');
        $mutex->release($name);
    }

    public function testAHoldExpiresAfterItsTtlOnRedis(): void
    {
        $name = Env::name();
        $a = self::mutex('redis', ['ttl' => 0.2]);
        $b = self::mutex('redis');

        self::assertTrue($a->acquire($name));
        self::assertEqualsWithDelta(0.2, $a->getLock($name)->getRemainingLifetime(), 0.1);
        usleep(400000);
        self::assertTrue($b->acquire($name), 'the expired hold no longer excludes');
        self::assertFalse($a->release($name), 'release of a lost hold answers false');
        self::assertFalse($a->release($name));
        self::assertTrue($b->release($name));
        self::assertTrue($a->acquire($name), 'the lost name can be acquired again');
        self::assertTrue($a->release($name));
    }

    public function testNullTtlMeansNoExpiry(): void
    {
        $name = Env::name();
        $mutex = self::mutex('redis', ['ttl' => null]);
        self::assertTrue($mutex->acquire($name));
        self::assertNull($mutex->getLock($name)->getRemainingLifetime());
        self::assertTrue($mutex->release($name));
    }

    public static function storesButFlock(): array
    {
        return array_diff_key(Env::stores(), ['flock' => true]);
    }

    #[DataProvider('storesButFlock')]
    public function testReleaseAfterForceReleaseAnswersFalse(string $store): void
    {
        $this->releaseAfterForceRelease($store);
    }

    public function testReleaseAfterForceReleaseAnswersFalseOnFlock(): void
    {
        $this->releaseAfterForceRelease('flock');
    }

    private function releaseAfterForceRelease(string $store): void
    {
        $name = Env::name();
        $mutex = self::mutex($store);
        self::assertTrue($mutex->acquire($name));
        Factory::fromDsn(Env::dsn($store))->getStore()->forceRelease($name);
        self::assertFalse($mutex->release($name));
        self::assertTrue($mutex->acquire($name));
        self::assertTrue($mutex->release($name));
    }

    public function testGivesTheLockBehindAHold(): void
    {
        $name = Env::name();
        $mutex = self::mutex('redis');
        self::assertNull($mutex->getLock($name));
        $mutex->acquire($name);
        $first = $mutex->getLock($name)->getFencingToken();
        $mutex->release($name);
        $mutex->acquire($name);
        self::assertGreaterThan($first, $mutex->getLock($name)->getFencingToken());
        $mutex->release($name);
    }

    /** A redlock:// DSN: the combined store, one hold over three Redis servers. */
    public function testARedlockDsnGivesTheCombinedStore(): void
    {
        $name = Env::name();
        $a = self::mutex('redlock');
        $b = self::mutex('redlock');
        self::assertInstanceOf(\Lock\Store\CombinedStore::class, $a->getStore());

        self::assertTrue($a->acquire($name));
        self::assertFalse($b->acquire($name));
        self::assertTrue($a->release($name));
        self::assertTrue($b->acquire($name));
        self::assertTrue($b->release($name));
        self::assertFalse($a->getStore()->isLocked($name));
    }

    public function testTakesAReadyFactory(): void
    {
        $name = Env::name();
        $mutex = new LockMutex(['factory' => Factory::fromDsn(Env::dsn('flock'))]);
        self::assertTrue($mutex->acquire($name));
        self::assertTrue(Factory::fromDsn(Env::dsn('flock'))->getStore()->isLocked($name));
        self::assertTrue($mutex->release($name));
    }

    public function testRefusesABadTtl(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('$ttl');
        new LockMutex(['dsn' => 'flock:', 'ttl' => -1.0]);
    }

    public function testRefusesABadDsn(): void
    {
        $this->expectException(\ValueError::class);
        new LockMutex(['dsn' => 'nosuch://x']);
    }
}
