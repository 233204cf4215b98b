<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Tests;

use Consolidation\AnnotatedCommand\AnnotatedCommandFactory;
use Consolidation\OutputFormatters\FormatterManager;
use Lock\Adapter\Drupal\Drush\Commands\LockExtDrushCommands;
use Lock\Adapter\Drupal\LockBackend;
use Lock\Adapter\Drupal\PersistentLockBackend;
use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use Lock\Lock;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Console\Application;
use Symfony\Component\Console\Tester\CommandTester;

/**
 * The commands as drush runs a commandfile: consolidation/annotated-command makes
 * console commands of its attributed methods, and the formatters print what they
 * return (drush's own classes are stand-ins in tests/stubs/Drush).
 */
final class DrushCommandsTest extends TestCase
{
    private LockBackend $lock;

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

    /** The console application drush would build with the commandfile over a `lock` service on $store. */
    private function application(string $store, ?LockBackend $lock = null): Application
    {
        $formatters = new FormatterManager();
        $formatters->addDefaultFormatters();
        $formatters->addDefaultSimplifiers();
        $factory = new AnnotatedCommandFactory();
        $factory->setIncludeAllPublicMethods(false);
        $factory->commandProcessor()->setFormatterManager($formatters);
        $this->lock = $lock ?? new LockBackend(Factory::fromDsn(Env::dsn($store)));
        $app = new Application();
        $app->setAutoExit(false);
        foreach ($factory->createCommandsFromClass(new LockExtDrushCommands($this->lock)) as $command) {
            $app->add($command);
        }

        return $app;
    }

    private function tester(string $store, string $command): CommandTester
    {
        return new CommandTester($this->application($store)->find($command));
    }

    /** @param array<string, mixed> $input */
    private static function execute(CommandTester $tester, array $input, bool $interactive = false): int
    {
        return $tester->execute($input, ['interactive' => $interactive, 'capture_stderr_separately' => true]);
    }

    public function testTheCommandfileHasTheTwoCommands(): void
    {
        $app = $this->application('flock');
        self::assertTrue($app->has('lock:inspect'));
        self::assertTrue($app->has('lock:release'));
        self::assertFalse($app->has('current:state'), 'only the attributed methods are commands');
        self::assertTrue($app->find('lock:release')->getDefinition()->hasOption('force'));
    }

    #[DataProvider('stores')]
    public function testInspectShowsAFreeLock(string $store): void
    {
        $tester = $this->tester($store, 'lock:inspect');

        self::assertSame(0, self::execute($tester, ['name' => Env::name()]));
        $out = $tester->getDisplay();
        self::assertMatchesRegularExpression('/^ +Held +no +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Mode +none \(free\) +$/m', $out);
        self::assertSame('', $tester->getErrorOutput());
    }

    #[DataProvider('stores')]
    public function testInspectShowsTheHoldTheLockServiceTook(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');
        self::assertTrue($this->lock->acquire($name));

        self::assertSame(0, self::execute($tester, ['name' => $name]));
        $out = $tester->getDisplay();
        $state = $this->lock->getStore()->inspect($name);
        self::assertMatchesRegularExpression('/^ +Held +yes +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Mode +write +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Owners +' . ($state['owners'] === null ? 'unknown' : $this->lock->getLockId()) . ' +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Fencing token +' . ($state['fencing'] ?? 'unknown') . ' +$/m', $out);
        self::assertMatchesRegularExpression($store === 'redis' ? '/^ +TTL +\d+\.\d{3} s +$/m' : '/^ +TTL +no expiry +$/m', $out);
        $this->lock->release($name);
    }

    public function testInspectShowsAPersistentHoldByItsLockId(): void
    {
        $name = Env::name();
        $tester = $this->tester('redis', 'lock:inspect');
        $persistent = new PersistentLockBackend(Factory::fromDsn(Env::dsn('redis')));
        self::assertTrue($persistent->acquire($name));

        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'json']));
        $shown = json_decode($tester->getDisplay(), true, flags: JSON_THROW_ON_ERROR);
        self::assertSame(['persistent'], $shown['owners']);
        $persistent->release($name);
    }

    #[DataProvider('stores')]
    public function testInspectShowsReaders(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:inspect');
        $readers = [new Lock($name, $this->lock->getStore()), new Lock($name, $this->lock->getStore())];
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
        self::assertTrue($this->lock->acquire($name));

        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'json']));
        $shown = json_decode($tester->getDisplay(), true, flags: JSON_THROW_ON_ERROR);
        $state = $this->lock->getStore()->inspect($name);
        self::assertSame(array_keys($state), array_keys($shown));
        if ($state['ttl'] !== null) {
            self::assertEqualsWithDelta($state['ttl'], $shown['ttl'], 5.0);
            unset($state['ttl'], $shown['ttl']);
        }
        self::assertSame($state, $shown, 'null stays null');
        $this->lock->release($name);
    }

    #[DataProvider('allStores')]
    public function testEveryStoreIsInspectedOrSaysItCannotBe(string $store): void
    {
        $tester = $this->tester($store, 'lock:inspect');
        $code = self::execute($tester, ['name' => Env::name()]);

        if (method_exists($this->lock->getStore(), 'inspect')) {
            self::assertSame(0, $code, $tester->getErrorOutput());
            self::assertMatchesRegularExpression('/^ +Held +no +$/m', $tester->getDisplay());
        } else {
            self::assertSame(1, $code);
            self::assertSame('', $tester->getDisplay());
            self::assertStringContainsString(get_class($this->lock->getStore()) . ' cannot be inspected', $tester->getErrorOutput());
        }
    }

    public function testReleaseForceBreaksTheHoldOfAnotherProcess(): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $lock = new Lock\Adapter\Drupal\LockBackend(Lock\Factory::fromDsn($argv[1]));
            echo $lock->acquire($argv[2]) ? "held\n" : "refused\n";
            for ($i = 0; $i < 500 && $lock->getLock($argv[2])->isAcquired(); $i++) {
                usleep(20000);
            }
            echo $lock->getLock($argv[2])->isAcquired() ? "still held\n" : "broken\n";
            PHP, Env::dsn('flock'), $name);
        self::assertSame('held', $child->line());
        $tester = $this->tester('flock', 'lock:release');
        self::assertFalse($this->lock->acquire($name), 'the child holds it');

        self::assertSame(0, self::execute($tester, ['name' => $name, '--force' => true, '--format' => 'json']));
        $broken = json_decode($tester->getDisplay(), true, flags: JSON_THROW_ON_ERROR);
        self::assertSame(['mode', 'owners', 'fencing'], array_keys($broken));
        self::assertSame('write', $broken['mode']);

        self::assertSame('broken', $child->line(), 'the holder finds its hold gone');
        self::assertSame(0, $child->wait());
        self::assertTrue($this->lock->acquire($name), 'the next acquire takes it');
        $this->lock->release($name);
    }

    #[DataProvider('stores')]
    public function testReleaseForceSaysWhatItBroke(string $store): void
    {
        $name = Env::name();
        $tester = $this->tester($store, 'lock:release');
        $holder = new LockBackend(Factory::fromDsn(Env::dsn($store)));
        self::assertTrue($holder->acquire($name));
        $state = $holder->getStore()->inspect($name);

        self::assertSame(0, self::execute($tester, ['name' => $name, '--force' => true]));
        $out = $tester->getDisplay();
        self::assertMatchesRegularExpression('/^ +Mode +write +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Owners +' . ($state['owners'] === null ? 'unknown' : $holder->getLockId()) . ' +$/m', $out);
        self::assertMatchesRegularExpression('/^ +Fencing token +' . ($state['fencing'] ?? 'unknown') . ' +$/m', $out);

        self::assertTrue($this->lock->acquire($name), 'someone else takes it next');
        $this->lock->release($name);
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
        $holder = new LockBackend(Factory::fromDsn(Env::dsn('flock')));
        self::assertTrue($holder->acquire($name));

        self::assertSame(1, self::execute($tester, ['name' => $name]));
        self::assertStringContainsString('pass --force', $tester->getErrorOutput());
        self::assertTrue($holder->getLock($name)->isAcquired(), 'still held');
        $holder->release($name);
    }

    public function testReleaseAsksShowingTheOwnersAndKeepsTheHoldOnNo(): void
    {
        $name = Env::name();
        $tester = $this->tester('redis', 'lock:release');
        $holder = new LockBackend(Factory::fromDsn(Env::dsn('redis')));
        self::assertTrue($holder->acquire($name));

        $tester->setInputs(['no']);
        self::assertSame(1, self::execute($tester, ['name' => $name], interactive: true));
        self::assertStringContainsString(sprintf('Break the write hold of lock "%s" (owners: %s)?', $name, $holder->getLockId()), $tester->getDisplay());
        self::assertSame("Not released.\n", $tester->getErrorOutput());
        self::assertTrue($holder->getLock($name)->isAcquired(), 'still held after no');

        $tester->setInputs(['yes']);
        self::assertSame(0, self::execute($tester, ['name' => $name], interactive: true));
        self::assertFalse($holder->getLock($name)->isAcquired(), 'broken after yes');
    }

    public function testBadInputIsAnErrorNotAWarning(): void
    {
        $tester = $this->tester('flock', 'lock:inspect');
        self::assertSame(1, self::execute($tester, ['name' => '']));
        self::assertSame("NAME must be a lock name of 1 byte or more.\n", $tester->getErrorOutput());

        self::assertSame(1, self::execute($tester, ['name' => Env::name(), '--format' => 'xml']));
        self::assertStringStartsWith('Unknown --format "xml": use table, json, yaml', $tester->getErrorOutput());
        self::assertSame('', $tester->getDisplay());

        $name = Env::name();
        $tester = $this->tester('flock', 'lock:release');
        self::assertTrue($this->lock->acquire($name));
        self::assertSame(1, self::execute($tester, ['name' => $name, '--force' => true, '--format' => 'bogus']));
        self::assertStringStartsWith('Unknown --format "bogus"', $tester->getErrorOutput());
        self::assertTrue($this->lock->getLock($name)->isAcquired(), 'an unknown format releases nothing');
        $this->lock->release($name);
    }

    public function testOtherFormatsOfTheFormatters(): void
    {
        $name = Env::name();
        $tester = $this->tester('flock', 'lock:inspect');
        self::assertTrue($this->lock->acquire($name));

        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'yaml']));
        self::assertStringContainsString("held: true\nmode: write\nowners: null\n", $tester->getDisplay());
        self::assertSame(0, self::execute($tester, ['name' => $name, '--format' => 'csv']));
        self::assertStringStartsWith("Held,Mode,Owners,TTL,\"Fencing token\",Waiters,Queue,Holders\nyes,write,unknown,\"no expiry\",", $tester->getDisplay());
        self::assertStringEndsWith(",0,unknown," . getmypid() . "\n", $tester->getDisplay());
        $this->lock->release($name);
    }

    public function testAStoreThatFailsIsAnError(): void
    {
        $app = $this->application('redis', new LockBackend(Factory::fromDsn('redis://127.0.0.1:1?timeout=0.5')));
        $tester = new CommandTester($app->find('lock:inspect'));

        self::assertSame(1, self::execute($tester, ['name' => Env::name()]));
        self::assertStringStartsWith('Redis at 127.0.0.1:1', $tester->getErrorOutput());
        self::assertSame('', $tester->getDisplay());
    }
}
