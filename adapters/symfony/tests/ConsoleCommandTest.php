<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\Tests\Support\Stores;
use Lock\Adapter\Symfony\Tests\Support\TestKernel;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use Lock\Store\FlockStore;
use PHPUnit\Framework\TestCase;
use Symfony\Bundle\FrameworkBundle\Console\Application;
use Symfony\Component\Console\Tester\ApplicationTester;
use Symfony\Component\Lock\LockFactory;

/**
 * bin/console lock:inspect and lock:release, registered by the bundle, run through a console
 * Application over a real kernel whose framework.lock has the extension's Redis store (default,
 * and the resource "invoices"), its flock store ("files"), its combined store over three Redis
 * servers ("redlock") and Symfony's own FlockStore ("symfony"); and the logger the bundle gives the stores.
 */
final class ConsoleCommandTest extends TestCase
{
    private string $directory;
    private string $prefix;
    private string $name;
    private ?TestKernel $kernel = null;
    /** @var list<Child> */
    private array $children = [];

    protected function setUp(): void
    {
        $this->directory = sys_get_temp_dir() . '/lock-symfony-console-' . bin2hex(random_bytes(6));
        $this->prefix = 'sf-console-' . bin2hex(random_bytes(6)) . ':';
        $this->name = 'invoice:' . bin2hex(random_bytes(4));
    }

    protected function tearDown(): void
    {
        foreach ($this->children as $child) {
            try {
                $child->finish();
            } catch (\Throwable) {
            }
        }
        $this->kernel?->shutdown();
        self::remove($this->directory);
    }

    public function testTheBundleRegistersBothCommands(): void
    {
        $tester = $this->console(['command' => 'list', '--format' => 'txt']);
        self::assertSame(0, $tester->getStatusCode());
        self::assertStringContainsString('lock:inspect', $tester->getDisplay());
        self::assertStringContainsString('lock:release', $tester->getDisplay());
    }

    public function testInspectAFreeLock(): void
    {
        $tester = $this->console(['command' => 'lock:inspect', 'name' => $this->name]);
        self::assertSame(0, $tester->getStatusCode(), $tester->getDisplay());
        self::assertMatchesRegularExpression('/held\s+\|\s+no/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/mode\s+\|\s+none/', $tester->getDisplay());

        $tester = $this->console(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json']);
        self::assertSame(0, $tester->getStatusCode());
        self::assertSame($this->native()->inspect($this->name), json_decode($tester->getDisplay(), true, 512, JSON_THROW_ON_ERROR));
    }

    public function testInspectALockHeldThroughTheApplicationsFactory(): void
    {
        $lock = $this->factory()->createLock($this->name, 60.0);
        self::assertTrue($lock->acquire());
        $native = $this->native()->inspect($this->name);
        self::assertTrue($native['held']);
        self::assertCount(1, $native['owners']);

        $tester = $this->console(['command' => 'lock:inspect', 'name' => $this->name]);
        self::assertSame(0, $tester->getStatusCode());
        $display = $tester->getDisplay();
        self::assertStringContainsString($this->name, $display);
        self::assertMatchesRegularExpression('/held\s+\|\s+yes/', $display);
        self::assertMatchesRegularExpression('/mode\s+\|\s+write/', $display);
        self::assertMatchesRegularExpression('/owners\s+\|\s+' . preg_quote($native['owners'][0], '/') . '/', $display);
        self::assertMatchesRegularExpression('/ttl\s+\|\s+(59|60)\.\d{3} s/', $display);
        self::assertMatchesRegularExpression('/fencing\s+\|\s+' . ($native['fencing'] ?? 'unknown') . '\b/', $display);

        $json = json_decode($this->console(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertSame(['held', 'mode', 'owners', 'ttl', 'fencing', 'waiters', 'queue', 'holders'], array_keys($json));
        self::assertEqualsWithDelta($native['ttl'], $json['ttl'], 1.0);
        unset($json['ttl'], $native['ttl']);
        self::assertSame($native, $json);
        $lock->release();
    }

    public function testInspectAHoldOfAnotherProcessAndItsWaiter(): void
    {
        $holder = $this->child('hold');
        $waiter = $this->child('wait');
        $state = $this->native()->inspect($this->name);
        for ($i = 0; $i < 500 && ($state['waiters'] ?? 0) < 1; ++$i) {
            usleep(10_000);
            $state = $this->native()->inspect($this->name);
        }
        self::assertSame(1, $state['waiters'], 'the waiter waits');

        $json = json_decode($this->console(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertTrue($json['held']);
        self::assertSame(1, $json['waiters']);
        self::assertSame($state['owners'], $json['owners']);
        self::assertMatchesRegularExpression('/waiters\s+\|\s+1\b/', $this->console(['command' => 'lock:inspect', 'name' => $this->name])->getDisplay());

        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name, '--force' => true]);
        self::assertSame(0, $tester->getStatusCode(), $tester->getDisplay());
        self::assertStringContainsString('Released the lock ' . $this->name, $tester->getDisplay());
        self::assertMatchesRegularExpression('/owners\s+\|\s+' . preg_quote($state['owners'][0], '/') . '/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/fencing\s+\|\s+' . ($state['fencing'] ?? 'unknown') . '\b/', $tester->getDisplay());
        self::assertSame('acquired', $waiter->readLine(), 'the waiter gets the lock the command broke');
        self::assertSame('lost', $holder->readLine(), 'the holder finds its hold gone');
    }

    public function testInspectReadersOnTheFlockStoreOfANamedResource(): void
    {
        $factory = new LockFactory(new \Lock\Adapter\Symfony\ExtensionStore(new FlockStore($this->directory . '/flock')));
        $a = $factory->createLock($this->name);
        $b = $factory->createLock($this->name);
        self::assertTrue($a->acquireRead());
        self::assertTrue($b->acquireRead());

        $tester = $this->console(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'files']);
        self::assertSame(0, $tester->getStatusCode(), $tester->getDisplay());
        self::assertMatchesRegularExpression('/mode\s+\|\s+read/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/ttl\s+\|\s+no expiry/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/holders\s+\|\s+' . getmypid() . ', ' . getmypid() . '\s/', $tester->getDisplay(), 'flock: the pid of each read hold');
        $json = json_decode($this->console(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'files', '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertSame((new FlockStore($this->directory . '/flock'))->inspect($this->name), $json);
        self::assertSame('read', $json['mode']);
        self::assertSame([getmypid(), getmypid()], $json['holders']);
        self::assertNull($json['ttl']);
        self::assertMatchesRegularExpression('/held\s+\|\s+no/', $this->console(['command' => 'lock:inspect', 'name' => $this->name])->getDisplay(), 'the default resource is another store');
        $a->release();
        $b->release();
    }

    public function testStorePicksTheNamedResource(): void
    {
        $lock = (new LockFactory(new \Lock\Adapter\Symfony\ExtensionStore($this->native('invoices:'))))->createLock($this->name);
        self::assertTrue($lock->acquire());
        self::assertFalse(json_decode($this->console(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true)['held']);
        self::assertTrue(json_decode($this->console(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'invoices', '--format' => 'json'])->getDisplay(), true)['held']);
        $lock->release();
    }

    public function testInspectAndReleaseOnTheCombinedStoreOfARedlockDsn(): void
    {
        $native = Stores::create('redlock', $this->prefix);
        $factory = new LockFactory(new \Lock\Adapter\Symfony\ExtensionStore($native));
        $lock = $factory->createLock($this->name, 60.0);
        self::assertTrue($lock->acquire());
        $owner = $native->inspect($this->name)['owners'][0];

        $tester = $this->console(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'redlock', '--format' => 'json']);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        $state = json_decode($tester->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertTrue($state['held']);
        self::assertSame('write', $state['mode']);
        self::assertSame([$owner], $state['owners']);

        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name, '--store' => 'redlock', '--force' => true]);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        self::assertFalse($lock->isAcquired(), 'broken on every server');
        self::assertTrue($factory->createLock($this->name)->acquire());
    }

    public function testReleaseWithForceBreaksTheHoldAndPrintsItAsJson(): void
    {
        $lock = $this->factory()->createLock($this->name, 60.0);
        self::assertTrue($lock->acquire());
        $before = $this->native()->inspect($this->name);

        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name, '--force' => true, '--format' => 'json']);
        self::assertSame(0, $tester->getStatusCode());
        $broken = json_decode($tester->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertSame('write', $broken['mode']);
        self::assertSame($before['owners'], $broken['owners']);
        self::assertSame($before['fencing'], $broken['fencing']);
        self::assertFalse($this->native()->isLocked($this->name));
        $next = $this->factory()->createLock($this->name);
        self::assertTrue($next->acquire(), 'someone else takes it next');
        self::assertFalse($lock->isAcquired());
        $next->release();
    }

    public function testReleaseOfAFreeLockExitsOne(): void
    {
        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name, '--force' => true]);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('Nothing holds the lock', $tester->getErrorOutput());
    }

    public function testReleaseWithoutForceAndWithoutInteractionRefuses(): void
    {
        $lock = $this->factory()->createLock($this->name);
        self::assertTrue($lock->acquire());
        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name, '--no-interaction' => true]);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('pass --force', $tester->getErrorOutput());
        self::assertTrue($lock->isAcquired(), 'still held');
        $lock->release();
    }

    public function testReleaseAsksForConfirmationShowingTheHolder(): void
    {
        $lock = $this->factory()->createLock($this->name);
        self::assertTrue($lock->acquire());
        $owner = $this->native()->inspect($this->name)['owners'][0];

        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name], ['no']);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('held (write) by ' . $owner, $tester->getErrorOutput());
        self::assertTrue($lock->isAcquired(), 'not confirmed: still held');

        $tester = $this->console(['command' => 'lock:release', 'name' => $this->name], ['yes']);
        self::assertSame(0, $tester->getStatusCode());
        self::assertFalse($lock->isAcquired(), 'confirmed: broken');
    }

    public function testBadInputIsAClearErrorWithExitTwo(): void
    {
        $cases = [
            [['name' => ''], 'The lock name is empty'],
            [['name' => 'x', '--format' => 'xml'], 'Unknown format "xml" (known: table, json)'],
            [['name' => 'x', '--store' => 'nope'], 'framework.lock has no resource "nope"'],
            [['name' => str_repeat('x', 65537)], 'Argument #1 ($resource)'],
        ];
        foreach (['lock:inspect', 'lock:release'] as $command) {
            foreach ($cases as [$input, $message]) {
                $tester = $this->console(['command' => $command] + $input + ($command === 'lock:release' ? ['--force' => true] : []));
                self::assertSame(2, $tester->getStatusCode(), $command . ' ' . json_encode($input) . ': ' . $tester->getDisplay() . $tester->getErrorOutput());
                self::assertStringContainsString($message, $tester->getErrorOutput());
                self::assertStringNotContainsString('Warning', $tester->getErrorOutput());
            }
        }
    }

    public function testAStoreThatIsNotTheExtensionsIsRefused(): void
    {
        $tester = $this->console(['command' => 'lock:inspect', 'name' => 'x', '--store' => 'symfony']);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('not the lock extension\'s', $tester->getErrorOutput());
    }

    /**
     * @param array<string, mixed> $input
     * @param list<string>|null    $answers answers to the questions (interactive); null: none
     */
    private function console(array $input, ?array $answers = null): ApplicationTester
    {
        $application = new Application($this->kernel());
        $application->setAutoExit(false);
        $tester = new ApplicationTester($application);
        if ($answers !== null) {
            $tester->setInputs($answers);
        }
        $tester->run($input, ['capture_stderr_separately' => true, 'interactive' => $answers !== null, 'decorated' => false]);

        return $tester;
    }

    private function kernel(): TestKernel
    {
        if ($this->kernel === null) {
            $this->kernel = new TestKernel([
                'default' => 'lock:' . Stores::redisDsn() . '?prefix=' . $this->prefix,
                'invoices' => 'lock:' . Stores::redisDsn() . '?prefix=' . $this->prefix . 'invoices:',
                'files' => 'lock:flock://' . $this->directory . '/flock',
                'redlock' => 'lock:' . Stores::redlockDsn() . '?prefix=' . $this->prefix,
                'symfony' => 'flock',
            ], $this->directory, 't' . bin2hex(random_bytes(4)));
            $this->kernel->boot();
        }

        return $this->kernel;
    }

    private function service(string $id): object
    {
        return $this->kernel()->getContainer()->get('test.service_container')->get($id);
    }

    private function factory(): LockFactory
    {
        return $this->service('lock.factory');
    }

    private function native(string $suffix = ''): Store
    {
        return Stores::create('redis', $this->prefix . $suffix);
    }

    /** A process holding (hold: until its hold is found gone) or waiting for (wait) the lock, through the extension's store under this test's prefix. */
    private function child(string $role): Child
    {
        $child = new Child(<<<'PHP'
            $store = new Lock\Adapter\Symfony\ExtensionStore(Lock\Adapter\Symfony\Tests\Support\Stores::create('redis', $args['prefix']));
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLock($args['name'], 60.0);
            if ($args['role'] === 'hold') {
                if (!$lock->acquire()) { exit(2); }
                echo "held\n";
                for ($i = 0; $i < 3000 && $lock->isAcquired(); ++$i) { usleep(10_000); }
                echo $lock->isAcquired() ? "still held\n" : "lost\n";
            } else {
                echo "waiting\n";
                echo $lock->acquire(true) ? "acquired\n" : "not acquired\n";
                $lock->release();
            }
            PHP, ['prefix' => $this->prefix, 'name' => $this->name, 'role' => $role]);
        $this->children[] = $child;
        self::assertSame($role === 'hold' ? 'held' : 'waiting', $child->readLine());

        return $child;
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
