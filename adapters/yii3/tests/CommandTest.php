<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3\Tests;

use Lock\Adapter\TestSupport\Env;
use Lock\Adapter\Yii3\Command\InspectCommand;
use Lock\Adapter\Yii3\Command\ReleaseCommand;
use Lock\Adapter\Yii3\LockMutexFactory;
use Lock\Lock;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Console\Application;
use Symfony\Component\Console\CommandLoader\FactoryCommandLoader;
use Symfony\Component\Console\Tester\CommandTester;

final class CommandTest extends TestCase
{
    private LockMutexFactory $factory;

    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    /** The stores with inspect() in every build of the extension. */
    public static function stores(): array
    {
        return ['redis' => ['redis'], 'flock' => ['flock'], 'semaphore' => ['semaphore']];
    }

    public static function allStores(): array
    {
        return Env::stores();
    }

    /**
     * The command $name of a console application that loads the commands by name, as
     * yiisoft/yii-console does from params' 'yiisoft/yii-console' => ['commands' => [...]].
     */
    private function tester(string $store, string $name): CommandTester
    {
        $this->factory = LockMutexFactory::fromDsn(Env::dsn($store));
        $factory = $this->factory;
        $app = new Application();
        $app->setCommandLoader(new FactoryCommandLoader([
            'lock:inspect' => static fn () => new InspectCommand($factory),
            'lock:release' => static fn () => new ReleaseCommand($factory),
        ]));

        return new CommandTester($app->find($name));
    }

    /** @param array<string, mixed> $input */
    private static function execute(CommandTester $tester, array $input, bool $interactive = false): int
    {
        return $tester->execute($input, ['interactive' => $interactive, 'capture_stderr_separately' => true]);
    }

    public function testTheCommandsAreNamedAsYiiConsoleCommandsAre(): void
    {
        self::assertSame('lock:inspect', (new InspectCommand(LockMutexFactory::fromDsn(Env::dsn('flock'))))->getName());
        self::assertSame('lock:release', (new ReleaseCommand(LockMutexFactory::fromDsn(Env::dsn('flock'))))->getName());
    }

    #[DataProvider('stores')]
    public function testInspectShowsAFreeLock(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');

        self::assertSame(0, self::execute($tester, ['name' => $name]));
        $out = $tester->getDisplay();
        self::assertStringContainsString(sprintf('Lock "%s" on %s', $name, get_class($this->factory->getStore())), $out);
        self::assertMatchesRegularExpression('/\| held +\| no +\|/', $out);
        self::assertMatchesRegularExpression('/\| mode +\| none \(free\) +\|/', $out);
        self::assertSame('', $tester->getErrorOutput());
    }

    #[DataProvider('stores')]
    public function testInspectShowsTheHoldAMutexTook(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');
        $mutex = $this->factory->create($name);
        self::assertTrue($mutex->acquire());

        self::assertSame(0, self::execute($tester, ['name' => $name]));
        $out = $tester->getDisplay();
        $state = $this->factory->getStore()->inspect($name);
        self::assertMatchesRegularExpression('/\| held +\| yes +\|/', $out);
        self::assertMatchesRegularExpression('/\| mode +\| write +\|/', $out);
        self::assertMatchesRegularExpression('/\| owners +\| ' . ($state['owners'] === null ? 'unknown' : $mutex->getLock()->getOwner()) . ' +\|/', $out);
        self::assertMatchesRegularExpression('/\| fencing +\| ' . ($state['fencing'] ?? 'unknown') . ' +\|/', $out);
        self::assertMatchesRegularExpression($store === 'redis' ? '/\| ttl +\| \d+\.\d{3} s +\|/' : '/\| ttl +\| no expiry +\|/', $out);
        $mutex->release();
    }

    #[DataProvider('stores')]
    public function testInspectShowsReaders(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');
        $readers = [new Lock($name, $this->factory->getStore()), new Lock($name, $this->factory->getStore())];
        foreach ($readers as $reader) {
            self::assertTrue($reader->acquireRead());
        }

        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'json']));
        $shown = json_decode($tester->getDisplay(), true, flags: JSON_THROW_ON_ERROR);
        self::assertTrue($shown['held']);
        self::assertSame('read', $shown['mode']);
        if ($shown['owners'] !== null) {
            self::assertEqualsCanonicalizing([$readers[0]->getOwner(), $readers[1]->getOwner()], $shown['owners']);
        }
    }

    #[DataProvider('stores')]
    public function testJsonIsWhatTheStoreInspects(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');
        $mutex = $this->factory->create($name);
        self::assertTrue($mutex->acquire());

        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'json']));
        $out = $tester->getDisplay();
        self::assertSame(1, substr_count($out, "\n"), 'one JSON object on one line');
        $shown = json_decode($out, true, flags: JSON_THROW_ON_ERROR);
        $state = $this->factory->getStore()->inspect($name);
        self::assertSame(array_keys($state), array_keys($shown));
        if ($state['ttl'] !== null) {
            self::assertEqualsWithDelta($state['ttl'], $shown['ttl'], 5.0);
            unset($state['ttl'], $shown['ttl']);
        }
        self::assertSame($state, $shown, 'null stays null');
        $mutex->release();
    }

    #[DataProvider('allStores')]
    public function testEveryStoreIsInspectedOrSaysItCannotBe(string $store): void
    {
        $tester = $this->tester($store, 'lock:inspect');
        $code = self::execute($tester, ['name' => Env::name()]);

        if (method_exists($this->factory->getStore(), 'inspect')) {
            self::assertSame(0, $code, $tester->getErrorOutput());
            self::assertMatchesRegularExpression('/\| held +\| no +\|/', $tester->getDisplay());
        } else {
            self::assertSame(1, $code);
            self::assertSame('', $tester->getDisplay());
            self::assertStringContainsString(get_class($this->factory->getStore()) . ' cannot be inspected', $tester->getErrorOutput());
        }
    }

    public function testReleaseForceBreaksTheHoldOfAnotherProcess(): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = Lock\Adapter\Yii3\LockMutexFactory::fromDsn($argv[1])->create($argv[2]);
            echo $mutex->acquire() ? "held\n" : "refused\n";
            for ($i = 0; $i < 500 && $mutex->getLock()->isAcquired(); $i++) {
                usleep(20000);
            }
            try {
                $mutex->release();
                echo "still held\n";
            } catch (Yiisoft\Mutex\Exception\MutexReleaseException) {
                echo "broken\n";
            }
            PHP, Env::dsn('flock'), $name);
        self::assertSame('held', $child->line());
        $tester = $this->tester('flock', 'lock:release');
        $mutex = $this->factory->create($name);
        self::assertFalse($mutex->acquire(), 'the child holds it');

        self::assertSame(0, self::execute($tester, ['name' => $name, '--force' => true, '--format' => 'json']));
        $broken = json_decode($tester->getDisplay(), true, flags: JSON_THROW_ON_ERROR);
        self::assertSame(['mode', 'owners', 'fencing'], array_keys($broken));
        self::assertSame('write', $broken['mode']);

        self::assertSame('broken', $child->line(), 'the holder finds its hold gone');
        self::assertSame(0, $child->wait());
        self::assertTrue($mutex->acquire(), 'the next acquire takes it');
        $mutex->release();
    }

    #[DataProvider('stores')]
    public function testReleaseForceSaysWhatItBroke(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:release');
        $holder = LockMutexFactory::fromDsn(Env::dsn($store))->create($name);
        self::assertTrue($holder->acquire());
        $state = $this->factory->getStore()->inspect($name);

        self::assertSame(0, self::execute($tester, ['name' => $name, '--force' => true]));
        $out = $tester->getDisplay();
        self::assertStringContainsString(sprintf('Released lock "%s"; it was held:', $name), $out);
        self::assertMatchesRegularExpression('/\| mode +\| write +\|/', $out);
        self::assertMatchesRegularExpression('/\| fencing +\| ' . ($state['fencing'] ?? 'unknown') . ' +\|/', $out);

        $next = $this->factory->create($name);
        self::assertTrue($next->acquire(), 'someone else takes it next');
        $next->release();
    }

    #[DataProvider('stores')]
    public function testReleaseOfAFreeLockExitsOne(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:release');

        self::assertSame(1, self::execute($tester, ['name' => $name, '--force' => true]));
        self::assertSame(sprintf("Lock \"%s\" is not held: nothing to release.\n", $name), $tester->getErrorOutput());
        self::assertSame('', $tester->getDisplay());
    }

    public function testReleaseWithoutForceRefusesWhenNotInteractive(): void
    {
        $name = Env::name();
        $tester = $this->tester('flock', 'lock:release');
        $holder = $this->factory->create($name);
        self::assertTrue($holder->acquire());

        self::assertSame(1, self::execute($tester, ['name' => $name]));
        self::assertStringContainsString('pass --force', $tester->getErrorOutput());
        self::assertTrue($holder->getLock()->isAcquired(), 'still held');
        $holder->release();
    }

    public function testReleaseAsksShowingTheOwnersAndKeepsTheHoldOnNo(): void
    {
        $name = Env::name();
        $tester = $this->tester('redis', 'lock:release');
        $holder = $this->factory->create($name);
        self::assertTrue($holder->acquire());
        $owner = $holder->getLock()->getOwner();

        $tester->setInputs(['no']);
        self::assertSame(1, self::execute($tester, ['name' => $name], interactive: true));
        self::assertStringContainsString(sprintf('Break the write hold of lock "%s" (owners: %s)?', $name, $owner), $tester->getDisplay());
        self::assertStringContainsString('Not released.', $tester->getErrorOutput());
        self::assertTrue($holder->getLock()->isAcquired(), 'still held after no');

        $tester->setInputs(['yes']);
        self::assertSame(0, self::execute($tester, ['name' => $name], interactive: true));
        self::assertFalse($holder->getLock()->isAcquired(), 'broken after yes');
    }

    public function testBadInputIsAnErrorNotAWarning(): void
    {
        $tester = $this->tester('flock', 'lock:inspect');
        self::assertSame(2, self::execute($tester, ['name' => '']));
        self::assertSame("NAME must be a mutex name of 1 byte or more.\n", $tester->getErrorOutput());

        self::assertSame(2, self::execute($tester, ['name' => Env::name(), '--format' => 'xml']));
        self::assertSame("Unknown --format \"xml\": use table or json.\n", $tester->getErrorOutput());

        $tester = $this->tester('flock', 'lock:release');
        self::assertSame(2, self::execute($tester, ['name' => Env::name(), '--format' => 'yaml', '--force' => true]));
        self::assertSame("Unknown --format \"yaml\": use table or json.\n", $tester->getErrorOutput());
    }

    public function testAStoreThatFailsIsAnError(): void
    {
        $factory = LockMutexFactory::fromDsn('redis://127.0.0.1:1?timeout=0.5');
        $tester = new CommandTester(new InspectCommand($factory));

        self::assertSame(1, self::execute($tester, ['name' => Env::name()]));
        self::assertStringStartsWith('Redis at 127.0.0.1:1', $tester->getErrorOutput());
        self::assertSame('', $tester->getDisplay());
    }
}
