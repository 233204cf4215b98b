<?php

/** @generate-class-entries */

namespace Lock {
    /** @strict-properties */
    class LockException extends \RuntimeException
    {
    }

    /** @strict-properties */
    class TimeoutException extends LockException
    {
    }

    /** @strict-properties */
    class ExpiredException extends LockException
    {
    }

    /** @strict-properties */
    class LostException extends ExpiredException
    {
    }

    /** @strict-properties */
    class StorageException extends LockException
    {
    }

    /**
     * This process's lock counters since it started: 'total', then one entry per store class used.
     * @return array<string, array<string, int|float>>
     */
    function stats(): array {}

    interface Store
    {
        /**
         * Holds have a TTL.
         * @var int
         * @cvalue LKC_CAP_EXPIRY
         */
        public const EXPIRING = UNKNOWN;

        /**
         * Read holds: any number of readers, no writer.
         * @var int
         * @cvalue LKC_CAP_SHARED
         */
        public const SHARED = UNKNOWN;

        /**
         * Fencing tokens.
         * @var int
         * @cvalue LKC_CAP_FENCING
         */
        public const FENCING = UNKNOWN;

        /**
         * The OS frees a hold when its process dies; holds are restored within the process only.
         * @var int
         * @cvalue LKC_CAP_PROCESS_BOUND
         */
        public const PROCESS_BOUND = UNKNOWN;

        public function supports(int $capability): bool;

        public function isLocked(string $resource): bool;

        public function forceRelease(string $resource): void;

        public function waitUntilFree(string $resource, ?float $timeout = null): bool;

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array;
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class Lock
    {
        public function __construct(string $resource, Store $store, ?float $ttl = 300.0, bool $autoRelease = true, #[\SensitiveParameter] ?string $owner = null, bool|float $autoRefresh = false) {}

        public function acquire(bool $blocking = false, ?float $timeout = null): bool {}

        public function acquireRead(bool $blocking = false, ?float $timeout = null): bool {}

        public function run(callable $callback, ?float $timeout = null): mixed {}

        public function refresh(?float $ttl = null): void {}

        public function release(float $delay = 0.0): void {}

        public function isAcquired(): bool {}

        public function isExpired(): bool {}

        public function getRemainingLifetime(): ?float {}

        public function getResource(): string {}

        public function getOwner(): string {}

        public function getTtl(): ?float {}

        public function getFencingToken(): ?int {}
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class Factory
    {
        public function __construct(Store $store, ?float $defaultTtl = 300.0) {}

        public static function fromDsn(#[\SensitiveParameter] string $dsn): Factory {}

        /** $ttl false: the factory's default TTL; null: no expiry */
        public function createLock(string $resource, float|null|false $ttl = false, bool $autoRelease = true, #[\SensitiveParameter] ?string $owner = null, bool|float $autoRefresh = false): Lock {}

        /** $ttl false: the factory's default TTL; null: no expiry */
        public function restoreLock(string $resource, #[\SensitiveParameter] string $owner, float|null|false $ttl = false, bool $autoRelease = false, bool|float $autoRefresh = false): Lock {}

        public function getStore(): Store {}
    }
}

namespace Lock\Store {
    /**
     * @strict-properties
     * @not-serializable
     */
    final class FlockStore implements \Lock\Store
    {
        public function __construct(?string $directory = null, array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class SemaphoreStore implements \Lock\Store
    {
        public function __construct(array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class CombinedStore implements \Lock\Store
    {
        public function __construct(array $stores, string $strategy = 'consensus') {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class RedisStore implements \Lock\Store
    {
        public function __construct(#[\SensitiveParameter] string $dsn = 'redis://127.0.0.1:6379', #[\SensitiveParameter] array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }

    /**
     * @strict-properties
     * @not-serializable
     */
    final class PostgresStore implements \Lock\Store
    {
        public function __construct(#[\SensitiveParameter] string $dsn, #[\SensitiveParameter] array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }

    /* --- MySQL store --- */
    /**
     * @strict-properties
     * @not-serializable
     */
    final class MysqlStore implements \Lock\Store
    {
        public function __construct(#[\SensitiveParameter] string $dsn, #[\SensitiveParameter] array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }
    /* --- end MySQL store --- */

    /* --- MemcachedStore --- */
    /**
     * @strict-properties
     * @not-serializable
     */
    final class MemcachedStore implements \Lock\Store
    {
        public function __construct(#[\SensitiveParameter] string $dsn = 'memcached://127.0.0.1:11211', array $options = []) {}

        public function supports(int $capability): bool {}

        public function isLocked(string $resource): bool {}

        public function forceRelease(string $resource): void {}

        public function waitUntilFree(string $resource, ?float $timeout = null): bool {}

        /** @return array{held: bool, mode: ?string, owners: ?list<string>, ttl: ?float, fencing: ?int, waiters: ?int, queue: ?list<string>, holders: ?list<int>} */
        public function inspect(string $resource): array {}
    }
    /* --- end MemcachedStore --- */
}
