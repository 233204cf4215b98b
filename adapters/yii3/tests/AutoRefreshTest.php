<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3\Tests;

use Lock\Adapter\TestSupport\Env;
use Lock\Adapter\Yii3\LockMutexFactory;
use Lock\ExpiredException;
use Lock\Factory;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Yiisoft\Mutex\Exception\MutexReleaseException;
use Yiisoft\Mutex\Synchronizer;

/** LockMutexFactory's $autoRefresh: mutexes with a $ttl of 1 s kept while they hold, the bound, the values it takes. */
final class AutoRefreshTest extends TestCase
{
    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    public static function stores(): array
    {
        return Env::stores();
    }

    /** Whether another process (a factory without auto-refresh) can take $name now: 'refused', or 'taken' (then released). */
    private static function elsewhere(string $name): string
    {
        $child = Env::child(<<<'PHP'
            $mutex = Lock\Adapter\Yii3\LockMutexFactory::fromDsn($argv[1])->create($argv[2]);
            echo $mutex->acquire() ? "taken\n" : "refused\n";
            $mutex->release();
            PHP, Env::dsn('redis'), $name);
        $line = $child->line();
        self::assertSame(0, $child->wait());

        return $line;
    }

    public function testAHoldIsKeptPastItsTtlForAsLongAsTheMutexHoldsIt(): void
    {
        $name = Env::name();
        $mutex = LockMutexFactory::fromDsn(Env::dsn('redis'), 1.0, true)->create($name);
        self::assertTrue($mutex->acquire());
        sleep(3);
        self::assertSame('refused', self::elsewhere($name), 'another process');
        self::assertFalse(LockMutexFactory::fromDsn(Env::dsn('redis'))->create($name)->acquire(), 'another factory of this process');
        $mutex->release();
        self::assertSame('taken', self::elsewhere($name), 'free right after the release');
    }

    public function testSynchronizerHoldsForAsLongAsTheCallbackRuns(): void
    {
        $name = Env::name();
        $synchronizer = new Synchronizer(LockMutexFactory::fromDsn(Env::dsn('redis'), 1.0, true));
        $result = $synchronizer->execute($name, static function () use ($name): string {
            sleep(2);
            self::assertSame('refused', self::elsewhere($name));

            return 'done';
        });
        self::assertSame('done', $result);
        self::assertSame('taken', self::elsewhere($name));
    }

    /** A bound: a hung process cannot keep the mutex for ever; the hold runs out $ttl after it. */
    public function testABoundEndsTheRefreshing(): void
    {
        $name = Env::name();
        $mutex = LockMutexFactory::fromDsn(Env::dsn('redis'), 1.0, 1.0)->create($name);
        self::assertTrue($mutex->acquire());
        sleep(3);
        self::assertSame('taken', self::elsewhere($name));
        try {
            $mutex->release();
            self::fail('MutexReleaseException expected');
        } catch (MutexReleaseException $e) {
            self::assertInstanceOf(ExpiredException::class, $e->getPrevious());
        }
    }

    /** Every store takes the option; those whose holds do not expire need nothing. */
    #[DataProvider('stores')]
    public function testEveryStoreTakesTheOption(string $store): void
    {
        $name = Env::name();
        $factory = LockMutexFactory::fromDsn(Env::dsn($store), 1.0, true);
        $mutex = $factory->create($name);
        self::assertTrue($mutex->acquire());
        self::assertFalse(LockMutexFactory::fromDsn(Env::dsn($store))->create($name)->acquire());
        $mutex->release();
        self::assertTrue($factory->create($name)->acquire());
    }

    /** @return array<string, array{float}> */
    public static function badBounds(): array
    {
        return ['negative' => [-1.0], 'zero' => [0.0], 'NAN' => [NAN], 'INF' => [INF]];
    }

    #[DataProvider('badBounds')]
    public function testABadBoundIsRefused(float $bound): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('Argument #3 ($autoRefresh) must be true, false or a positive number of seconds');
        new LockMutexFactory(Factory::fromDsn('flock:'), 30.0, $bound);
    }

    public function testAnythingButABoolOrANumberIsATypeError(): void
    {
        $this->expectException(\TypeError::class);
        LockMutexFactory::fromDsn('flock:', 30.0, 'yes');
    }
}
