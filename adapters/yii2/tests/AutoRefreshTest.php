<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii2\Tests;

use Lock\Adapter\TestSupport\Env;
use Lock\Adapter\Yii2\LockMutex;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** LockMutex::$autoRefresh: holds with a $ttl of 1 s kept while held, left to $ttl without autoRelease, the bound, the values. */
final class AutoRefreshTest extends TestCase
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
        return new LockMutex($config + ['dsn' => Env::dsn($store), 'ttl' => 1.0, 'autoRefresh' => true]);
    }

    /** Whether another process can take $name now: 'refused', or 'taken' (then released). */
    private static function elsewhere(string $name): string
    {
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1]]);
            echo $mutex->acquire($argv[2]) ? "taken\n" : "refused\n";
            $mutex->release($argv[2]);
            PHP, Env::dsn('redis'), $name);
        $line = $child->line();
        self::assertSame(0, $child->wait());

        return $line;
    }

    public function testAHoldIsKeptPastItsTtlForAsLongAsTheComponentHoldsIt(): void
    {
        $name = Env::name();
        $mutex = self::mutex('redis');
        self::assertTrue($mutex->acquire($name));
        sleep(3);
        self::assertSame('refused', self::elsewhere($name));
        self::assertTrue($mutex->release($name));
        self::assertSame('taken', self::elsewhere($name), 'free right after the release');
    }

    /** Without autoRelease the hold outlives the component, as Yii's own mutexes' do: not refreshed, it runs out $ttl. */
    public function testWithoutAutoReleaseAHoldLeftWhenTheComponentGoesRunsOutItsTtl(): void
    {
        $name = Env::name();
        $mutex = self::mutex('redis', ['autoRelease' => false]);
        self::assertTrue($mutex->acquire($name));
        sleep(2);
        self::assertSame('refused', self::elsewhere($name), 'refreshed while the component holds it');
        unset($mutex);
        self::assertSame('refused', self::elsewhere($name), 'it outlives the component');
        sleep(2);
        self::assertSame('taken', self::elsewhere($name), 'and runs out its $ttl');
    }

    public function testABoundEndsTheRefreshing(): void
    {
        $name = Env::name();
        $mutex = self::mutex('redis', ['autoRefresh' => 1.0]);
        self::assertTrue($mutex->acquire($name));
        sleep(3);
        self::assertSame('taken', self::elsewhere($name), 'refreshed for 1 s, then ran out its last $ttl');
        self::assertFalse($mutex->release($name), 'the hold had expired');
    }

    /** Every store takes the option; those whose holds do not expire need nothing. */
    #[DataProvider('stores')]
    public function testEveryStoreTakesTheOption(string $store): void
    {
        $name = Env::name();
        $mutex = self::mutex($store);
        self::assertTrue($mutex->acquire($name));
        self::assertFalse((new LockMutex(['dsn' => Env::dsn($store)]))->acquire($name));
        self::assertTrue($mutex->release($name));
    }

    public function testAWholeNumberIsABoundInSeconds(): void
    {
        self::assertSame(600.0, self::mutex('flock', ['autoRefresh' => 600])->autoRefresh);
    }

    /** @return array<string, array{mixed, class-string<\Throwable>}> */
    public static function badValues(): array
    {
        return [
            'negative' => [-1.0, \ValueError::class], 'zero' => [0, \ValueError::class], 'NAN' => [NAN, \ValueError::class],
            'INF' => [INF, \ValueError::class], 'a string' => ['yes', \TypeError::class], 'null' => [null, \TypeError::class],
        ];
    }

    #[DataProvider('badValues')]
    public function testRefusesABadValue(mixed $value, string $class): void
    {
        $this->expectException($class);
        $this->expectExceptionMessage('$autoRefresh must be true, false or a positive number of seconds');
        new LockMutex(['dsn' => 'flock:', 'autoRefresh' => $value]);
    }
}
