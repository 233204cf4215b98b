<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Tests;

use Illuminate\Console\Application as Artisan;
use Illuminate\Foundation\Application;
use Illuminate\Support\Facades\Cache;
use Lock\Adapter\Laravel\ExtensionLock;
use Lock\Adapter\Laravel\ExtensionStore;
use Lock\Adapter\Laravel\Tests\Support\App;
use Lock\Adapter\TestSupport\PhpChild as Child;
use Lock\Store;
use Lock\Store\FlockStore;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Console\Tester\ApplicationTester;

/**
 * php artisan lock:inspect and lock:release, registered by LockServiceProvider in a Laravel
 * application whose default cache store `locks` is lock-ext on Redis (under the prefix of
 * App::boot()), with a second lock-ext store `files` on flock and Laravel's `array` store; run
 * through artisan's console Application.
 */
final class ConsoleCommandTest extends TestCase
{
    private Application $app;
    private string $name;
    private string $directory;
    /** @var list<Child> */
    private array $children = [];

    protected function setUp(): void
    {
        $this->app = new Application(sys_get_temp_dir());
        App::boot('redis', $this->app);
        $this->directory = sys_get_temp_dir() . '/lock-laravel-console-' . bin2hex(random_bytes(6));
        $this->app['config']->set('cache.stores.files', ['driver' => 'lock-ext', 'cache_store' => 'array', 'dsn' => 'flock://' . $this->directory]);
        $this->name = 'invoice:' . bin2hex(random_bytes(6));
    }

    protected function tearDown(): void
    {
        foreach ($this->children as $child) {
            try {
                $child->finish();
            } catch (\Throwable) {
            }
        }
        Artisan::forgetBootstrappers();
        foreach (glob($this->directory . '/*') ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->directory);
    }

    public function testTheProviderRegistersBothCommands(): void
    {
        $artisan = $this->artisanApplication();
        self::assertTrue($artisan->has('lock:inspect'));
        self::assertTrue($artisan->has('lock:release'));
    }

    public function testInspectAFreeLock(): void
    {
        $tester = $this->artisan(['command' => 'lock:inspect', 'name' => $this->name]);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        self::assertStringContainsString('Lock ' . $this->name . ' (cache store locks, Lock\Store\RedisStore)', $tester->getDisplay());
        self::assertMatchesRegularExpression('/held\s+\|\s+no/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/mode\s+\|\s+none/', $tester->getDisplay());

        $artisan = $this->artisanApplication();
        self::assertSame(0, $artisan->call('lock:inspect', ['name' => $this->name, '--format' => 'json']));
        self::assertSame($this->native()->inspect(ExtensionLock::resource($this->name)), json_decode($artisan->output(), true, 512, JSON_THROW_ON_ERROR));
    }

    public function testInspectShowsTheHoldCacheLockTook(): void
    {
        $lock = Cache::lock($this->name, 60);
        self::assertTrue($lock->get());

        $tester = $this->artisan(['command' => 'lock:inspect', 'name' => $this->name]);
        self::assertSame(0, $tester->getStatusCode());
        $display = $tester->getDisplay();
        self::assertMatchesRegularExpression('/held\s+\|\s+yes/', $display);
        self::assertMatchesRegularExpression('/mode\s+\|\s+write/', $display);
        self::assertMatchesRegularExpression('/owners\s+\|\s+' . preg_quote($lock->owner(), '/') . '/', $display);
        self::assertMatchesRegularExpression('/ttl\s+\|\s+(59|60)\.\d{3} s/', $display);

        $json = json_decode($this->artisan(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        $native = $this->native()->inspect(ExtensionLock::resource($this->name));
        self::assertSame(['held', 'mode', 'owners', 'ttl', 'fencing', 'waiters', 'queue', 'holders'], array_keys($json));
        self::assertSame([$lock->owner()], $json['owners']);
        self::assertEqualsWithDelta($native['ttl'], $json['ttl'], 1.0);
        unset($json['ttl'], $native['ttl']);
        self::assertSame($native, $json);
        $lock->release();
    }

    public function testAHoldWithoutExpiryShowsNoExpiry(): void
    {
        $lock = Cache::lock($this->name);
        self::assertTrue($lock->get());
        self::assertMatchesRegularExpression('/ttl\s+\|\s+no expiry/', $this->artisan(['command' => 'lock:inspect', 'name' => $this->name])->getDisplay());
        self::assertNull(json_decode($this->artisan(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true)['ttl']);
        $lock->release();
    }

    public function testInspectAHoldOfAnotherProcessAndItsWaiterThenReleaseIt(): void
    {
        $holder = $this->child('hold');
        $owner = $holder->readLine();
        $waiter = $this->child('wait');
        $resource = ExtensionLock::resource($this->name);
        for ($i = 0; $i < 500 && ($this->native()->inspect($resource)['waiters'] ?? 0) < 1; ++$i) {
            usleep(10_000);
        }

        $json = json_decode($this->artisan(['command' => 'lock:inspect', 'name' => $this->name, '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertTrue($json['held']);
        self::assertSame([$owner], $json['owners']);
        self::assertSame(1, $json['waiters']);
        self::assertMatchesRegularExpression('/waiters\s+\|\s+1\b/', $this->artisan(['command' => 'lock:inspect', 'name' => $this->name])->getDisplay());

        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name, '--force' => true]);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        self::assertStringContainsString('Released the lock ' . $this->name, $tester->getDisplay());
        self::assertMatchesRegularExpression('/owners\s+\|\s+' . preg_quote($owner, '/') . '/', $tester->getDisplay());
        self::assertSame('acquired', $waiter->readLine(), 'the waiter gets the lock the command broke');
        self::assertSame('lost', $holder->readLine(), 'the holder finds its hold gone');
    }

    public function testInspectReadersOnAFlockStore(): void
    {
        $resource = ExtensionLock::resource($this->name);
        $store = Cache::store('files')->getStore();
        self::assertInstanceOf(ExtensionStore::class, $store);
        $a = $store->getFactory()->createLock($resource);
        $b = $store->getFactory()->createLock($resource);
        self::assertTrue($a->acquireRead());
        self::assertTrue($b->acquireRead());

        $tester = $this->artisan(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'files']);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        self::assertMatchesRegularExpression('/mode\s+\|\s+read/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/ttl\s+\|\s+no expiry/', $tester->getDisplay());
        self::assertMatchesRegularExpression('/holders\s+\|\s+' . getmypid() . ', ' . getmypid() . '\s/', $tester->getDisplay(), 'flock: the pid of each read hold');
        $json = json_decode($this->artisan(['command' => 'lock:inspect', 'name' => $this->name, '--store' => 'files', '--format' => 'json'])->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertSame((new FlockStore($this->directory))->inspect($resource), $json);
        self::assertSame('read', $json['mode']);
        self::assertSame([getmypid(), getmypid()], $json['holders']);
        self::assertMatchesRegularExpression('/held\s+\|\s+no/', $this->artisan(['command' => 'lock:inspect', 'name' => $this->name])->getDisplay(), 'the default store is another store');
        $a->release();
        $b->release();
    }

    public function testReleaseWithForceBreaksTheHoldAndPrintsItAsJson(): void
    {
        $lock = Cache::lock($this->name, 60);
        self::assertTrue($lock->get());

        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name, '--force' => true, '--format' => 'json']);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        $broken = json_decode($tester->getDisplay(), true, 512, JSON_THROW_ON_ERROR);
        self::assertTrue($broken['held']);
        self::assertSame('write', $broken['mode']);
        self::assertSame([$lock->owner()], $broken['owners']);
        self::assertFalse($this->native()->isLocked(ExtensionLock::resource($this->name)));
        $next = Cache::lock($this->name, 60);
        self::assertTrue($next->get(), 'someone else takes it next');
        self::assertFalse($lock->release(), 'the broken hold is no longer ours');
        self::assertTrue($next->release());
    }

    public function testReleaseOfAFreeLockExitsOne(): void
    {
        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name, '--force' => true]);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('Nothing holds the lock', $tester->getErrorOutput());
    }

    public function testReleaseWithoutForceAndWithoutInteractionRefuses(): void
    {
        $lock = Cache::lock($this->name, 60);
        self::assertTrue($lock->get());
        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name, '--no-interaction' => true]);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('pass --force', $tester->getErrorOutput());
        self::assertTrue($lock->isOwnedByCurrentProcess(), 'still held');
        $lock->release();
    }

    public function testReleaseAsksForConfirmationShowingTheHolder(): void
    {
        $lock = Cache::lock($this->name, 60);
        self::assertTrue($lock->get());

        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name], ['no']);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('held (write) by ' . $lock->owner(), $tester->getErrorOutput());
        self::assertTrue($lock->isOwnedByCurrentProcess(), 'not confirmed: still held');

        $tester = $this->artisan(['command' => 'lock:release', 'name' => $this->name], ['yes']);
        self::assertSame(0, $tester->getStatusCode(), $tester->getErrorOutput());
        self::assertFalse($lock->isOwnedByCurrentProcess(), 'confirmed: broken');
    }

    public function testBadInputIsAClearErrorWithExitTwo(): void
    {
        $cases = [
            [['name' => ''], 'The lock name is empty'],
            [['name' => 'x', '--format' => 'xml'], 'Unknown format "xml" (known: table, json)'],
            [['name' => 'x', '--store' => 'nope'], 'Cache store [nope] is not defined'],
        ];
        foreach (['lock:inspect', 'lock:release'] as $command) {
            foreach ($cases as [$input, $message]) {
                $tester = $this->artisan(['command' => $command] + $input + ($command === 'lock:release' ? ['--force' => true] : []));
                self::assertSame(2, $tester->getStatusCode(), $command . ' ' . json_encode($input) . ': ' . $tester->getDisplay() . $tester->getErrorOutput());
                self::assertStringContainsString($message, $tester->getErrorOutput());
                self::assertStringNotContainsString('Warning', $tester->getErrorOutput());
            }
        }
    }

    public function testACacheStoreThatIsNotLockExtIsRefused(): void
    {
        $tester = $this->artisan(['command' => 'lock:inspect', 'name' => 'x', '--store' => 'array']);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('Cache store [array] is not a lock-ext store (its driver is array)', $tester->getErrorOutput());

        $this->app['config']->set('cache.default', 'array');
        $tester = $this->artisan(['command' => 'lock:release', 'name' => 'x', '--force' => true]);
        self::assertSame(1, $tester->getStatusCode());
        self::assertStringContainsString('Cache store [array] is not a lock-ext store', $tester->getErrorOutput());
    }

    private function artisanApplication(): Artisan
    {
        $artisan = new Artisan($this->app, $this->app['events'], 'test');
        $artisan->setAutoExit(false);

        return $artisan;
    }

    /**
     * @param array<string, mixed> $input
     * @param list<string>|null    $answers answers to the questions (interactive); null: none
     */
    private function artisan(array $input, ?array $answers = null): ApplicationTester
    {
        $tester = new ApplicationTester($this->artisanApplication());
        if ($answers !== null) {
            $tester->setInputs($answers);
        }
        $tester->run($input, ['capture_stderr_separately' => true, 'interactive' => $answers !== null, 'decorated' => false]);

        return $tester;
    }

    private function native(): Store
    {
        $store = Cache::store()->getStore();
        self::assertInstanceOf(ExtensionStore::class, $store);

        return $store->getFactory()->getStore();
    }

    /** A process holding (hold: prints its owner, then "lost" once its hold is gone) or waiting for (wait) the lock, through Cache::lock(). */
    private function child(string $role): Child
    {
        $child = new Child(<<<'PHP'
            Lock\Adapter\Laravel\Tests\Support\App::boot('redis');
            $lock = Illuminate\Support\Facades\Cache::lock($args['name'], 60);
            if ($args['role'] === 'hold') {
                if (!$lock->get()) { exit(2); }
                echo "held\n", $lock->owner(), "\n";
                for ($i = 0; $i < 3000 && $lock->isOwnedByCurrentProcess(); ++$i) { usleep(10_000); }
                echo $lock->isOwnedByCurrentProcess() ? "still held\n" : "lost\n";
            } else {
                echo "waiting\n";
                echo $lock->block(30) ? "acquired\n" : "not acquired\n";
                $lock->release();
            }
            PHP, ['name' => $this->name, 'role' => $role]);
        $this->children[] = $child;
        self::assertSame($role === 'hold' ? 'held' : 'waiting', $child->readLine());

        return $child;
    }
}
