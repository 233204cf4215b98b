<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii2\Tests;

use Lock\Adapter\TestSupport\Env;
use Lock\Adapter\Yii2\Console\LockController;
use Lock\Adapter\Yii2\LockMutex;
use Lock\Lock;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use yii\base\Application;

final class LockControllerTest extends TestCase
{
    private LockMutex $mutex;

    protected function tearDown(): void
    {
        \Yii::$app = null;
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

    /** A console application with the mutex component on $store and the controller mapped as "lock". */
    private function controller(string $store, string $component = 'mutex'): BufferedLockController
    {
        $app = new Application();
        $this->mutex = new LockMutex(['dsn' => Env::dsn($store)]);
        $app->set($component, $this->mutex);

        return new BufferedLockController('lock', $app);
    }

    #[DataProvider('stores')]
    public function testInspectShowsAFreeLock(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);

        self::assertSame(0, $controller->runAction('inspect', [$name]));
        self::assertStringContainsString(sprintf('Lock "%s" on %s', $name, get_class($this->mutex->getStore())), $controller->out);
        self::assertMatchesRegularExpression('/^  held +no$/m', $controller->out);
        self::assertMatchesRegularExpression('/^  mode +none \(free\)$/m', $controller->out);
        self::assertSame('', $controller->err);
    }

    #[DataProvider('stores')]
    public function testInspectShowsTheHoldTheMutexTook(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);
        self::assertTrue($this->mutex->acquire($name));
        $lock = $this->mutex->getLock($name);

        self::assertSame(0, $controller->runAction('inspect', [$name]));
        self::assertMatchesRegularExpression('/^  held +yes$/m', $controller->out);
        self::assertMatchesRegularExpression('/^  mode +write$/m', $controller->out);
        $state = $this->mutex->getStore()->inspect($name);
        self::assertMatchesRegularExpression('/^  owners +' . preg_quote($state['owners'] === null ? 'unknown' : $lock->getOwner(), '/') . '$/m', $controller->out);
        self::assertMatchesRegularExpression('/^  fencing +' . ($state['fencing'] ?? 'unknown') . '$/m', $controller->out);
        self::assertMatchesRegularExpression($store === 'redis' ? '/^  ttl +\d+\.\d{3} s$/m' : '/^  ttl +no expiry$/m', $controller->out);
    }

    #[DataProvider('stores')]
    public function testInspectShowsReaders(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);
        $readers = [new Lock($name, $this->mutex->getStore()), new Lock($name, $this->mutex->getStore())];
        foreach ($readers as $reader) {
            self::assertTrue($reader->acquireRead());
        }

        self::assertSame(0, $controller->runAction('inspect', [$name, 'format' => 'json']));
        $shown = json_decode($controller->out, true, flags: JSON_THROW_ON_ERROR);
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
        $controller = $this->controller($store);
        self::assertTrue($this->mutex->acquire($name));

        self::assertSame(0, $controller->runAction('inspect', [$name, 'format' => 'json']));
        self::assertStringEndsWith("}\n", $controller->out);
        self::assertSame(1, substr_count($controller->out, "\n"), 'one JSON object on one line');
        $shown = json_decode($controller->out, true, flags: JSON_THROW_ON_ERROR);
        $state = $this->mutex->getStore()->inspect($name);
        self::assertSame(array_keys($state), array_keys($shown));
        if ($state['ttl'] !== null) {
            self::assertEqualsWithDelta($state['ttl'], $shown['ttl'], 5.0);
            unset($state['ttl'], $shown['ttl']);
        }
        self::assertSame($state, $shown, 'null stays null');
    }

    #[DataProvider('allStores')]
    public function testEveryStoreIsInspectedOrSaysItCannotBe(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);
        $inspectable = method_exists($this->mutex->getStore(), 'inspect');

        $code = $controller->runAction('inspect', [$name]);
        if ($inspectable) {
            self::assertSame(0, $code, $controller->err);
            self::assertMatchesRegularExpression('/^  held +no$/m', $controller->out);
        } else {
            self::assertSame(1, $code);
            self::assertSame('', $controller->out);
            self::assertStringContainsString(get_class($this->mutex->getStore()) . ' cannot be inspected', $controller->err);
        }
    }

    public function testAHoldOfAnotherProcessIsShownAndForceReleased(): void
    {
        $name = Env::name();
        $child = Env::child(<<<'PHP'
            $mutex = new Lock\Adapter\Yii2\LockMutex(['dsn' => $argv[1]]);
            echo $mutex->acquire($argv[2]) ? "held\n" : "refused\n";
            for ($i = 0; $i < 500 && $mutex->getLock($argv[2])->isAcquired(); $i++) {
                usleep(20000);
            }
            echo $mutex->release($argv[2]) ? "still held\n" : "broken\n";
            PHP, Env::dsn('flock'), $name);
        self::assertSame('held', $child->line());
        $controller = $this->controller('flock');
        self::assertFalse($this->mutex->acquire($name), 'the child holds it');

        self::assertSame(0, $controller->runAction('release', [$name, 'force' => true, 'format' => 'json']));
        $broken = json_decode($controller->out, true, flags: JSON_THROW_ON_ERROR);
        self::assertSame(['mode', 'owners', 'fencing'], array_keys($broken));
        self::assertSame('write', $broken['mode']);

        self::assertSame('broken', $child->line(), 'the holder finds its hold gone');
        self::assertSame(0, $child->wait());
        self::assertTrue($this->mutex->acquire($name), 'the next acquire takes it');
        $this->mutex->release($name);
    }

    #[DataProvider('stores')]
    public function testReleaseForceBreaksTheHoldAndSaysWhatItBroke(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);
        $holder = new LockMutex(['dsn' => Env::dsn($store)]);
        self::assertTrue($holder->acquire($name));
        $state = $holder->getStore()->inspect($name);

        self::assertSame(0, $controller->runAction('release', [$name, 'force' => true]));
        self::assertStringContainsString(sprintf('Released lock "%s"; it was held:', $name), $controller->out);
        self::assertMatchesRegularExpression('/^  mode +write$/m', $controller->out);
        self::assertMatchesRegularExpression('/^  fencing +' . ($state['fencing'] ?? 'unknown') . '$/m', $controller->out);
        self::assertSame(null, $controller->asked, 'not asked with --force');

        self::assertTrue($this->mutex->acquire($name), 'someone else takes it next');
        self::assertFalse($holder->release($name), 'the holder finds it broken');
        $this->mutex->release($name);
    }

    #[DataProvider('stores')]
    public function testReleaseOfAFreeLockExitsOne(string $store): void
    {
        $name = Env::name();
        $controller = $this->controller($store);

        self::assertSame(1, $controller->runAction('release', [$name, 'force' => true]));
        self::assertSame(sprintf("Lock \"%s\" is not held: nothing to release.\n", $name), $controller->err);
        self::assertSame('', $controller->out);
    }

    public function testReleaseWithoutForceRefusesWhenNotInteractive(): void
    {
        $name = Env::name();
        $controller = $this->controller('flock');
        $holder = new LockMutex(['dsn' => Env::dsn('flock')]);
        self::assertTrue($holder->acquire($name));

        self::assertSame(1, $controller->runAction('release', [$name, 'interactive' => false]));
        self::assertStringContainsString('pass --force', $controller->err);
        self::assertSame(null, $controller->asked);
        self::assertFalse($this->mutex->acquire($name), 'still held');
        self::assertTrue($holder->release($name));
    }

    public function testReleaseAsksShowingTheOwnersAndKeepsTheHoldOnNo(): void
    {
        $name = Env::name();
        $controller = $this->controller('redis');
        $holder = new LockMutex(['dsn' => Env::dsn('redis')]);
        self::assertTrue($holder->acquire($name));
        $owner = $holder->getLock($name)->getOwner();

        $controller->answer = false;
        self::assertSame(1, $controller->runAction('release', [$name]));
        self::assertSame(sprintf('Break the write hold of lock "%s" (owners: %s)?', $name, $owner), $controller->asked);
        self::assertFalse($this->mutex->acquire($name), 'still held after no');

        $controller->answer = true;
        self::assertSame(0, $controller->runAction('release', [$name]));
        self::assertTrue($this->mutex->acquire($name), 'broken after yes');
        $this->mutex->release($name);
    }

    public function testBadInputIsAnErrorNotAWarning(): void
    {
        $controller = $this->controller('flock');
        self::assertSame(64, $controller->runAction('inspect', ['']));
        self::assertSame("NAME must be a lock name of 1 byte or more.\n", $controller->err);

        $controller = $this->controller('flock');
        self::assertSame(64, $controller->runAction('inspect', [Env::name(), 'format' => 'xml']));
        self::assertSame("Unknown --format \"xml\": use table or json.\n", $controller->err);

        $controller = $this->controller('flock', 'locks');
        self::assertSame(78, $controller->runAction('inspect', [Env::name()]));
        self::assertSame('The application component "mutex" is not a ' . LockMutex::class . ".\n", $controller->err);

        $controller = $this->controller('flock', 'locks');
        self::assertSame(0, $controller->runAction('inspect', [Env::name(), 'mutex' => 'locks']), '--mutex names the component');
        self::assertSame('', $controller->err);
        self::assertMatchesRegularExpression('/^  held +no$/m', $controller->out);
    }

    public function testAStoreThatFailsIsAnError(): void
    {
        $app = new Application();
        $app->set('mutex', new LockMutex(['dsn' => 'redis://127.0.0.1:1?timeout=0.5']));
        $controller = new BufferedLockController('lock', $app);

        self::assertSame(1, $controller->runAction('inspect', [Env::name()]));
        self::assertStringStartsWith('Redis at 127.0.0.1:1', $controller->err);
        self::assertSame('', $controller->out);
    }
}

/** The controller with its output kept, as yiisoft/yii2's own tests buffer theirs, and confirm() answered. */
final class BufferedLockController extends LockController
{
    public string $out = '';
    public string $err = '';
    public ?bool $answer = null;
    public ?string $asked = null;

    public function stdout($string)
    {
        $this->out .= $string;

        return strlen($string);
    }

    public function stderr($string)
    {
        $this->err .= $string;

        return strlen($string);
    }

    public function confirm($message, $default = false)
    {
        $this->asked = $message;

        return $this->answer ?? $default;
    }
}
