<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Tests;

use Drupal\Core\Site\Settings;
use Lock\Adapter\Drupal\LockBackend;
use Lock\Adapter\Drupal\PersistentLockBackend;
use Lock\Adapter\Drupal\StoreFactory;
use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * $settings['lock_ext']['auto_refresh']: `lock` and `lock.persistent` holds with a $timeout of
 * 1 s kept while their request holds them, persistent ones left to their $timeout when the
 * request ends, the bound, the values the setting takes.
 */
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

    /** @return array<string, array{string}> the stores whose holds outlive the request */
    public static function outliving(): array
    {
        return ['redis' => ['redis'], 'pgsql-table' => ['pgsql-table'], 'mysql-table' => ['mysql-table']];
    }

    private static function settings(string $store, mixed $autoRefresh): Settings
    {
        return new Settings(['lock_ext' => ['dsn' => Env::dsn($store), 'auto_refresh' => $autoRefresh]]);
    }

    private static function lock(string $store = 'redis', mixed $autoRefresh = true): LockBackend
    {
        $settings = self::settings($store, $autoRefresh);

        return StoreFactory::lockBackend(StoreFactory::fromSettings($settings), $settings);
    }

    /** Whether another process's request can take $name now: 'refused', or 'taken' (then released). */
    private static function elsewhere(string $name, string $store = 'redis'): string
    {
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\LockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2]) ? "taken\n" : "refused\n";
            $lock->releaseAll();
            PHP, Env::dsn($store), $name);
        $line = $child->line();
        self::assertSame(0, $child->wait());

        return $line;
    }

    public function testAHoldIsKeptPastItsTimeoutWhileTheRequestHoldsIt(): void
    {
        $name = Env::name();
        $lock = self::lock();
        self::assertTrue($lock->acquire($name, 1.0));
        sleep(3);
        self::assertSame('refused', self::elsewhere($name), 'another request');
        self::assertFalse($lock->lockMayBeAvailable($name));
        $lock->release($name);
        self::assertTrue($lock->lockMayBeAvailable($name), 'free right after the release');
        self::assertSame('taken', self::elsewhere($name));
    }

    public function testARenewalSetsTheTimeoutTheRefreshingGoesOnWith(): void
    {
        $name = Env::name();
        $lock = self::lock();
        self::assertTrue($lock->acquire($name, 1.0));
        self::assertTrue($lock->acquire($name, 6.0));
        sleep(3);
        // Refreshed every 2 s to 6 s: more than 3 s left (the first 1 s would leave at most 1).
        self::assertGreaterThan(3.0, $lock->getStore()->inspect($name)['ttl']);
        $lock->releaseAll();
        self::assertTrue($lock->lockMayBeAvailable($name));
    }

    /** lock.persistent: refreshed while its request holds; the request over, the hold runs out its $timeout. */
    #[DataProvider('outliving')]
    public function testAPersistentHoldRunsOutItsTimeoutOnceItsRequestHasEnded(string $store): void
    {
        $name = Env::name();
        $settings = self::settings($store, true);
        $persistent = StoreFactory::persistentLockBackend(StoreFactory::fromSettings($settings), $settings);
        self::assertTrue($persistent->acquire($name, 1.0));
        sleep(2);
        self::assertSame('refused', self::elsewhere($name, $store), 'refreshed while the request holds it');
        unset($persistent);
        self::assertFalse(self::lock($store)->lockMayBeAvailable($name), 'the request over, the hold stays');
        sleep(2);
        self::assertTrue(self::lock($store)->lockMayBeAvailable($name), 'and runs out its $timeout');
    }

    /** A batch's last request releases the persistent hold its first request took and left. */
    public function testALaterRequestReleasesThePersistentHoldAnEndedRequestLeft(): void
    {
        $name = Env::name();
        $factory = Factory::fromDsn(Env::dsn('redis'));
        $persistent = new PersistentLockBackend($factory, 'persistent', true);
        self::assertTrue($persistent->acquire($name, 1.0));
        sleep(2);
        unset($persistent);
        $later = new PersistentLockBackend($factory, 'persistent', true);
        self::assertFalse($later->acquire($name, 1.0), 'held by the earlier request');
        $later->release($name);
        self::assertTrue($later->lockMayBeAvailable($name), 'free right after');
    }

    public function testABoundEndsTheRefreshing(): void
    {
        $name = Env::name();
        $lock = self::lock('redis', 1.0);
        self::assertTrue($lock->acquire($name, 1.0));
        sleep(3);
        self::assertSame('taken', self::elsewhere($name), 'refreshed for 1 s, then ran out its last $timeout');
        $lock->release($name); // silent: gone already
    }

    /** Every store takes the setting; those whose holds do not expire need nothing. */
    #[DataProvider('stores')]
    public function testEveryStoreTakesTheSetting(string $store): void
    {
        $name = Env::name();
        $lock = self::lock($store);
        self::assertTrue($lock->acquire($name, 1.0));
        self::assertFalse((new LockBackend(Factory::fromDsn(Env::dsn($store))))->acquire($name));
        $lock->release($name);
        self::assertTrue($lock->lockMayBeAvailable($name));
    }

    /** @return array<string, array{mixed, bool|float}> */
    public static function goodValues(): array
    {
        return ['true' => [true, true], 'false' => [false, false], 'null, as absent' => [null, false], 'seconds' => [600, 600.0], 'a float' => [1.5, 1.5]];
    }

    #[DataProvider('goodValues')]
    public function testTheValuesTheSettingTakes(mixed $value, bool|float $expected): void
    {
        self::assertSame($expected, StoreFactory::autoRefresh(['dsn' => 'flock:', 'auto_refresh' => $value]));
        self::assertFalse(StoreFactory::autoRefresh(['dsn' => 'flock:']), 'absent: false');
    }

    /** @return array<string, array{mixed, class-string<\Throwable>, string}> */
    public static function badValues(): array
    {
        return [
            'negative' => [-1, \ValueError::class, '-1 given'],
            'zero' => [0, \ValueError::class, '0 given'],
            'NAN' => [NAN, \ValueError::class, 'NAN given'],
            'INF' => [INF, \ValueError::class, 'INF given'],
            'a string' => ['yes', \TypeError::class, 'string given'],
            'an array' => [[30], \TypeError::class, 'array given'],
        ];
    }

    #[DataProvider('badValues')]
    public function testABadValueIsRefusedWhenTheServiceIsBuilt(mixed $value, string $class, string $given): void
    {
        $settings = ['dsn' => Env::dsn('flock'), 'auto_refresh' => $value];
        try {
            StoreFactory::lockBackend(StoreFactory::fromSettings($settings), $settings);
            self::fail('the lock service took auto_refresh ' . var_export($value, true));
        } catch (\ValueError|\TypeError $e) {
            self::assertInstanceOf($class, $e);
            self::assertStringContainsString("\$settings['lock_ext']['auto_refresh'] must be true, false or a positive number of seconds", $e->getMessage());
            self::assertStringContainsString($given, $e->getMessage());
        }
    }

    public function testTheBackendsRefuseABadBound(): void
    {
        foreach ([static fn () => new LockBackend(Factory::fromDsn('flock:'), -1.0), static fn () => new PersistentLockBackend(Factory::fromDsn('flock:'), 'persistent', NAN)] as $make) {
            try {
                $make();
                self::fail('a bad bound was taken');
            } catch (\ValueError $e) {
                self::assertStringContainsString('$autoRefresh must be true, false or a positive number of seconds', $e->getMessage());
            }
        }
    }
}
