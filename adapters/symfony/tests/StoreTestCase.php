<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\KeyState;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Adapter\Symfony\Tests\Support\SymfonyStoreTestCase;
use Lock\Store;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\PersistingStoreInterface;

/**
 * What ExtensionStore must do on every store of the extension, through Symfony's own Lock; and,
 * on symfony/lock 7.4, Symfony's own store tests (its AbstractStoreTestCase) over it.
 */
abstract class StoreTestCase extends SymfonyStoreTestCase
{
    protected Store $native;
    protected ExtensionStore $store;
    protected LockFactory $factory;
    protected string $resource;

    abstract protected static function kind(): string;

    protected function setUp(): void
    {
        $this->native = Stores::create(static::kind());
        $this->store = new ExtensionStore($this->native);
        $this->factory = new LockFactory($this->store);
        $this->resource = 'sf-' . bin2hex(random_bytes(8));
    }

    /** The store Symfony's own store tests run on. */
    protected function getStore(): PersistingStoreInterface
    {
        return $this->store;
    }

    public function testImplementsSymfonysStoreInterfaces(): void
    {
        self::assertInstanceOf(BlockingStoreInterface::class, $this->store);
        self::assertInstanceOf(BlockingSharedLockStoreInterface::class, $this->store);
    }

    public function testAcquireConflictsAndRelease(): void
    {
        $a = $this->factory->createLock($this->resource);
        $b = $this->factory->createLock($this->resource);

        self::assertTrue($a->acquire());
        self::assertTrue($a->isAcquired());
        self::assertTrue($this->native->isLocked($this->resource));
        self::assertFalse($b->acquire());
        self::assertFalse($b->isAcquired());
        self::assertTrue($a->acquire(), 'acquiring again while held keeps the hold');

        $a->release();
        self::assertFalse($a->isAcquired());
        self::assertFalse($this->native->isLocked($this->resource));
        self::assertTrue($b->acquire());
        $b->release();
    }

    public function testStoreLevelContract(): void
    {
        $key = new Key($this->resource);
        $other = new Key($this->resource);

        self::assertFalse($this->store->exists($key));
        $this->store->delete($key);
        $this->store->save($key);
        self::assertTrue($this->store->exists($key));
        self::assertFalse($this->store->exists($other));
        try {
            $this->store->save($other);
            self::fail('a second Key saved while the first holds');
        } catch (LockConflictedException) {
        }
        $this->store->delete($other);
        self::assertTrue($this->store->exists($key), 'deleting another Key leaves our hold alone');
        $this->store->delete($key);
        self::assertFalse($this->store->exists($key));
        $this->store->save($other);
        $this->store->delete($other);
    }

    public function testTheHoldIsTakenUnderTheKeysOwner(): void
    {
        $key = new Key($this->resource);
        $this->store->save($key);
        $state = $key->getState(ExtensionStore::class);
        self::assertInstanceOf(KeyState::class, $state);
        self::assertSame($state->owner, $state->holds[$this->store]->getOwner());
        self::assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $state->owner);
        $this->store->delete($key);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testSharedHolds(): void
    {
        $reader1 = $this->factory->createLock($this->resource);
        $reader2 = $this->factory->createLock($this->resource);
        $writer = $this->factory->createLock($this->resource);

        if (!$this->native->supports(Store::SHARED)) {
            // MySQL's GET_LOCK has no shared mode: a read hold is an exclusive one, as API.md says.
            self::assertTrue($reader1->acquireRead());
            self::assertFalse($reader2->acquireRead(), 'a read hold excludes readers on a store without shared holds');
            self::assertFalse($writer->acquire());
            $reader1->release();
            self::assertTrue($writer->acquire());
            $writer->release();

            return;
        }
        self::assertTrue($reader1->acquireRead());
        self::assertTrue($reader2->acquireRead());
        self::assertFalse($writer->acquire());
        self::assertFalse($reader1->acquire(), 'no promotion while another reader holds');

        $reader2->release();
        self::assertTrue($reader1->acquire(), 'promoted once alone');
        self::assertFalse($reader2->acquireRead());
        $reader1->release();
        self::assertTrue($writer->acquire());
        $writer->release();
    }

    /** Read and write holds of Keys saved on the store itself, as Symfony's SharedLockStoreInterface stores keep them. */
    public function testReadAndWriteKeysAtTheStoreLevel(): void
    {
        [$reader1, $reader2, $writer] = [new Key($this->resource), new Key($this->resource), new Key($this->resource)];
        $conflicts = function (callable $save, string $what): void {
            try {
                $save();
                self::fail($what);
            } catch (LockConflictedException) {
            }
        };

        $this->store->saveRead($reader1);
        if (!$this->native->supports(Store::SHARED)) {
            // A read hold is an exclusive one here.
            $conflicts(fn () => $this->store->saveRead($reader2), 'a second reader on a store without shared holds');
            self::assertTrue($this->store->exists($reader1));
            self::assertFalse($this->store->exists($reader2));
            $this->store->delete($reader1);
            self::assertFalse($this->native->isLocked($this->resource));

            return;
        }
        $this->store->saveRead($reader2);
        self::assertTrue($this->store->exists($reader1));
        self::assertTrue($this->store->exists($reader2));
        $conflicts(fn () => $this->store->save($writer), 'a writer while two Keys read');
        self::assertTrue($this->store->exists($reader1), 'the refused writer left the readers alone');
        self::assertTrue($this->store->exists($reader2));
        self::assertFalse($this->store->exists($writer));
        $this->store->delete($reader1);
        self::assertFalse($this->store->exists($reader1));
        self::assertTrue($this->store->exists($reader2));
        $this->store->delete($reader2);

        $this->store->save($writer);
        $conflicts(fn () => $this->store->saveRead($reader1), 'a reader while a Key writes');
        self::assertTrue($this->store->exists($writer));
        self::assertFalse($this->store->exists($reader1));
        $this->store->delete($writer);
        $this->store->saveRead($reader1);
        self::assertTrue($this->store->exists($reader1));
        $this->store->delete($reader1);
    }

    /** A Key reading alone may write (promotion); a Key writing may go back to reading, and others read too (demotion). */
    public function testPromotionAndDemotionAtTheStoreLevel(): void
    {
        $key = new Key($this->resource);
        $other = new Key($this->resource);

        $this->store->saveRead($key);
        $this->store->save($key);
        try {
            $this->store->saveRead($other);
            self::fail('a reader while the promoted Key writes');
        } catch (LockConflictedException) {
        }
        self::assertTrue($this->store->exists($key));
        self::assertFalse($this->store->exists($other));

        $this->store->saveRead($key);
        self::assertTrue($this->store->exists($key), 'demoted: still held');
        if ($this->native->supports(Store::SHARED)) {
            $this->store->saveRead($other);
            self::assertTrue($this->store->exists($other), 'demoted: others read too');
        } else {
            try {
                $this->store->saveRead($other);
                self::fail('a second reader on a store without shared holds');
            } catch (LockConflictedException) {
            }
        }
        $this->store->delete($key);
        $this->store->delete($other);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testSymfonysAutoReleaseDecides(): void
    {
        $lock = $this->factory->createLock($this->resource, 300.0, true);
        self::assertTrue($lock->acquire());
        unset($lock);
        self::assertFalse($this->native->isLocked($this->resource), 'autoRelease: released on destruction');

        // Without autoRelease, the hold lasts as long as its Key (on Redis: until its TTL).
        $key = new Key($this->resource);
        $lock = new Lock($key, $this->store, 300.0, false);
        self::assertTrue($lock->acquire());
        unset($lock);
        self::assertTrue($this->native->isLocked($this->resource), 'no autoRelease: still held');
        $this->store->delete($key);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testAFatalErrorReleasesWhatALockWithAutoReleaseHeldAsPhpEndsTheRequest(): void
    {
        $child = new Child(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create($args['kind']));
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLock($args['resource'], 300.0);
            $noAutoRelease = (new Symfony\Component\Lock\LockFactory($store))->createLock($args['resource'] . '-kept', 300.0, false);
            if (!$lock->acquire() || !$noAutoRelease->acquire()) { exit(2); }
            $GLOBALS['kept'] = [$lock, $noAutoRelease];
            echo "held\n";
            ini_set('memory_limit', '32M');
            $hog = [];
            while (true) { $hog[] = str_repeat('x', 1 << 20); }
            PHP, ['kind' => static::kind(), 'resource' => $this->resource]);
        self::assertSame('held', $child->readLine());
        try {
            $child->finish();
            self::fail('the child did not end with a fatal error');
        } catch (\RuntimeException $e) {
            self::assertStringContainsString('Allowed memory size', $e->getMessage());
        }
        self::assertFalse($this->native->isLocked($this->resource), 'autoRelease: released at the end of the request, fatal error or not');
        if (!$this->native->supports(Store::PROCESS_BOUND)) {
            self::assertTrue($this->native->isLocked($this->resource . '-kept'), 'no autoRelease: the hold outlives the process');
            $this->native->forceRelease($this->resource . '-kept');
        }
    }

    public function testResetReleasesWhatLocksWithAutoReleaseStillHold(): void
    {
        $r = fn (string $n): string => $this->resource . '-' . $n;
        $kept = $this->factory->createLock($r('kept'), 300.0, true);
        $reader = $this->factory->createLock($r('read'), 300.0, true);
        $noAutoRelease = $this->factory->createLock($r('no-auto'), 300.0, false);
        $released = $this->factory->createLock($r('released'), 300.0, true);
        $direct = new Key($r('direct'));
        self::assertTrue($kept->acquire());
        self::assertTrue($reader->acquireRead());
        self::assertTrue($noAutoRelease->acquire());
        self::assertTrue($released->acquire());
        $released->release();
        $this->store->save($direct);

        // The worker ends the request (services_resetter, kernel.terminate).
        $this->store->reset();
        self::assertFalse($this->native->isLocked($r('kept')), 'autoRelease: released at the end of the request');
        self::assertFalse($this->native->isLocked($r('read')));
        self::assertFalse($kept->isAcquired());
        self::assertTrue($this->native->isLocked($r('no-auto')), 'no autoRelease: Symfony keeps it');
        self::assertTrue($noAutoRelease->isAcquired());
        self::assertTrue($this->native->isLocked($r('direct')), 'a Key saved without a Lock is left alone');
        self::assertTrue($this->factory->createLock($r('released'))->acquire(), 'the next request takes it');

        $kept->release();  // releasing a Lock whose hold the reset ended is not an error
        self::assertTrue($kept->acquire(), 'the next request of the same worker takes it again');
        $this->store->reset();
        self::assertFalse($this->native->isLocked($r('kept')));
        $this->store->reset();  // nothing left: nothing happens

        $noAutoRelease->release();
        $this->store->delete($direct);
        self::assertFalse($this->native->isLocked($r('no-auto')));
        self::assertFalse($this->native->isLocked($r('direct')));
    }

    public function testResetAfterCombinedStoreReleasesItsPart(): void
    {
        $combined = new \Symfony\Component\Lock\Store\CombinedStore(
            [$this->store],
            new \Symfony\Component\Lock\Strategy\UnanimousStrategy(),
        );
        $lock = (new LockFactory($combined))->createLock($this->resource);
        self::assertTrue($lock->acquire());
        $this->store->reset();
        self::assertFalse($this->native->isLocked($this->resource));
        self::assertFalse($lock->isAcquired());
    }

    public function testBlockingAcquireIsWokenByAReleaseInAnotherProcess(): void
    {
        $child = $this->holdInChild(0.3);
        $lock = $this->factory->createLock($this->resource);
        self::assertFalse($lock->acquire());
        self::assertTrue($lock->acquire(true));
        self::assertSame('released', $child->finish());
        self::assertTrue($lock->isAcquired());
        $lock->release();
    }

    public function testBlockingReadIsWokenByAReleaseInAnotherProcess(): void
    {
        $child = $this->holdInChild(0.3);
        $lock = $this->factory->createLock($this->resource);
        self::assertTrue($lock->acquireRead(true));
        self::assertSame('released', $child->finish());
        self::assertTrue($lock->isAcquired());
        $lock->release();
    }

    public function testCombinedStoreHoldsOnEachStore(): void
    {
        $second = Stores::create(static::kind(), 'lock-adapters-symfony-2:');
        $resource = $this->resource;
        if ($second->supports(Store::PROCESS_BOUND)) {
            // One flock directory or semaphore set: a second store over it would conflict with the first.
            $second = Stores::create('redis');
        }
        $combined = new \Symfony\Component\Lock\Store\CombinedStore(
            [$this->store, new ExtensionStore($second)],
            new \Symfony\Component\Lock\Strategy\UnanimousStrategy(),
        );
        $lock = (new LockFactory($combined))->createLock($resource);

        self::assertTrue($lock->acquire());
        self::assertTrue($this->native->isLocked($resource));
        self::assertTrue($second->isLocked($resource));
        self::assertFalse($this->factory->createLock($resource)->acquire());
        self::assertTrue($lock->isAcquired());
        $lock->release();
        self::assertFalse($this->native->isLocked($resource));
        self::assertFalse($second->isLocked($resource));
    }

    public function testForkedChildLeavesTheParentsHold(): void
    {
        $out = Child::run(<<<'PHP'
            $native = Lock\Adapter\Symfony\Tests\Support\Stores::create($args['kind']);
            $lock = (new Symfony\Component\Lock\LockFactory(new Lock\Adapter\Symfony\ExtensionStore($native)))->createLock($args['resource']);
            $lock->acquire();
            $pid = pcntl_fork();
            if ($pid === 0) {
                // Symfony's autoRelease runs in the child too: it must not free the parent's hold.
                unset($lock);
                exit(0);
            }
            pcntl_waitpid($pid, $status);
            echo $native->isLocked($args['resource']) && $lock->isAcquired() ? 'kept' : 'lost';
            $lock->release();
            PHP, ['kind' => static::kind(), 'resource' => $this->resource]);
        self::assertSame('kept', $out);
    }

    /** A child process that holds $this->resource through the adapter, for $seconds, then releases it. */
    protected function holdInChild(float $seconds): Child
    {
        $child = new Child(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create($args['kind']));
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLock($args['resource']);
            if (!$lock->acquire()) { exit(2); }
            echo "held\n";
            usleep((int) ($args['seconds'] * 1e6));
            $lock->release();
            echo 'released';
            PHP, ['kind' => static::kind(), 'resource' => $this->resource, 'seconds' => $seconds]);
        self::assertSame('held', $child->readLine());

        return $child;
    }
}
