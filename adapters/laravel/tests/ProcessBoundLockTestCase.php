<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\Tests\Support\Child;
use PHPUnit\Framework\Attributes\Group;

/** flock and semaphore: holds the OS ties to their process. */
abstract class ProcessBoundLockTestCase extends LockTestCase
{
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

    public function testFunnel(): void
    {
        $this->funnel();
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

    /** Within one server and one process's lifetime (the scheduler's own process), once holds outlive their object. */
    #[Group('needs-ext')]
    public function testSchedulerMutexes(): void
    {
        $this->schedulerMutexes();
    }

    #[Group('needs-ext')]
    public function testRestoreLockInTheSameProcess(): void
    {
        $lock = Cache::lock($this->name, 0);
        self::assertTrue($lock->get());
        $restored = Cache::restoreLock($this->name, $lock->owner());
        self::assertTrue($restored->isOwnedByCurrentProcess());
        self::assertTrue($restored->release());
        self::assertFalse($this->native()->isLocked($this->name));
    }
}
