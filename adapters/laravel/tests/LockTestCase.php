<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\ExtensionLock;
use Lock\Adapter\Laravel\ExtensionStore;
use Lock\Adapter\Laravel\Tests\Support\App;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use PHPUnit\Framework\TestCase;

/** Laravel's cache lock contract on every store of the extension, through the Cache facade. */
abstract class LockTestCase extends TestCase
{
    protected string $name;

    abstract protected static function kind(): string;

    protected function setUp(): void
    {
        App::boot(static::kind());
        $this->name = 'lv-' . bin2hex(random_bytes(8));
    }

    protected function native(): Store
    {
        $store = Cache::store()->getStore();
        self::assertInstanceOf(ExtensionStore::class, $store);

        return $store->getFactory()->getStore();
    }

    public function testLockIsTheExtensions(): void
    {
        self::assertInstanceOf(ExtensionLock::class, Cache::lock($this->name, 10));
        self::assertInstanceOf(\Illuminate\Cache\Lock::class, Cache::lock($this->name, 10));
    }

    public function testGetConflictsAndRelease(): void
    {
        $a = Cache::lock($this->name, 10);
        $b = Cache::lock($this->name, 10);

        self::assertTrue($a->get());
        self::assertTrue($this->native()->isLocked($this->name));
        self::assertFalse($b->get());
        self::assertFalse($a->get(), 'get() on a hold already taken by this lock is false, as with RedisLock');
        self::assertTrue($a->release());
        self::assertFalse($a->release(), 'nothing left to release');
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertTrue($b->get());
        self::assertTrue($b->release());
    }

    public function testGetWithCallbackReleases(): void
    {
        $result = Cache::lock($this->name, 10)->get(function () {
            self::assertTrue($this->native()->isLocked($this->name));
            self::assertFalse(Cache::lock($this->name, 10)->get());

            return 'done';
        });
        self::assertSame('done', $result);
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testReleaseOfAHoldNotOursIsFalse(): void
    {
        $a = Cache::lock($this->name, 10);
        self::assertTrue($a->get());
        self::assertFalse(Cache::lock($this->name, 10)->release());
        self::assertTrue($this->native()->isLocked($this->name));
        $a->release();
    }

    public function testOwnership(): void
    {
        $a = Cache::lock($this->name, 10);
        $b = Cache::lock($this->name, 10);
        self::assertNotSame($a->owner(), $b->owner());
        self::assertFalse($a->isOwnedByCurrentProcess());
        self::assertTrue($a->get());
        self::assertTrue($a->isOwnedByCurrentProcess());
        self::assertTrue($a->isOwnedBy($a->owner()));
        self::assertFalse($b->isOwnedByCurrentProcess());
        self::assertFalse($a->isOwnedBy($b->owner()));
        self::assertFalse($a->isOwnedBy('not an owner'));
        $a->release();
        self::assertFalse($a->isOwnedByCurrentProcess());
    }

    public function testLaravelsOwnerIsTheExtensionsOwner(): void
    {
        $lock = Cache::lock($this->name, 10);
        self::assertMatchesRegularExpression('/^[A-Za-z0-9]{16}$/', $lock->owner(), "Laravel's Str::random()");
        self::assertSame($lock->owner(), $lock->getExtensionLock()->getOwner());

        $owner = "worker 7/\0\xff" . bin2hex(random_bytes(8));
        $given = Cache::lock($this->name, 10, $owner);
        self::assertSame($owner, $given->owner());
        self::assertSame($owner, $given->getExtensionLock()->getOwner(), 'passed through as it is');
        self::assertTrue($given->get());
        self::assertTrue($given->isOwnedByCurrentProcess());
        self::assertFalse(Cache::lock($this->name, 10, $owner)->get(), 'a second lock object of the same owner is refused, as with RedisLock');
        try {
            Cache::lock($this->name, 10, $owner)->block(5);
            self::fail('block() took a hold a lock object of this process has');
        } catch (LockTimeoutException) {
            $this->addToAssertionCount(1);
        }
        self::assertTrue($given->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testIsOwnedByNullIsTrueWhileNobodyHoldsItAsLaravelsGetCurrentOwnerIsNull(): void
    {
        $a = Cache::lock($this->name, 10);
        self::assertTrue($a->isOwnedBy(null), 'a free lock: getCurrentOwner() === null');
        self::assertTrue($a->get());
        self::assertFalse($a->isOwnedBy(null));
        self::assertFalse(Cache::lock($this->name, 10)->isOwnedBy(null), 'held by another lock object');
        self::assertTrue($a->release());
        self::assertTrue($a->isOwnedBy(null));
    }

    public function testRefreshZeroTakesTheExpiryOffAndIsTrueAsLaravelsRedisLockPersists(): void
    {
        $lock = Cache::lock($this->name, 10);
        self::assertTrue($lock->get());
        self::assertTrue($lock->refresh(0));
        self::assertNull($lock->getExtensionLock()->getRemainingLifetime(), 'no expiry left');
        self::assertTrue($lock->isOwnedByCurrentProcess());
        self::assertFalse(Cache::lock($this->name, 10)->get());
        self::assertTrue($lock->refresh(5), 'a TTL can be given again');
        self::assertTrue($lock->release());
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertFalse($lock->refresh(0), 'nothing held: nothing to refresh');
    }

    public function testNumericStringSecondsAndAnIntOwnerAreTakenAsLaravelsStoresTakeThem(): void
    {
        $lock = Cache::lock($this->name, '2.5', 42);
        self::assertSame('42', (string) $lock->owner());
        self::assertTrue($lock->get());
        self::assertTrue($lock->isOwnedBy(42));
        self::assertTrue($lock->refresh('3'));
        self::assertTrue(Cache::restoreLock($this->name, 42)->isOwnedByCurrentProcess());
        self::assertTrue($lock->release());
        try {
            Cache::lock($this->name, 'ten');
            self::fail('a $seconds that is no number was taken');
        } catch (\ValueError $e) {
            self::assertStringContainsString('$seconds', $e->getMessage());
        }
    }

    public function testAnEmptyNameAndANameOver64KiBAreLocksAsInLaravel(): void
    {
        $long = str_repeat('n', 70_000) . $this->name;
        $longer = str_repeat('n', 70_000) . $this->name . 'x';
        foreach (['', $long] as $name) {
            Cache::lock($name)->forceRelease();
            $a = Cache::lock($name, 10);
            self::assertTrue($a->get());
            self::assertFalse(Cache::lock($name, 10)->get());
            self::assertTrue($a->isOwnedByCurrentProcess());
            self::assertTrue($a->release());
            self::assertTrue(Cache::lock($name, 10)->get(), 'free again');
            Cache::lock($name)->forceRelease();
        }
        $a = Cache::lock($long, 10);
        self::assertTrue($a->get());
        self::assertTrue(Cache::lock($longer, 10)->get(), 'names that differ past 64 KiB are other locks');
        Cache::lock($longer)->forceRelease();
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot($args['kind']);
            echo Illuminate\Support\Facades\Cache::lock($args['name'], 10)->get() ? 'taken' : 'held';
            PHP, ['kind' => static::kind(), 'name' => $long]);
        self::assertSame('held', $out, 'another process maps the name alike');
        self::assertTrue($a->release());
    }

    public function testOwnersOutOfRangeAreValueErrors(): void
    {
        foreach (['', str_repeat('x', 256)] as $owner) {
            try {
                Cache::lock($this->name, 10, $owner)->get();
                self::fail('an owner of ' . \strlen($owner) . ' bytes was taken');
            } catch (\ValueError) {
                $this->addToAssertionCount(1);
            }
        }
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testReleaseByAnotherLockObjectOfTheOwner(): void
    {
        $owner = 'owner-' . bin2hex(random_bytes(8));
        self::assertTrue(Cache::lock($this->name, 10, $owner)->get(), 'the lock object is dropped at once');
        self::assertTrue($this->native()->isLocked($this->name), 'the hold outlives its lock object');
        self::assertFalse(Cache::lock($this->name, 10)->release(), 'another owner releases nothing');
        self::assertTrue(Cache::lock($this->name, 10, $owner)->release(), 'as with RedisLock, the owner releases it');
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertFalse(Cache::lock($this->name, 10, $owner)->release(), 'nothing left to release');
    }

    public function testRestoreLockInTheProcessWhoseLockObjectHolds(): void
    {
        $lock = Cache::lock($this->name, 0);
        self::assertTrue($lock->get());
        $restored = Cache::restoreLock($this->name, $lock->owner());
        self::assertTrue($restored->isOwnedByCurrentProcess());
        self::assertSame($lock->getExtensionLock(), $restored->getExtensionLock(), 'one hold, shared');
        self::assertTrue($restored->release());
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertFalse($lock->isOwnedByCurrentProcess());
        self::assertFalse($lock->release(), 'released through the restored lock already');

        self::assertTrue(Cache::lock($this->name, 0, $lock->owner())->get(), 'a new lock object of the owner takes it');
        self::assertTrue($lock->release(), 'the owner releases it, as with RedisLock');
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertTrue($lock->get());
        self::assertTrue($lock->release());
    }

    public function testForceRelease(): void
    {
        $a = Cache::lock($this->name, 10);
        self::assertTrue($a->get());
        Cache::lock($this->name)->forceRelease();
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertTrue(Cache::lock($this->name, 10)->get());
        $this->native()->forceRelease($this->name);
    }

    public function testSecondsZeroMeansNoExpiry(): void
    {
        $lock = Cache::lock($this->name, 0);
        self::assertTrue($lock->get());
        self::assertNull($lock->getExtensionLock()->getTtl());
        self::assertNull($lock->getExtensionLock()->getRemainingLifetime());
        self::assertTrue($lock->release());
    }

    public function testBlockTimesOut(): void
    {
        $a = Cache::lock($this->name, 10);
        self::assertTrue($a->get());
        try {
            Cache::lock($this->name, 10)->block(0.2);
            self::fail('block() acquired a held lock');
        } catch (LockTimeoutException) {
            $this->addToAssertionCount(1);
        }
        $a->release();
    }

    public function testBlockIsWokenByAReleaseInAnotherProcess(): void
    {
        $child = $this->holdInChild(0.3);
        // Laravel's own loop would sleep 10 s between attempts and so give up at once.
        $lock = Cache::lock($this->name, 10)->betweenBlockedAttemptsSleepFor(10_000);
        self::assertSame('done', $lock->block(5, fn () => 'done'));
        self::assertSame('released', $child->finish());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testOtherCacheCallsGoToTheConfiguredStore(): void
    {
        Cache::put('lv-key', 'value', 10);
        self::assertSame('value', Cache::get('lv-key'));
        self::assertSame('value', Cache::store('array')->get('lv-key'));
        self::assertSame(2, Cache::increment('lv-count', 2));
        Cache::forget('lv-key');
        self::assertNull(Cache::store('array')->get('lv-key'));
    }

    public function testIsLockedSaysWhetherAnybodyHoldsIt(): void
    {
        $lock = Cache::lock($this->name, 10);
        self::assertFalse($lock->isLocked());
        $child = $this->holdInChild(1.0);
        self::assertTrue($lock->isLocked(), 'held by another process');
        self::assertTrue(Cache::lock($this->name)->isLocked(), 'asked through any lock object');
        self::assertSame('released', $child->finish());
        self::assertFalse($lock->isLocked());
        self::assertTrue($lock->get());
        self::assertTrue($lock->isLocked(), 'held by this lock object');
        self::assertTrue($lock->release());
        self::assertFalse($lock->isLocked());
    }

    #[\PHPUnit\Framework\Attributes\Group('since-12')]
    public function testTheRepositorysWithoutOverlappingHoldsTheLockAroundTheCallback(): void
    {
        $result = Cache::withoutOverlapping($this->name, function () {
            self::assertTrue($this->native()->isLocked($this->name));
            try {
                Cache::withoutOverlapping($this->name, fn () => 'inner', 10, 0);
                self::fail('the same name again while held');
            } catch (LockTimeoutException) {
            }

            return 'outer';
        }, 10, 1);
        self::assertSame('outer', $result);
        self::assertFalse($this->native()->isLocked($this->name));
    }

    #[\PHPUnit\Framework\Attributes\Group('since-12')]
    public function testAMemoizedRepositorysLocksAreTheExtensions(): void
    {
        $lock = Cache::memo()->lock($this->name, 10);
        self::assertInstanceOf(ExtensionLock::class, $lock);
        self::assertTrue($lock->get());
        self::assertFalse(Cache::lock($this->name, 10)->get());
        self::assertTrue(Cache::memo()->restoreLock($this->name, $lock->owner())->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    #[\PHPUnit\Framework\Attributes\Group('since-13')]
    public function testFlushLocksIsRefusedAsTheStoreDoesNotListItsLocks(): void
    {
        $this->expectException(\BadMethodCallException::class);
        $this->expectExceptionMessage('does not support flushing locks');
        Cache::flushLocks();
    }

    #[\PHPUnit\Framework\Attributes\Group('since-13')]
    public function testTouchGoesToTheConfiguredStore(): void
    {
        Cache::put('lv-touched', 'value', 10);
        self::assertTrue(Cache::touch('lv-touched', 60));
        self::assertSame('value', Cache::store('array')->get('lv-touched'));
        self::assertFalse(Cache::touch('lv-never-put', 60));
    }

    public function testWithoutOverlapping(): void
    {
        $job = new class () {
            public array $released = [];
            public int $ran = 0;

            public function release($delay = 0): void
            {
                $this->released[] = $delay;
            }
        };
        $middleware = (new WithoutOverlapping($this->name))->releaseAfter(7)->expireAfter(60);
        $middleware->handle($job, function ($job) use ($middleware) {
            $job->ran++;
            // The same job again while the first runs: released back to the queue, not run.
            $middleware->handle($job, function ($job) {
                $job->ran++;
            });
        });
        self::assertSame(1, $job->ran);
        self::assertSame([7], $job->released);
        self::assertFalse($this->native()->isLocked($middleware->getLockKey($job)));
    }

    #[\PHPUnit\Framework\Attributes\Group('since-12')]
    public function testFunnel(): void
    {
        $this->funnel();
    }

    public function testSchedulerMutexes(): void
    {
        $this->schedulerMutexes();
    }

    public function testReleaseAfterForceReleaseIsFalse(): void
    {
        $this->releaseAfterForceRelease();
    }

    /** A child process that holds $this->name through Cache::lock() for $seconds, then releases it. */
    protected function holdInChild(float $seconds): Child
    {
        $child = new Child(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot($args['kind']);
            $lock = Illuminate\Support\Facades\Cache::lock($args['name'], 30);
            if (!$lock->get()) { exit(2); }
            echo "held\n";
            usleep((int) ($args['seconds'] * 1e6));
            $lock->release();
            echo 'released';
            PHP, ['kind' => static::kind(), 'name' => $this->name, 'seconds' => $seconds]);
        self::assertSame('held', $child->readLine());

        return $child;
    }

    /** Cache::funnel() (Laravel 12): owners of its own choosing (Str::random(20)) for its slots. */
    private function funnel(): void
    {
        $inner = null;
        $result = Cache::funnel($this->name)->limit(2)->releaseAfter(60)->block(0)->then(function () use (&$inner) {
            $inner = Cache::funnel($this->name)->limit(2)->releaseAfter(60)->block(0)->then(
                fn () => Cache::funnel($this->name)->limit(2)->releaseAfter(60)->block(0)->then(fn () => 'third', fn () => 'full'),
            );

            return 'first';
        });
        self::assertSame('first', $result);
        self::assertSame('full', $inner);
        self::assertFalse($this->native()->isLocked($this->name . '1'));
        self::assertFalse($this->native()->isLocked($this->name . '2'));
    }

    /**
     * The scheduler's withoutOverlapping() and onOneServer(): their mutexes take a hold through a
     * lock object they drop at once, and free it from another lock object (forceRelease()).
     */
    private function schedulerMutexes(): void
    {
        $cache = \Illuminate\Container\Container::getInstance()->make('cache');
        $mutex = new \Illuminate\Console\Scheduling\CacheEventMutex($cache);
        $event = new \Illuminate\Console\Scheduling\Event($mutex, 'lock-adapters-test ' . $this->name);

        self::assertFalse($mutex->exists($event));
        self::assertTrue($mutex->create($event));
        self::assertTrue($mutex->exists($event), 'the hold outlives the lock object that took it');
        self::assertFalse($mutex->create($event));
        $mutex->forget($event);
        self::assertFalse($mutex->exists($event));

        $scheduling = new \Illuminate\Console\Scheduling\CacheSchedulingMutex($cache);
        $time = new \DateTimeImmutable();
        self::assertTrue($scheduling->create($event, $time));
        self::assertTrue($scheduling->exists($event, $time));
        self::assertFalse($scheduling->create($event, $time), 'onOneServer(): one run per minute');
        $this->native()->forceRelease($event->mutexName() . $time->format('Hi'));
    }

    /** release() after forceRelease() broke our hold: false. */
    protected function releaseAfterForceRelease(): void
    {
        $a = Cache::lock($this->name, 10);
        self::assertTrue($a->get());
        $this->native()->forceRelease($this->name);
        self::assertFalse($a->release());
    }
}
