<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

/**
 * The holds the live ExtensionLocks of this process have through one factory, by name and
 * owner, for restoreLock() to share instead of asking the store: a flock or semaphore hold can
 * only be adopted once its lock object has let go of it, and a Redis hold adopted through a
 * second lock object would leave the first one believing it still holds.
 *
 * @internal
 */
final class Holds
{
    /** @var \WeakMap<\Lock\Factory, self>|null */
    private static ?\WeakMap $byFactory = null;

    /** @var array<string, \WeakReference<Hold>> */
    private array $holds = [];

    /** Dead entries are dropped when the table reaches this size (then twice what is left). */
    private int $purgeAt = 64;

    public static function of(\Lock\Factory $factory): self
    {
        self::$byFactory ??= new \WeakMap();

        return self::$byFactory[$factory] ??= new self();
    }

    /** The hold a live lock object of this process has on $name under $owner, if any. */
    public function find(string $name, string $owner): ?Hold
    {
        $hold = ($this->holds[self::key($name, $owner)] ?? null)?->get();

        return $hold !== null && $hold->held ? $hold : null;
    }

    public function remember(string $name, string $owner, Hold $hold): void
    {
        $this->holds[self::key($name, $owner)] = \WeakReference::create($hold);
        if (\count($this->holds) >= $this->purgeAt) {
            $this->holds = array_filter($this->holds, static fn (\WeakReference $ref): bool => $ref->get()?->held ?? false);
            $this->purgeAt = max(64, 2 * \count($this->holds));
        }
    }

    public function forget(string $name, string $owner, Hold $hold): void
    {
        $key = self::key($name, $owner);
        if (($this->holds[$key] ?? null)?->get() === $hold) {
            unset($this->holds[$key]);
        }
    }

    private static function key(string $name, string $owner): string
    {
        return \strlen($name) . ':' . $name . $owner;
    }
}
