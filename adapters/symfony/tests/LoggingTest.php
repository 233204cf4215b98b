<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\Tests\Support\CollectingLogger;
use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Adapter\Symfony\Tests\Support\TestKernel;
use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Store;
use Lock\Store\RedisStore;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Exception\LockReleasingException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\LockFactory;

/** The application's logger, given by the bundle to the extension's stores, in a real kernel. */
final class LoggingTest extends TestCase
{
    private string $directory;
    private string $prefix;
    private string $name;
    private TestKernel $kernel;

    protected function setUp(): void
    {
        $this->directory = sys_get_temp_dir() . '/lock-symfony-logging-' . bin2hex(random_bytes(6));
        $this->prefix = 'sf-logging-' . bin2hex(random_bytes(6)) . ':';
        $this->name = 'invoice:' . bin2hex(random_bytes(4));
        $this->kernel = new TestKernel('lock:' . Stores::redisDsn() . '?prefix=' . $this->prefix, $this->directory, 't' . bin2hex(random_bytes(4)), true);
        $this->kernel->boot();
    }

    protected function tearDown(): void
    {
        $this->kernel->shutdown();
        (new \Symfony\Component\Filesystem\Filesystem())->remove($this->directory);
    }

    public function testAHoldFoundExpiredOrLostAtItsReleaseIsLogged(): void
    {
        $logger = $this->service('logger');
        self::assertInstanceOf(CollectingLogger::class, $logger);
        $factory = $this->service('lock.factory');
        self::assertInstanceOf(LockFactory::class, $factory);

        $lock = $factory->createLock($this->name);
        self::assertTrue($lock->acquire());
        self::assertNotSame([], $logger->matching('Successfully acquired'), 'Symfony\'s Lock logs to the same logger');
        $this->native()->forceRelease($this->name);
        $lock->release();
        self::assertSame(['warning: The "{resource}" lock had expired before its release.'], $logger->matching('before its release'));

        $logger->records = [];
        self::assertTrue($lock->acquire());
        $this->native()->forceRelease($this->name);
        $other = $factory->createLock($this->name);
        self::assertTrue($other->acquire());
        $lock->release();
        self::assertSame(['warning: The "{resource}" lock was lost before its release: someone else holds it.'], $logger->matching('before its release'));
        $record = array_values(array_filter($logger->records, static fn (array $r): bool => str_contains($r['message'], 'was lost')))[0];
        self::assertSame($this->name, (string) $record['context']['resource']);
        self::assertInstanceOf(\Lock\LostException::class, $record['context']['exception']);
        self::assertTrue($other->isAcquired());
        $logger->records = [];
        $other->release();
        self::assertSame([], $logger->matching('before its release'), 'a release of our own hold logs no warning');
    }

    public function testAReleaseResetCouldNotMakeIsLogged(): void
    {
        // A redis-server of this test's own, stopped while a Lock holds on it.
        $port = (int) parse_url('tcp://' . stream_socket_get_name(stream_socket_server('tcp://127.0.0.1:0'), false), PHP_URL_PORT);
        $server = proc_open(['redis-server', '--port', (string) $port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertIsResource($server);
        try {
            $store = null;
            for ($i = 0; $i < 200 && $store === null; ++$i) {
                try {
                    $store = new ExtensionStore(new RedisStore('redis://127.0.0.1:' . $port, ['timeout' => 1.0]));
                    (new LockFactory($store))->createLock('probe')->acquire();
                } catch (\Throwable) {
                    $store = null;
                    usleep(25_000);
                }
            }
            self::assertNotNull($store, 'redis-server started');
            $logger = new CollectingLogger();
            $store->setLogger($logger);
            $lock = (new LockFactory($store))->createLock($this->name);
            self::assertTrue($lock->acquire());
        } finally {
            proc_terminate($server);
            proc_close($server);
        }

        $store->reset();
        self::assertSame(['warning: Failed to release the "{resource}" lock at reset(): it is left to its TTL.'], $logger->matching('reset()'));
        self::assertSame($this->name, (string) $logger->records[array_key_last($logger->records)]['context']['resource']);
        self::assertInstanceOf(LockReleasingException::class, $logger->records[array_key_last($logger->records)]['context']['exception']);
        try {
            // Symfony's Lock asks the store in its destructor whether it still holds: the server is gone.
            unset($lock);
        } catch (LockStorageException) {
        }
    }

    private function service(string $id): object
    {
        return $this->kernel->getContainer()->get('test.service_container')->get($id);
    }

    private function native(): Store
    {
        return Stores::create('redis', $this->prefix);
    }
}
