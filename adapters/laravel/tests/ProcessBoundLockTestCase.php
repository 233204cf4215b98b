<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\Tests\Support\Child;

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
