<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel;

/**
 * The holds the live ExtensionLocks of this process have through one factory, by name and
 * owner, for restoreLock() to share instead of asking the store (a Redis hold adopted through a
 * second lock object would leave the first one believing it still holds), and the holds taken on
 * a process-bound store (flock, semaphore, PostgreSQL and MySQL session holds), kept here until
 * released so that they outlive their lock objects, but not the request: the extension releases
 * them at its end (autoRelease), also after a fatal error, and end() at the end of an Octane
 * request or a queued job.
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

    /**
     * Holds taken on a process-bound store and not yet released through a lock object here, by
     * key: name, owner, when they were taken (self::$taken's count then), and the hold itself,
     * which this keeps alive while its lock objects come and go.
     *
     * @var array<string, array{string, string, int, Hold}>
     */
    private array $processBound = [];

    /** Holds taken so far on process-bound stores, in this process: the clock of the request marks. */
    private static int $taken = 0;

    /** @var list<int> self::$taken when each request or job still running began, innermost last */
    private static array $begun = [];

    public static function of(\Lock\Factory $factory): self
    {
        self::$byFactory ??= new \WeakMap();

        return self::$byFactory[$factory] ??= new self();
    }

    /** The hold this process has on $name under $owner through a lock object (alive, or on a process-bound store dropped), if any. */
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
            unset($this->holds[$key], $this->processBound[$key]);
        }
    }

    /** Whether a lock object of this process holds $name on a process-bound store, under any owner. */
    public function heldHere(string $name): bool
    {
        foreach ($this->processBound as [$taken]) {
            if ($taken === $name) {
                return true;
            }
        }

        return false;
    }

    /**
     * A hold taken on a process-bound store: kept until released, by a lock object, by end() of
     * the request or job taking it, or by the extension at the end of the PHP request.
     */
    public function tookProcessBound(string $name, string $owner, Hold $hold): void
    {
        $this->processBound[self::key($name, $owner)] = [$name, $owner, ++self::$taken, $hold];
    }

    /**
     * A hold on a process-bound store released or broken other than through its lock object
     * (restoreLock(), forceRelease(): any owner): nothing for end() to release.
     */
    public function releasedProcessBound(string $name, ?string $owner = null): void
    {
        if ($owner !== null) {
            unset($this->processBound[self::key($name, $owner)]);

            return;
        }
        $this->processBound = array_filter($this->processBound, static fn (array $taken): bool => $taken[0] !== $name);
    }

    /** A request (Octane) or job (queue worker, sync queue) begins: end() releases what it takes from now on. */
    public static function begin(): void
    {
        self::$begun[] = self::$taken;
    }

    /**
     * The innermost request or job ends: the holds it took on process-bound stores that are
     * still held are released, whether their lock objects are alive or dropped (those of an
     * enclosing request or job are left to its end). Without a begin(), every such hold is.
     */
    public static function end(): void
    {
        $since = array_pop(self::$begun) ?? 0;
        foreach (self::$byFactory ?? [] as $holds) {
            $holds->releaseSince($since);
        }
    }

    private function releaseSince(int $since): void
    {
        foreach ($this->processBound as $key => [, , $when, $hold]) {
            if ($when <= $since) {
                continue;
            }
            unset($this->processBound[$key]);
            if (!$hold->held) {
                continue;
            }
            $hold->held = false;
            unset($this->holds[$key]);
            try {
                $hold->lock->release();
            } catch (\Lock\LockException) {
                // Broken meanwhile (forceRelease()): nothing left to release.
            }
        }
    }

    private static function key(string $name, string $owner): string
    {
        return \strlen($name) . ':' . $name . $owner;
    }
}
