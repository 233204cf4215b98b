<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests;

use Lock\Adapter\Symfony\ExtensionStore;
use Lock\Adapter\Symfony\Tests\Support\RedisProbe;
use Lock\Store\RedisStore;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;
use Symfony\Component\Lock\LockFactory;

/** Redis: the round trips of an acquire and a refresh, failures of the server. */
final class RedisStoreTest extends ExpiringStoreTestCase
{
    protected static function kind(): string
    {
        return 'redis';
    }

    public function testRefreshRightAfterTheSaveStaysLocalWhenTheHoldLastsAsAsked(): void
    {
        $probe = new RedisProbe();
        // The extension refreshes with a script; its single acquire is a transaction (which also
        // gives the fencing counter its PEXPIRE), so script runs count refreshes.
        $scripts = static fn (): int => $probe->calls('evalsha') + $probe->calls('eval');
        // A TTL other than the store's initial one goes to the server, shorter or longer.
        foreach ([30.0 => [25_000, 30_000], 600.0 => [590_000, 600_000]] as $ttl => [$min, $max]) {
            $refreshes = $scripts();
            $lock = $this->factory->createLock($this->resource, (float) $ttl);
            self::assertTrue($lock->acquire());
            self::assertGreaterThan($refreshes, $scripts(), "a $ttl s TTL is put on the server");
            $pttl = $probe->command('PTTL', RedisProbe::key($this->resource));
            self::assertGreaterThan($min, $pttl);
            self::assertLessThanOrEqual($max, $pttl);
            $lock->release();
        }

        // The store's initial TTL (300 s, as the Lock's): the save's hold already lasts that long.
        $refreshes = $scripts();
        $lock = $this->factory->createLock($this->resource);
        $start = hrtime(true);
        self::assertTrue($lock->acquire());
        if (hrtime(true) - $start < 250_000_000) {
            // Within 1/1000 of the TTL (300 ms) of the save, as the store allows.
            self::assertSame($refreshes, $scripts(), 'no refresh is sent right after the save');
        }
        $start = hrtime(true);
        $left = $lock->getRemainingLifetime();
        $pttl = $probe->command('PTTL', RedisProbe::key($this->resource));
        $serverLeft = ($pttl + 1) / 1000 + (hrtime(true) - $start) / 1e9;
        self::assertGreaterThan(299.0, $left);
        self::assertLessThanOrEqual($serverLeft, $left, 'the Key never outlives the hold on the server');

        // Any later refresh goes to the server: it is how Symfony finds a hold lost.
        $lock->refresh();
        self::assertGreaterThan($refreshes, $scripts());
        $lock->release();
    }

    public function testPutOffExpirationLongAfterTheSaveGoesToTheServer(): void
    {
        $probe = new RedisProbe();
        $key = new Key($this->resource);
        $this->store->save($key);
        // Longer than the 1/1000 of the TTL (300 ms) the store lets a refresh right after the save stay local.
        usleep(400_000);
        // The extension refreshes with a script (its single acquire is a transaction).
        $refreshes = $probe->calls('evalsha') + $probe->calls('eval');
        $this->store->putOffExpiration($key, 300.0);
        self::assertGreaterThan($refreshes, $probe->calls('evalsha') + $probe->calls('eval'), 'the hold is put off from now, not from the save');
        $start = hrtime(true);
        $left = $key->getRemainingLifetime();
        $pttl = $probe->command('PTTL', RedisProbe::key($this->resource));
        self::assertLessThanOrEqual(($pttl + 1) / 1000 + (hrtime(true) - $start) / 1e9, $left);
        $this->store->delete($key);
        self::assertFalse($this->native->isLocked($this->resource));
    }

    public function testHoldWhoseRefreshStayedLocalStillExpires(): void
    {
        $store = new ExtensionStore($this->native, 0.3);
        $lock = (new LockFactory($store))->createLock($this->resource, 0.3);
        self::assertTrue($lock->acquire());
        self::assertLessThanOrEqual(0.3, $lock->getRemainingLifetime());
        usleep(500_000);
        self::assertTrue($lock->isExpired());
        self::assertFalse($lock->isAcquired());
        $other = $this->factory->createLock($this->resource);
        self::assertTrue($other->acquire(), 'the hold ran out on the server as the Key said');
        $other->release();
    }

    public function testStorageFailureMapsToSymfonysExceptions(): void
    {
        $server = stream_socket_server('tcp://127.0.0.1:0');
        $port = parse_url('tcp://' . stream_socket_get_name($server, false), PHP_URL_PORT);
        fclose($server);
        $store = new ExtensionStore(new RedisStore('redis://127.0.0.1:' . $port, ['timeout' => 0.5]));

        try {
            $store->save(new Key($this->resource));
            self::fail('saved on a server that is not there');
        } catch (LockStorageException $e) {
            self::assertInstanceOf(\Lock\StorageException::class, $e->getPrevious());
        }

        try {
            (new Lock(new Key($this->resource), $store))->acquire();
            self::fail('acquired on a server that is not there');
        } catch (LockAcquiringException $e) {
            self::assertInstanceOf(LockStorageException::class, $e->getPrevious());
        }
    }
}
