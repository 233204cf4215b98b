<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Strategy\UnanimousStrategy;

/** One Key through Symfony's CombinedStore over Redis, flock and semaphore holds on each. */
final class CombinedStoreTest extends TestCase
{
    public function testOneKeyHoldsOnEveryStore(): void
    {
        $natives = [Stores::create('redis'), Stores::create('flock'), Stores::create('semaphore')];
        $combined = new CombinedStore(array_map(static fn ($s) => new ExtensionStore($s), $natives), new UnanimousStrategy());
        $factory = new LockFactory($combined);
        $resource = 'sf-combined-' . bin2hex(random_bytes(8));

        $lock = $factory->createLock($resource);
        self::assertTrue($lock->acquire());
        foreach ($natives as $native) {
            self::assertTrue($native->isLocked($resource), $native::class);
        }
        self::assertFalse($factory->createLock($resource)->acquire());
        $lock->refresh(60.0);
        self::assertTrue($lock->isAcquired());

        $lock->release();
        foreach ($natives as $native) {
            self::assertFalse($native->isLocked($resource), $native::class);
        }
        self::assertTrue($factory->createLock($resource)->acquire());
    }
}
