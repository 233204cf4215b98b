<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\Tests\Support\InvoicesLockFactory;
use Lock\Adapter\Symfony\Tests\Support\LockFactories;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Adapter\Symfony\Tests\Support\TestKernel;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\FlockStore;

/**
 * framework.lock with the adapter's bundle, in a real kernel: every factory FrameworkBundle
 * builds (lock.factory, the autowired LockFactory, named resources) goes through the extension
 * for a DSN "lock:<the extension's DSN>", and through Symfony's own stores for any other.
 */
final class FrameworkLockTest extends TestCase
{
    private string $directory;
    private string $prefix;
    /** @var list<TestKernel> */
    private array $kernels = [];

    protected function setUp(): void
    {
        $this->directory = sys_get_temp_dir() . '/lock-symfony-kernel-' . bin2hex(random_bytes(6));
        $this->prefix = 'sf-bundle-' . bin2hex(random_bytes(6)) . ':';
    }

    protected function tearDown(): void
    {
        foreach ($this->kernels as $kernel) {
            $kernel->shutdown();
        }
        self::remove($this->directory);
        unset($_SERVER['LOCK_SYMFONY_TEST_DSN'], $_ENV['LOCK_SYMFONY_TEST_DSN']);
    }

    public function testLockFactoryAndTheAutowiredLockFactoryTakeTheirLocksInTheExtensionsStore(): void
    {
        $factories = $this->service($this->boot($this->lockDsn()), LockFactories::class);
        self::assertInstanceOf(LockFactories::class, $factories);
        self::assertSame($factories->byId, $factories->autowired, 'lock.factory is the autowired LockFactory');
        self::assertInstanceOf(ExtensionStore::class, self::storeOf($factories->byId));

        $native = $this->native();
        $lock = $factories->byId->createLock('invoice-42');
        self::assertTrue($lock->acquire());
        self::assertTrue($native->isLocked('invoice-42'), 'held in the extension\'s store');
        self::assertFalse((new \Lock\Lock('invoice-42', $native))->acquire(), 'the extension\'s own Lock on the same DSN is excluded');
        self::assertFalse($factories->autowired->createLock('invoice-42')->acquire());
        $lock->release();
        self::assertFalse($native->isLocked('invoice-42'));
    }

    public function testNamedResourcesGetTheirOwnFactoryThroughTheExtension(): void
    {
        $kernel = $this->boot(['default' => $this->lockDsn(), 'invoices' => $this->lockDsn('invoices:')]);
        $invoices = $this->service($kernel, InvoicesLockFactory::class)->invoicesLockFactory;
        self::assertInstanceOf(ExtensionStore::class, self::storeOf($invoices));
        self::assertNotSame($this->service($kernel, 'lock.factory'), $invoices);

        $lock = $invoices->createLock('invoice-42');
        self::assertTrue($lock->acquire());
        self::assertTrue($this->native('invoices:')->isLocked('invoice-42'), 'held under the resource\'s own DSN');
        self::assertFalse($this->native()->isLocked('invoice-42'));
        $lock->release();
    }

    public function testAnEnvPlaceholderIsResolvedWhenTheStoreIsBuiltNotWhenTheContainerIs(): void
    {
        $_SERVER['LOCK_SYMFONY_TEST_DSN'] = $_ENV['LOCK_SYMFONY_TEST_DSN'] = $this->lockDsn();
        $environment = self::environment();
        $factory = $this->service($this->boot('%env(LOCK_SYMFONY_TEST_DSN)%', $environment), 'lock.factory');
        self::assertInstanceOf(ExtensionStore::class, self::storeOf($factory));
        $lock = $factory->createLock('report');
        self::assertTrue($lock->acquire());
        self::assertTrue($this->native()->isLocked('report'));
        $lock->release();

        // The same compiled container in a process whose environment names one of Symfony's stores.
        $_SERVER['LOCK_SYMFONY_TEST_DSN'] = $_ENV['LOCK_SYMFONY_TEST_DSN'] = 'flock';
        $factory = $this->service($this->boot('%env(LOCK_SYMFONY_TEST_DSN)%', $environment), 'lock.factory');
        self::assertInstanceOf(FlockStore::class, self::storeOf($factory));
    }

    public function testSeveralDsnsForOneResourceMakeSymfonysCombinedStoreOverEach(): void
    {
        $flockDirectory = $this->directory . '/flock';
        $factory = $this->service($this->boot([$this->lockDsn(), 'lock:flock://' . $flockDirectory]), 'lock.factory');
        $combined = self::storeOf($factory);
        self::assertInstanceOf(CombinedStore::class, $combined);
        $stores = (fn (): array => $this->stores)->call($combined);
        self::assertCount(2, $stores);
        self::assertContainsOnlyInstancesOf(ExtensionStore::class, $stores);

        $lock = $factory->createLock('nightly');
        self::assertTrue($lock->acquire());
        self::assertTrue($this->native()->isLocked('nightly'));
        self::assertTrue((new \Lock\Store\FlockStore($flockDirectory))->isLocked('nightly'));
        $lock->release();
        self::assertFalse($this->native()->isLocked('nightly'));
    }

    public function testARedlockDsnIsOneStoreOverEveryServer(): void
    {
        $factory = $this->service($this->boot('lock:' . Stores::redlockDsn() . '?prefix=' . $this->prefix), 'lock.factory');
        $store = self::storeOf($factory);
        self::assertInstanceOf(ExtensionStore::class, $store, 'the extension\'s CombinedStore, not Symfony\'s');
        self::assertInstanceOf(\Lock\Store\CombinedStore::class, $store->getStore());

        $lock = $factory->createLock('nightly');
        self::assertTrue($lock->acquire());
        foreach (Stores::redlockHosts() as $host) {
            self::assertTrue((new \Lock\Store\RedisStore('redis://' . $host, ['prefix' => $this->prefix]))->isLocked('nightly'), "held on $host");
        }
        self::assertFalse($factory->createLock('nightly')->acquire());
        $lock->release();
        self::assertFalse(Stores::create('redlock', $this->prefix)->isLocked('nightly'));
    }

    public function testOtherDsnsGoToSymfonysOwnStoreFactoryUnchanged(): void
    {
        $factory = $this->service($this->boot('flock'), 'lock.factory');
        self::assertInstanceOf(FlockStore::class, self::storeOf($factory));

        $factory = $this->service($this->boot(['flock', $this->lockDsn()]), 'lock.factory');
        $stores = (fn (): array => $this->stores)->call(self::storeOf($factory));
        self::assertInstanceOf(FlockStore::class, $stores[0]);
        self::assertInstanceOf(ExtensionStore::class, $stores[1]);
    }

    public function testABadLockDsnFailsWithTheExtensionsOwnMessage(): void
    {
        $kernel = $this->boot('lock:' . Stores::redisDsn() . '?prefx=app:');
        try {
            $this->service($kernel, 'lock.factory');
            self::fail('a lock.factory over a DSN the extension refuses');
        } catch (\ValueError $e) {
            self::assertStringContainsString('unknown query parameter "prefx"', $e->getMessage());
        }
    }

    /** auto_refresh in the query of a lock: DSN is the store's $autoRefresh; the rest goes to the extension. */
    public function testAutoRefreshInTheDsnIsTheStoresOption(): void
    {
        foreach (['&auto_refresh=true' => true, '&auto_refresh=600' => 600.0, '&auto_refresh=1.5' => 1.5, '&auto_refresh=false' => false, '' => false] as $query => $expected) {
            $store = self::storeOf($this->service($this->boot($this->lockDsn() . $query), 'lock.factory'));
            self::assertInstanceOf(ExtensionStore::class, $store);
            self::assertSame($expected, $store->getAutoRefresh(), $query);
        }
        // The only parameter: the extension's DSN is left without a query.
        $factory = $this->service($this->boot('lock:' . Stores::redisDsn() . '?auto_refresh=true'), 'lock.factory');
        self::assertTrue(self::storeOf($factory)->getAutoRefresh());

        $lock = $this->service($this->boot($this->lockDsn() . '&auto_refresh=true'), 'lock.factory')->createLock('report', 1.0);
        self::assertTrue($lock->acquire());
        sleep(2);
        self::assertTrue($this->native()->isLocked('report'), 'refreshed past its TTL while the Lock holds');
        $lock->release();
        self::assertFalse($this->native()->isLocked('report'));
    }

    public function testABadAutoRefreshInTheDsnIsRefused(): void
    {
        foreach (['yes' => '"yes" given', '-5' => '"-5" given', '0' => 'auto_refresh=0 is ambiguous: write auto_refresh=false', '1' => 'auto_refresh=1 is ambiguous: write auto_refresh=true', 'NAN' => '"NAN" given', '' => '"" given'] as $value => $message) {
            $kernel = $this->boot($this->lockDsn() . '&auto_refresh=' . $value);
            try {
                $this->service($kernel, 'lock.factory');
                self::fail("a lock.factory with auto_refresh=$value");
            } catch (\ValueError $e) {
                self::assertStringContainsString($message, $e->getMessage());
            }
        }
    }

    public function testAWorkersLockKeptAcrossServicesResetterStaysAcquired(): void
    {
        $kernel = $this->boot($this->lockDsn());
        $factory = $this->service($kernel, 'lock.factory');
        $kept = $factory->createLock('consumer-singleton');
        self::assertTrue($kept->acquire());

        // What Messenger's worker does between two messages (and FrankenPHP, RoadRunner between requests).
        $this->service($kernel, 'services_resetter')->reset();
        self::assertTrue($kept->isAcquired(), 'a Lock the worker keeps across messages keeps its hold');
        self::assertTrue($this->native()->isLocked('consumer-singleton'));
        self::assertFalse($this->service($kernel, 'lock.factory')->createLock('consumer-singleton')->acquire());
        $kept->release();
        self::assertFalse($this->native()->isLocked('consumer-singleton'));
    }

    public function testWithoutTheExtensionBuildingTheContainerSaysToLoadIt(): void
    {
        $out = Child::run(<<<'PHP'
            echo extension_loaded('lock') ? "loaded\n" : "not loaded\n";
            try {
                (new Lock\Adapter\Symfony\Tests\Support\TestKernel($args['lock'], $args['directory'], $args['environment']))->boot();
                echo 'built';
            } catch (Throwable $e) {
                echo get_class($e), ': ', $e->getMessage();
            }
            PHP, ['lock' => $this->lockDsn(), 'directory' => $this->directory, 'environment' => self::environment()], false);
        self::assertStringStartsWith("not loaded\n", $out);
        self::assertStringContainsString('LogicException: ', $out);
        self::assertStringContainsString('the lock extension is not loaded', $out);
        self::assertStringContainsString('extension=lock', $out);
    }

    public function testWithoutTheExtensionAContainerCompiledWithItSaysToLoadIt(): void
    {
        $environment = self::environment();
        $this->boot($this->lockDsn(), $environment);
        $out = Child::run(<<<'PHP'
            echo extension_loaded('lock') ? "loaded\n" : "not loaded\n";
            $kernel = new Lock\Adapter\Symfony\Tests\Support\TestKernel($args['lock'], $args['directory'], $args['environment']);
            $kernel->boot();
            try {
                $kernel->getContainer()->get('test.service_container')->get('lock.factory');
                echo 'built';
            } catch (Throwable $e) {
                echo get_class($e), ': ', $e->getMessage();
            }
            PHP, ['lock' => $this->lockDsn(), 'directory' => $this->directory, 'environment' => $environment], false);
        self::assertStringStartsWith("not loaded\n", $out);
        self::assertStringContainsString('LogicException: ', $out);
        self::assertStringContainsString('the lock extension is not loaded', $out);
        self::assertStringContainsString('extension=lock', $out);
    }

    /** A DSN of framework.lock for the extension's RedisStore on the suite's server, under this test's prefix. */
    private function lockDsn(string $suffix = ''): string
    {
        return 'lock:' . Stores::redisDsn() . '?prefix=' . $this->prefix . $suffix;
    }

    /** The extension's own store on the DSN lockDsn($suffix) names. */
    private function native(string $suffix = ''): Store
    {
        return Stores::create('redis', $this->prefix . $suffix);
    }

    /** @param string|array<mixed> $lock */
    private function boot(string|array $lock, ?string $environment = null): TestKernel
    {
        $kernel = new TestKernel($lock, $this->directory, $environment ?? self::environment());
        $kernel->boot();
        $this->kernels[] = $kernel;

        return $kernel;
    }

    private function service(TestKernel $kernel, string $id): object
    {
        return $kernel->getContainer()->get('test.service_container')->get($id);
    }

    /** A kernel environment of its own: its own compiled container. */
    private static function environment(): string
    {
        return 't' . bin2hex(random_bytes(4));
    }

    private static function storeOf(LockFactory $factory): PersistingStoreInterface
    {
        return (fn (): PersistingStoreInterface => $this->store)->call($factory);
    }

    private static function remove(string $path): void
    {
        if (is_link($path) || is_file($path)) {
            unlink($path);
        } elseif (is_dir($path)) {
            foreach (scandir($path) as $entry) {
                if ($entry !== '.' && $entry !== '..') {
                    self::remove($path . '/' . $entry);
                }
            }
            rmdir($path);
        }
    }
}
