<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Bus\UniqueLock;
use Illuminate\Container\Container;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\ExtensionStore;
use Lock\Adapter\Laravel\Tests\Support\App;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * A lock-ext store's auto_refresh on Redis: holds with $seconds of 1 kept for as long as the
 * lock object holds them (Cache::lock(), block(), WithoutOverlapping), released by their owner
 * from anywhere, dropped ones running out their $seconds, unique jobs' kept by the dispatching
 * process; and the values the option takes.
 */
final class AutoRefreshTest extends TestCase
{
    private string $name;

    protected function setUp(): void
    {
        App::boot('redis', null, ['auto_refresh' => true]);
        $this->name = 'lv-ar-' . bin2hex(random_bytes(8));
    }

    private function native(): Store
    {
        $store = Cache::store()->getStore();
        self::assertInstanceOf(ExtensionStore::class, $store);

        return $store->getFactory()->getStore();
    }

    /** Whether another process (a store without auto_refresh) finds $name taken: 'held', or 'taken' (then released). */
    private static function elsewhere(string $name): string
    {
        return Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis');
            $lock = Illuminate\Support\Facades\Cache::lock($args['name'], 10);
            echo $lock->get() ? 'taken' : 'held';
            $lock->release();
            PHP, ['name' => $name]);
    }

    public function testAHoldIsKeptPastItsSecondsForAsLongAsTheLockObjectHoldsIt(): void
    {
        $lock = Cache::lock($this->name, 1);
        self::assertTrue($lock->get());
        sleep(3);
        self::assertSame('held', self::elsewhere($this->name), 'another process');
        self::assertFalse(Cache::lock($this->name, 1)->get(), 'another lock object');
        self::assertTrue($lock->isOwnedByCurrentProcess());
        self::assertTrue($lock->release());
        self::assertFalse($this->native()->isLocked($this->name), 'free right after the release');
        self::assertSame('taken', self::elsewhere($this->name));
    }

    public function testBlockWithACallbackHoldsForAsLongAsTheCallbackRuns(): void
    {
        $result = Cache::lock($this->name, 1)->block(5, function (): string {
            sleep(2);
            self::assertSame('held', self::elsewhere($this->name));

            return 'done';
        });
        self::assertSame('done', $result);
        self::assertFalse($this->native()->isLocked($this->name), 'released by block()');
    }

    /** WithoutOverlapping with expireAfter(1): the lock lasts as long as the job runs, here 3 s. */
    public function testWithoutOverlappingHoldsForAsLongAsTheJobRuns(): void
    {
        $job = new class () {
            public array $released = [];

            public function release($delay = 0): void
            {
                $this->released[] = $delay;
            }
        };
        $middleware = (new WithoutOverlapping($this->name))->shared()->releaseAfter(7)->expireAfter(1);
        $ran = false;
        $middleware->handle($job, function () use (&$ran): void {
            sleep(3);
            // The same job in another worker, meanwhile: released back to the queue, not run.
            $out = Child::run(<<<'PHP'
                Lock\Adapter\Laravel\Tests\Support\App::boot('redis', null, ['auto_refresh' => true]);
                $job = new class () {
                    public array $released = [];

                    public function release($delay = 0): void
                    {
                        $this->released[] = $delay;
                    }
                };
                (new Illuminate\Queue\Middleware\WithoutOverlapping($args['key']))->shared()->releaseAfter(7)->expireAfter(1)
                    ->handle($job, function (): void {
                        echo 'ran ';
                    });
                echo $job->released === [7] ? 'released back' : 'not released';
                PHP, ['key' => $this->name]);
            self::assertSame('released back', $out);
            $ran = true;
        });
        self::assertTrue($ran);
        self::assertSame([], $job->released);
        self::assertFalse($this->native()->isLocked($middleware->getLockKey($job)), 'free once the job has run');
    }

    /** Laravel's way of handing a lock to a queued job: the job releases it by its owner (restoreLock()). */
    public function testItsOwnerReleasesTheHoldFromAnotherProcess(): void
    {
        $lock = Cache::lock($this->name, 1);
        self::assertTrue($lock->get());
        sleep(2);
        self::assertTrue($this->native()->isLocked($this->name), 'kept past its seconds');
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis', null, ['auto_refresh' => true]);
            $restored = Illuminate\Support\Facades\Cache::restoreLock($args['name'], $args['owner']);
            echo $restored->isOwnedByCurrentProcess() ? 'owned ' : 'not owned ';
            echo $restored->release() ? 'released' : 'not released';
            PHP, ['name' => $this->name, 'owner' => $lock->owner()]);
        self::assertSame('owned released', $out);
        self::assertFalse($this->native()->isLocked($this->name), 'free right after');
        self::assertFalse($lock->release(), 'released elsewhere already');
        self::assertFalse($lock->isOwnedByCurrentProcess());
    }

    public function testAnotherLockObjectOfTheOwnerReleasesTheHold(): void
    {
        $owner = 'owner-' . bin2hex(random_bytes(8));
        $lock = Cache::lock($this->name, 1, $owner);
        self::assertTrue($lock->get());
        sleep(2);
        self::assertTrue(Cache::restoreLock($this->name, $owner)->isOwnedByCurrentProcess());
        self::assertTrue(Cache::lock($this->name, 1, $owner)->release());
        self::assertFalse($this->native()->isLocked($this->name), 'free right after');
        self::assertFalse($lock->release());
    }

    /** A lock object dropped unreleased (a "once per N seconds" guard, the scheduler's mutexes): its $seconds, as in Laravel. */
    public function testAHoldWhoseLockObjectIsDroppedRunsOutItsSeconds(): void
    {
        self::assertTrue(Cache::lock($this->name, 1)->get());
        self::assertTrue($this->native()->isLocked($this->name));
        sleep(2);
        self::assertFalse($this->native()->isLocked($this->name), 'not refreshed once its lock object was gone');
    }

    /**
     * ShouldBeUnique: Laravel takes the lock at dispatch through a lock object it drops at once.
     * The dispatching process refreshes it until the worker releases it (forceRelease()).
     */
    public function testAUniqueJobsLockIsKeptByTheDispatchingProcessUntilTheWorkerReleasesIt(): void
    {
        $job = new Support\UniqueJob($this->name);
        $job->uniqueFor = 1;
        $unique = new UniqueLock(Container::getInstance()->make('cache.store'));
        self::assertTrue($unique->acquire($job));
        sleep(2);
        self::assertFalse($unique->acquire($job), 'still queued past uniqueFor: not dispatched again');
        self::assertSame('held', self::elsewhere(UniqueLock::getKey($job)));
        $unique->release($job);
        self::assertFalse($this->native()->isLocked(UniqueLock::getKey($job)));
        self::assertTrue($unique->acquire($job), 'run and released: it can be dispatched again');
        $unique->release($job);
    }

    /** ... and only while that process lives: dispatched by a command that ends, it runs out uniqueFor. */
    public function testAUniqueJobsLockRunsOutItsTtlOnceTheDispatchingProcessHasEnded(): void
    {
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis', null, ['auto_refresh' => true]);
            $job = new Lock\Adapter\Laravel\Tests\Support\UniqueJob($args['id']);
            $job->uniqueFor = 2;
            $unique = new Illuminate\Bus\UniqueLock(Illuminate\Container\Container::getInstance()->make('cache.store'));
            echo $unique->acquire($job) ? 'dispatched' : 'not unique';
            PHP, ['id' => $this->name]);
        self::assertSame('dispatched', $out);
        $key = UniqueLock::getKey(new Support\UniqueJob($this->name));
        self::assertTrue($this->native()->isLocked($key));
        sleep(3);
        self::assertFalse($this->native()->isLocked($key), 'ran out its TTL after the dispatching process');
    }

    public function testRefreshZeroTakesTheExpiryOffForGood(): void
    {
        $lock = Cache::lock($this->name, 1);
        self::assertTrue($lock->get());
        self::assertTrue($lock->refresh(0));
        sleep(1);
        self::assertNull($this->native()->inspect($this->name)['ttl'], 'the refreshing does not put a TTL back');
        self::assertTrue($lock->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    /** A number bounds the refreshing: a hung process cannot keep the lock for ever. */
    public function testABoundEndsTheRefreshing(): void
    {
        App::boot('redis', null, ['auto_refresh' => 1.0]);
        self::assertSame(1.0, Cache::store()->getStore()->getAutoRefresh());
        $lock = Cache::lock($this->name, 1);
        self::assertTrue($lock->get());
        sleep(3);
        self::assertFalse($this->native()->isLocked($this->name), 'refreshed for 1 s, then ran out its last TTL');
        self::assertFalse($lock->release());
    }

    /** The extension accepts the option on process-bound stores, whose holds need none. */
    public function testAProcessBoundStoreTakesTheOption(): void
    {
        App::boot('flock', null, ['auto_refresh' => true]);
        $lock = Cache::lock($this->name, 1);
        self::assertTrue($lock->get());
        self::assertFalse(Cache::lock($this->name, 1)->get());
        self::assertTrue($lock->release());
        self::assertTrue(Cache::lock($this->name, 1)->get(fn () => true));
    }

    /** @return array<string, array{mixed, bool|float}> */
    public static function goodValues(): array
    {
        return [
            'true' => [true, true], 'false' => [false, false], 'absent (null)' => [null, false],
            'seconds' => [600, 600.0], 'a float' => [1.5, 1.5], 'a numeric string, as env() gives it' => ['3600', 3600.0],
        ];
    }

    #[DataProvider('goodValues')]
    public function testTheValuesTheOptionTakes(mixed $value, bool|float $expected): void
    {
        App::boot('redis', null, ['auto_refresh' => $value]);
        self::assertSame($expected, Cache::store()->getStore()->getAutoRefresh());
    }

    /** @return array<string, array{mixed, string}> */
    public static function badValues(): array
    {
        return [
            'negative' => [-1, '-1 given'], 'zero' => [0, '0 given'], 'zero seconds' => [0.0, '0.0 given'],
            'NAN' => [NAN, 'NAN given'], 'INF' => [INF, 'INF given'], 'a word' => ['yes', "'yes' given"],
            'an empty string' => ['', "'' given"], 'an array' => [[30], 'array given'],
        ];
    }

    #[DataProvider('badValues')]
    public function testABadValueIsRefusedWhenTheStoreIsConfigured(mixed $value, string $given): void
    {
        App::boot('redis', null, ['auto_refresh' => $value]);
        try {
            Cache::store();
            self::fail('the store took auto_refresh ' . var_export($value, true));
        } catch (\InvalidArgumentException $e) {
            self::assertStringContainsString('The lock-ext cache store [locks]: "auto_refresh" must be true, false or a positive number of seconds', $e->getMessage());
            self::assertStringContainsString($given, $e->getMessage());
        }
    }

    public function testExtensionStoreRefusesABadValue(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('"auto_refresh" must be true, false or a positive number of seconds');
        new ExtensionStore(Cache::store('array')->getStore(), \Lock\Factory::fromDsn('flock:'), -5.0);
    }
}
