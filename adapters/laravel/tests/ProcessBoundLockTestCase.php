<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Container\Container;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Queue\Jobs\SyncJob;
use Illuminate\Support\Facades\Cache;
use Laravel\Octane\Events\RequestReceived;
use Laravel\Octane\Events\RequestTerminated;
use Laravel\Octane\Events\TaskReceived;
use Laravel\Octane\Events\TaskTerminated;
use Lock\Adapter\Laravel\ProcessBoundException;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Adapter\TestSupport\WebWorker;

require_once __DIR__ . '/Support/OctaneEvents.php';

/** flock, semaphore, PostgreSQL and MySQL session holds: holds tied to their process, which cannot expire. */
abstract class ProcessBoundLockTestCase extends LockTestCase
{
    /**
     * Laravel's $seconds promise a hold that ends; one that cannot expire ends with the web
     * request that took it, however the request ends (php-fpm's worker, or `artisan serve`'s,
     * lives on for hours), and lasts until then even when its lock object is dropped.
     */
    public function testAWebRequestsHoldsEndWithTheRequestHoweverItEndsForTheyCannotExpire(): void
    {
        $web = new WebWorker(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot($args['kind']);
            $name = $args['name'];
            if ($args['action'] === 'probe') {
                $kept = Illuminate\Support\Facades\Cache::lock($name, 60);
                $dropped = Illuminate\Support\Facades\Cache::lock($name . '-dropped', 60);
                echo getmypid(), ' ', $kept->get() ? 'free' : 'held', ' ', $dropped->get() ? 'free' : 'held';
                $kept->release();
                $dropped->release();
                return;
            }
            $GLOBALS['kept'] = Illuminate\Support\Facades\Cache::lock($name, 60);
            echo $GLOBALS['kept']->get() ? 'taken' : 'busy';
            // The scheduler's way: a lock object dropped at once, its hold kept for the request.
            echo Illuminate\Support\Facades\Cache::lock($name . '-dropped', 60)->get() ? ' taken' : ' busy';
            echo Illuminate\Support\Facades\Cache::lock($name . '-dropped', 60)->get() ? ' free' : ' kept', "\n";
            // Sent before the end: a fatal error discards what output buffers hold.
            while (ob_get_level() > 0) {
                ob_end_flush();
            }
            flush();
            match ($args['end']) {
                'return' => null,
                'exit' => exit(0),
                'exception' => throw new RuntimeException('the request failed'),
                'fatal error' => (static function (): void {
                    ini_set('memory_limit', (string) (memory_get_usage() + (16 << 20)));
                    str_repeat('x', 64 << 20);
                })(),
                'time limit' => (static function (): void {
                    set_time_limit(1);
                    for (;;) {
                    }
                })(),
            };
            PHP);
        try {
            foreach (['return', 'exit', 'exception', 'fatal error', 'time limit'] as $end) {
                $args = ['kind' => static::kind(), 'name' => $this->name . '-' . str_replace(' ', '-', $end)];
                $body = $web->get($args + ['action' => 'take', 'end' => $end]);
                self::assertStringStartsWith("taken taken kept\n", $body, "the request that ends by $end");
                self::assertSame($web->pid() . ' free free', $web->get($args + ['action' => 'probe']), "the next request of the worker, after one that ended by $end");
                self::assertFalse($this->native()->isLocked($args['name']), $end);
                self::assertFalse($this->native()->isLocked($args['name'] . '-dropped'), $end);
            }
        } finally {
            $web->stop();
        }
    }

    /**
     * ShouldBeUnique: the lock taken when the job is dispatched must last until a queue worker
     * has run it (Laravel releases it there); a hold that ends with the dispatching request would
     * let the job be queued twice, so it is refused, loudly, naming the store and what to use.
     */
    public function testAUniqueJobsLockIsRefusedForItMustOutliveTheProcessThatDispatchesTheJob(): void
    {
        $job = new Support\UniqueJob($this->name);
        $unique = new \Illuminate\Bus\UniqueLock(Container::getInstance()->make('cache.store'));
        try {
            $unique->acquire($job);
            self::fail('a unique job\'s lock was taken on a process-bound store');
        } catch (ProcessBoundException $e) {
            self::assertStringContainsString('laravel_unique_job:', $e->getMessage());
            self::assertStringContainsString($this->native()::class, $e->getMessage());
            self::assertStringContainsString('Redis', $e->getMessage());
        }
        try {
            Cache::lock(\Illuminate\Bus\UniqueLock::getKey($job), 60)->block(1);
            self::fail('a unique job\'s lock was waited for on a process-bound store');
        } catch (ProcessBoundException) {
            $this->addToAssertionCount(1);
        }
        self::assertFalse($this->native()->isLocked(\Illuminate\Bus\UniqueLock::getKey($job)));
        $unique->release($job);
        self::assertTrue(Cache::lock($this->name, 60)->get(), 'other names are locks as before');
    }

    /**
     * runInBackground()->withoutOverlapping(): schedule:run takes the mutex and ends while the
     * command runs on; schedule:finish, another process, releases it. A process-bound mutex would
     * end with schedule:run and let the next minute's run overlap: refused. A foreground event's
     * mutex, taken and released by schedule:run itself, works.
     */
    public function testABackgroundEventsWithoutOverlappingIsRefusedForScheduleFinishReleasesItInAnotherProcess(): void
    {
        $schedule = new \Illuminate\Console\Scheduling\Schedule();
        $background = $schedule->exec('true ' . $this->name . '-background')->withoutOverlapping()->runInBackground();
        try {
            $background->shouldSkipDueToOverlapping();
            self::fail('a background event\'s mutex was taken on a process-bound store');
        } catch (ProcessBoundException $e) {
            self::assertStringContainsString('[locks]', $e->getMessage());
            self::assertStringContainsString($this->native()::class, $e->getMessage());
            self::assertStringContainsString('schedule:finish', $e->getMessage());
        }
        self::assertFalse($this->native()->isLocked($background->mutexName()));

        $foreground = $schedule->exec('true ' . $this->name . '-foreground')->withoutOverlapping();
        self::assertFalse($foreground->shouldSkipDueToOverlapping(), 'the mutex is taken');
        self::assertTrue($foreground->shouldSkipDueToOverlapping(), 'and held: the next run would overlap');
        $foreground->mutex->forget($foreground);
        self::assertFalse($this->native()->isLocked($foreground->mutexName()));
    }

    /**
     * onOneServer(): Laravel takes the mutex for an hour and never releases it, so that the other
     * servers' schedule:run, whenever it asks in that minute, skips the event; a process-bound
     * mutex ends with the first schedule:run. Refused.
     */
    public function testOnOneServerIsRefusedForItsMutexMustOutliveScheduleRun(): void
    {
        $schedule = new \Illuminate\Console\Scheduling\Schedule();
        $event = $schedule->exec('true ' . $this->name)->onOneServer();
        $this->expectException(ProcessBoundException::class);
        $this->expectExceptionMessage('onOneServer()');
        $schedule->serverShouldRun($event, new \DateTimeImmutable());
    }

    public function testRestoreLockInAnotherProcessIsRefused(): void
    {
        $lock = Cache::lock($this->name, 10);
        self::assertTrue($lock->get());
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot($args['kind']);
            try {
                Illuminate\Support\Facades\Cache::restoreLock($args['name'], $args['owner'])->release();
                echo 'restored';
            } catch (Lock\Adapter\Laravel\ProcessBoundException $e) {
                echo $e->getMessage();
            }
            PHP, ['kind' => static::kind(), 'name' => $this->name, 'owner' => $lock->owner()]);
        self::assertStringContainsString('Cache::restoreLock("' . $this->name . '")', $out);
        self::assertStringContainsString($this->native()::class, $out);
        self::assertTrue($lock->isOwnedByCurrentProcess());
        $lock->release();
    }

    public function testRestoreLockOfAFreeNameOwnsNothingAndReleasesNothingAsLaravelExpects(): void
    {
        $restored = Cache::restoreLock($this->name, 'gone-owner');
        self::assertFalse($restored->isOwnedByCurrentProcess());
        self::assertFalse($restored->release(), 'the clean-up after the hold is gone is false, not an exception');
        self::assertTrue(Cache::lock($this->name, 10)->get());
        $restored->forceRelease();
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testRestoreLockUnderAnotherOwnerOfThisProcessOwnsNothingAsLaravelExpects(): void
    {
        $first = Cache::lock($this->name, 10);
        self::assertTrue($first->get());
        $second = Cache::restoreLock($this->name, 'other_owner');
        self::assertTrue($second->isOwnedBy($first->owner()));
        self::assertFalse($second->isOwnedByCurrentProcess());
        self::assertFalse($second->release());
        self::assertFalse($second->refresh(20));
        self::assertTrue($first->isOwnedByCurrentProcess(), 'the hold is untouched');
        self::assertTrue($first->refresh(20));
        self::assertTrue($first->release());
    }

    public function testRefreshKeepsAHoldWithoutExpiry(): void
    {
        $lock = Cache::lock($this->name, 10);
        self::assertFalse($lock->refresh());
        self::assertTrue($lock->get());
        self::assertTrue($lock->refresh(20));
        self::assertNull($lock->getExtensionLock()->getRemainingLifetime());
        $lock->release();
    }

    public function testRestoreLockOfAHoldLetGoInTheSameProcess(): void
    {
        $owner = Cache::lock($this->name, 0)->owner();
        self::assertTrue(Cache::lock($this->name, 0, $owner)->get(), 'the lock object is dropped at once');
        $restored = Cache::restoreLock($this->name, $owner);
        self::assertTrue($restored->isOwnedByCurrentProcess());
        self::assertTrue($restored->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }

    private static function dispatch(object $event): void
    {
        Container::getInstance()->make('events')->dispatch($event);
    }

    public function testTheEndOfAnOctaneRequestReleasesWhatItTookAndLeftHeld(): void
    {
        $app = Container::getInstance();
        $boot = Cache::lock($this->name . '-boot', 0);
        self::assertTrue($boot->get(), 'taken by the worker before its first request');

        self::dispatch(new RequestReceived($app, $app, null));
        $kept = Cache::lock($this->name . '-kept', 0);
        self::assertTrue($kept->get());
        self::assertTrue(Cache::lock($this->name . '-dropped', 0)->get(), 'its lock object is dropped at once');
        $released = Cache::lock($this->name . '-released', 0);
        self::assertTrue($released->get());
        self::assertTrue($released->release());
        self::dispatch(new RequestTerminated($app, $app, null, null));

        self::assertFalse($this->native()->isLocked($this->name . '-kept'), 'the request ended: released');
        self::assertFalse($this->native()->isLocked($this->name . '-dropped'), 'also when its lock object is gone');
        self::assertFalse($kept->release(), 'no longer ours');
        self::assertFalse($kept->isOwnedByCurrentProcess());
        self::assertTrue($this->native()->isLocked($this->name . '-boot'), 'taken before the request: left');

        // The next request of the same worker.
        self::dispatch(new RequestReceived($app, $app, null));
        self::assertTrue($kept->get());
        self::dispatch(new RequestTerminated($app, $app, null, null));
        self::assertFalse($this->native()->isLocked($this->name . '-kept'));

        self::assertTrue($boot->release());
    }

    public function testTheEndOfAJobReleasesWhatTheJobTookOnly(): void
    {
        $app = Container::getInstance();
        $job = new SyncJob($app, '{}', 'sync', 'default');
        self::dispatch(new RequestReceived($app, $app, null));
        $request = Cache::lock($this->name . '-request', 0);
        self::assertTrue($request->get());

        // A job run by the sync queue inside the request, then one that fails.
        self::dispatch(new JobProcessing('sync', $job));
        self::assertTrue(Cache::lock($this->name . '-job', 0)->get());
        self::dispatch(new JobProcessed('sync', $job));
        self::assertFalse($this->native()->isLocked($this->name . '-job'), 'the job ended: released');
        self::assertTrue($this->native()->isLocked($this->name . '-request'), 'the request has not ended');
        self::assertTrue($request->isOwnedByCurrentProcess());

        self::dispatch(new JobProcessing('sync', $job));
        self::assertTrue(Cache::lock($this->name . '-job', 0)->get());
        $exception = new \RuntimeException('failed');
        self::dispatch(new JobFailed('sync', $job, $exception));
        self::dispatch(new JobExceptionOccurred('sync', $job, $exception));
        self::assertFalse($this->native()->isLocked($this->name . '-job'), 'a failed job ended too');
        self::assertTrue($this->native()->isLocked($this->name . '-request'), 'JobFailed ends nothing of its own');

        self::dispatch(new RequestTerminated($app, $app, null, null));
        self::assertFalse($this->native()->isLocked($this->name . '-request'));
    }

    public function testTheEndOfAnOctaneTaskReleasesWhatItTook(): void
    {
        $app = Container::getInstance();
        self::dispatch(new TaskReceived($app, $app, null));
        self::assertTrue(Cache::lock($this->name, 0)->get());
        self::dispatch(new TaskTerminated($app, $app, null, null));
        self::assertFalse($this->native()->isLocked($this->name));
    }

    public function testTheEndCopesWithHoldsReleasedOrBrokenDuringTheRequest(): void
    {
        $app = Container::getInstance();
        self::dispatch(new RequestReceived($app, $app, null));
        $owner = Cache::lock($this->name, 0)->owner();
        self::assertTrue(Cache::lock($this->name, 0, $owner)->get());
        self::assertTrue(Cache::restoreLock($this->name, $owner)->release());
        self::assertTrue(Cache::lock($this->name . '-broken', 0)->get());
        Cache::lock($this->name . '-broken', 0)->forceRelease();
        $other = Cache::lock($this->name . '-broken', 0);
        self::assertTrue($other->get());
        self::dispatch(new RequestTerminated($app, $app, null, null));
        self::assertFalse($this->native()->isLocked($this->name));
        self::assertFalse($this->native()->isLocked($this->name . '-broken'), 'taken again in the request: released');
    }

    public function testAHoldLetGoEndsWithItsProcess(): void
    {
        $out = Child::run(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot($args['kind']);
            echo Illuminate\Support\Facades\Cache::lock($args['name'], 0)->get() ? 'taken' : 'busy';
            PHP, ['kind' => static::kind(), 'name' => $this->name]);
        self::assertSame('taken', $out);
        self::assertFalse($this->native()->isLocked($this->name), 'the OS freed it with the process');
    }
}
