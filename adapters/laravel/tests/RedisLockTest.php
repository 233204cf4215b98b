<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\StoreFactory;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store\RedisStore;

/** Redis: expiry, holds restored by another process, configuration from config/database.php. */
final class RedisLockTest extends LockTestCase
{
    protected static function kind(): string
    {
        return 'redis';
    }

    public function testConfiguredFromTheRedisConnection(): void
    {
        self::assertInstanceOf(RedisStore::class, $this->native());
        $port = (int) getenv('LOCK_TEST_REDIS_PORT');
        $factory = StoreFactory::create(['connection' => 'other'], ['other' => ['url' => 'redis://127.0.0.1:' . $port . '/1']]);
        $lock = $factory->createLock($this->name);
        self::assertTrue($lock->acquire());
        $lock->release();

        $this->expectException(\InvalidArgumentException::class);
        StoreFactory::create(['connection' => 'missing'], []);
    }

    /** A redlock:// "dsn": the combined store, one hold over three Redis servers. */
    public function testConfiguredWithARedlockDsn(): void
    {
        Support\App::boot('redlock');
        self::assertInstanceOf(\Lock\Store\CombinedStore::class, $this->native());
        $lock = Cache::lock($this->name, 10);
        self::assertTrue($lock->get());
        self::assertTrue($this->native()->isLocked($this->name));
        self::assertFalse(Cache::lock($this->name, 10)->get());
        self::assertTrue($lock->release());
        self::assertFalse($this->native()->isLocked($this->name));
        $next = Cache::lock($this->name, 10);
        self::assertTrue($next->get());
        self::assertTrue($next->release());
    }

    public function testAStoreDecoratingItselfIsRefused(): void
    {
        $config = \Illuminate\Container\Container::getInstance()->make('config');
        $config->set('cache.stores.loop', ['driver' => 'lock-ext', 'cache_store' => 'loop', 'connection' => 'locks']);
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('needs a "cache_store"');
        Cache::store('loop');
    }

    public function testExpiredHoldIsNotOurs(): void
    {
        $a = Cache::lock($this->name, 1);
        self::assertTrue($a->get());
        usleep(1_200_000);
        $b = Cache::lock($this->name, 10);
        self::assertTrue($b->get());
        self::assertFalse($a->release());
        self::assertTrue($b->isOwnedByCurrentProcess());
        $b->release();
    }

    public function testRefresh(): void
    {
        $lock = Cache::lock($this->name, 5);
        self::assertFalse($lock->refresh());
        self::assertTrue($lock->get());
        self::assertTrue($lock->refresh(60));
        self::assertGreaterThan(5.0, $lock->getExtensionLock()->getRemainingLifetime());
        $this->native()->forceRelease($this->name);
        self::assertFalse($lock->refresh());
    }

    public function testRestoreLockInAnotherProcess(): void
    {
        $lock = Cache::lock($this->name, 30);
        self::assertTrue($lock->get());
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis');
            $restored = Illuminate\Support\Facades\Cache::restoreLock($args['name'], $args['owner']);
            echo $restored->isOwnedByCurrentProcess() ? "owned\n" : "not owned\n";
            echo Illuminate\Support\Facades\Cache::lock($args['name'], 30)->isOwnedBy($args['owner']) ? "owner seen\n" : "owner not seen\n";
            echo $restored->release() ? "released\n" : "not released\n";
            echo $restored->release() ? 'released again' : 'nothing left';
            PHP, ['name' => $this->name, 'owner' => $lock->owner()]);
        self::assertSame("owned\nowner seen\nreleased\nnothing left", $out);
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertFalse($lock->release());
    }

    public function testOwnersChosenByTheCaller(): void
    {
        $owner = 'queue-worker-7/' . bin2hex(random_bytes(8));
        $lock = Cache::lock($this->name, 30, $owner);
        self::assertSame($owner, $lock->owner());
        self::assertTrue($lock->get());
        self::assertFalse(Cache::lock($this->name, 30, $owner)->get(), 'a second lock of the same owner is refused, as with RedisLock');
        self::assertTrue(Cache::restoreLock($this->name, $owner)->isOwnedByCurrentProcess());
        self::assertTrue(Cache::lock($this->name, 30)->isOwnedBy($owner));
        self::assertTrue(Cache::restoreLock($this->name, $owner)->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testTheOwnerSharedIsAnOwnerLikeAnyOther(): void
    {
        self::assertFalse(Cache::lock($this->name, 30)->isOwnedBy('shared'));
        self::assertFalse(Cache::restoreLock($this->name, 'shared')->isOwnedByCurrentProcess());
        $lock = Cache::lock($this->name, 30, 'shared');
        self::assertTrue($lock->get());
        self::assertTrue(Cache::lock($this->name, 30)->isOwnedBy('shared'));
        self::assertTrue(Cache::restoreLock($this->name, 'shared')->isOwnedByCurrentProcess());
        self::assertTrue($lock->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testTheEndOfARequestOrJobLeavesRedisHoldsToTheirTtl(): void
    {
        require_once __DIR__ . '/Support/OctaneEvents.php';
        $app = \Illuminate\Container\Container::getInstance();
        $events = $app->make('events');
        $job = new \Illuminate\Queue\Jobs\SyncJob($app, '{}', 'sync', 'default');
        $events->dispatch(new \Laravel\Octane\Events\RequestReceived($app, $app, null));
        $events->dispatch(new \Illuminate\Queue\Events\JobProcessing('sync', $job));
        $lock = Cache::lock($this->name, 10);
        self::assertTrue($lock->get());
        $events->dispatch(new \Illuminate\Queue\Events\JobProcessed('sync', $job));
        $events->dispatch(new \Laravel\Octane\Events\RequestTerminated($app, $app, null, null));
        self::assertTrue($this->native()->isLocked($this->name), 'as with Laravel\'s RedisLock: until released or its TTL');
        self::assertTrue($lock->release());
    }

    /**
     * ShouldBeUnique on Redis: the lock taken when the job is dispatched outlives the dispatching
     * process, until the queue worker releases it (UniqueLock::release(): forceRelease()).
     */
    public function testAUniqueJobsLockOutlivesTheProcessThatDispatchesTheJobUntilTheWorkerReleasesIt(): void
    {
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis');
            $unique = new Illuminate\Bus\UniqueLock(Illuminate\Container\Container::getInstance()->make('cache.store'));
            echo $unique->acquire(new Lock\Adapter\Laravel\Tests\Support\UniqueJob($args['id'])) ? 'dispatched' : 'not unique';
            PHP, ['id' => $this->name]);
        self::assertSame('dispatched', $out);
        $job = new Support\UniqueJob($this->name);
        $unique = new \Illuminate\Bus\UniqueLock(\Illuminate\Container\Container::getInstance()->make('cache.store'));
        self::assertFalse($unique->acquire($job), 'the job is still queued: not dispatched again');
        $unique->release($job);
        self::assertTrue($unique->acquire($job), 'run and released: it can be dispatched again');
        $unique->release($job);
    }

    /** runInBackground()->withoutOverlapping() on Redis: the mutex outlives schedule:run, for schedule:finish to release. */
    public function testABackgroundEventsWithoutOverlappingTakesItsMutexOnRedis(): void
    {
        $schedule = new \Illuminate\Console\Scheduling\Schedule();
        $event = $schedule->exec('true ' . $this->name)->withoutOverlapping()->runInBackground();
        self::assertInstanceOf(\Lock\Adapter\Laravel\ExtensionEventMutex::class, $event->mutex);
        self::assertFalse($event->shouldSkipDueToOverlapping());
        self::assertTrue($this->native()->isLocked($event->mutexName()));
        $event->finish(\Illuminate\Container\Container::getInstance(), 0);
        self::assertFalse($this->native()->isLocked($event->mutexName()), 'released as schedule:finish does');
        $time = new \DateTimeImmutable();
        $once = $schedule->exec('true ' . $this->name . '-once')->onOneServer();
        self::assertTrue($schedule->serverShouldRun($once, $time));
        $this->native()->forceRelease($once->mutexName() . $time->format('Hi'));
    }

    /** The scheduler's mutexes are the adapter's unless the application binds its own, as Laravel lets it. */
    public function testTheApplicationsOwnSchedulerMutexesWin(): void
    {
        $app = \Illuminate\Container\Container::getInstance();
        self::assertInstanceOf(\Lock\Adapter\Laravel\ExtensionEventMutex::class, $app->make(\Illuminate\Console\Scheduling\EventMutex::class));
        self::assertInstanceOf(\Lock\Adapter\Laravel\ExtensionSchedulingMutex::class, $app->make(\Illuminate\Console\Scheduling\SchedulingMutex::class));
        $own = new \Illuminate\Console\Scheduling\CacheEventMutex($app->make('cache'));
        $app->instance(\Illuminate\Console\Scheduling\EventMutex::class, $own);
        (new \Lock\Adapter\Laravel\LockServiceProvider($app))->register();
        self::assertSame($own, $app->make(\Illuminate\Console\Scheduling\EventMutex::class));
    }

    /** Without the extension the store says what to do, rather than Class "Lock\Factory" not found. */
    public function testWithoutTheExtensionTheStoreSaysToLoadIt(): void
    {
        $out = Child::runWithoutExtension(<<<'PHP'
            if (extension_loaded('lock')) {
                echo 'loaded by php.ini';
                return;
            }
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis');
            try {
                Illuminate\Support\Facades\Cache::lock('x', 10);
                echo 'no error';
            } catch (Throwable $e) {
                echo get_class($e), ': ', $e->getMessage();
            }
            PHP);
        if ($out === 'loaded by php.ini') {
            self::markTestSkipped('this PHP loads the extension from its php.ini');
        }
        self::assertStringStartsWith('RuntimeException: ', $out);
        self::assertStringContainsString('load the lock extension (extension=lock in php.ini)', $out);
        self::assertStringNotContainsString('not found', $out);
    }
}
