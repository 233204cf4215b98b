<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Tests;

use Drupal\Core\Lock\LockBackendInterface;
use Drupal\Core\Site\Settings;
use Lock\Adapter\Drupal\LockBackend;
use Lock\Adapter\Drupal\PersistentLockBackend;
use Lock\Adapter\Drupal\ReleaseAtRequestEnd;
use Lock\Adapter\Drupal\StoreFactory;
use Lock\Adapter\TestSupport\Env;
use Lock\Factory;
use Lock\Store;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Yaml\Yaml;

final class StoreFactoryTest extends TestCase
{
    protected function tearDown(): void
    {
        Env::cleanUp();
    }

    public function testBuildsTheFactoryFromSettings(): void
    {
        $factory = StoreFactory::fromSettings(new Settings(['lock_ext' => ['dsn' => Env::dsn('redis')]]));
        self::assertInstanceOf(Store\RedisStore::class, $factory->getStore());
        self::assertInstanceOf(Store\FlockStore::class, StoreFactory::fromSettings(['dsn' => Env::dsn('flock')])->getStore());
    }

    /** A redlock:// DSN: one combined store over three Redis servers, for both services. */
    public function testARedlockDsnGivesTheCombinedStore(): void
    {
        $settings = new Settings(['lock_ext' => ['dsn' => Env::dsn('redlock')]]);
        $factory = StoreFactory::fromSettings($settings);
        self::assertInstanceOf(Store\CombinedStore::class, $factory->getStore());

        $name = Env::name();
        $request = new LockBackend($factory);
        $other = new LockBackend(StoreFactory::fromSettings($settings));
        self::assertTrue($request->acquire($name));
        self::assertFalse($other->acquire($name));
        self::assertFalse($other->lockMayBeAvailable($name));
        $request->release($name);
        self::assertTrue($other->acquire($name));
        $other->release($name);
        self::assertFalse($factory->getStore()->isLocked($name));

        $persistent = new PersistentLockBackend($factory);
        self::assertTrue($persistent->acquire($name));
        self::assertFalse($request->acquire($name));
        $persistent->release($name);
        self::assertFalse($factory->getStore()->isLocked($name));
    }

    public static function badSettings(): array
    {
        return [
            'no lock_ext' => [null, \ValueError::class, "\$settings['lock_ext'] must be an array"],
            'no dsn' => [[], \ValueError::class, "['dsn'] is missing"],
            'unknown key' => [['dsn' => 'flock:', 'ttl' => 3], \ValueError::class, "unknown key 'ttl'"],
            'dsn not a string' => [['dsn' => 42], \TypeError::class, 'must be a string, int given'],
            'bad dsn' => [['dsn' => 'nosuch://x'], \ValueError::class, 'unknown scheme'],
        ];
    }

    #[\PHPUnit\Framework\Attributes\DataProvider('badSettings')]
    public function testRefusesBadSettings(?array $settings, string $class, string $message): void
    {
        // null: Drupal's Settings without $settings['lock_ext'] (a singleton: made here, not in the provider)
        $settings ??= new Settings([]);
        $this->expectException($class);
        $this->expectExceptionMessage($message);
        StoreFactory::fromSettings($settings);
    }

    /** lock_ext.services.yml builds both services, as Drupal's container would from it. */
    public function testTheServicesFileBuildsBothServices(): void
    {
        $file = Yaml::parseFile(__DIR__ . '/../lock_ext.services.yml');
        $services = [];
        $settings = new Settings(['lock_ext' => ['dsn' => Env::dsn('redis')]]);
        $get = function (string $id) use (&$get, &$services, $file, $settings) {
            if ($id === 'settings') {
                return $settings;
            }
            if (isset($services[$id])) {
                return $services[$id];
            }
            $definition = $file['services'][$id];
            $arguments = array_map(static fn (string $a) => $get(substr($a, 1)), $definition['arguments']);
            $service = isset($definition['factory'])
                ? ($definition['factory'])(...$arguments)
                : new $definition['class'](...$arguments);
            self::assertInstanceOf($definition['class'], $service, $id);

            return $services[$id] = $service;
        };

        $lock = $get('lock');
        $persistent = $get('lock.persistent');
        self::assertInstanceOf(LockBackend::class, $lock);
        self::assertInstanceOf(PersistentLockBackend::class, $persistent);
        self::assertInstanceOf(LockBackendInterface::class, $persistent);
        self::assertInstanceOf(Factory::class, $get('lock_ext.factory'));
        self::assertInstanceOf(ReleaseAtRequestEnd::class, $get('lock_ext.release_at_request_end'));
        self::assertSame([['name' => 'backend_overridable']], $file['services']['lock']['tags']);

        $name = Env::name();
        self::assertTrue($lock->acquire($name));
        self::assertFalse($persistent->acquire($name));

        $subscriber = $get('lock_ext.release_at_request_end');
        self::assertSame([['name' => 'event_subscriber']], $file['services']['lock_ext.release_at_request_end']['tags']);
        foreach ($subscriber::getSubscribedEvents() as $event => [$method]) {
            self::assertSame('kernel.terminate', $event);
            $subscriber->$method();
        }
        self::assertTrue($lock->lockMayBeAvailable($name), 'released when the kernel ends the request');
    }
}
