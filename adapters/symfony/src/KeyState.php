<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony;

use Lock\Lock;

/**
 * What ExtensionStore keeps on a Symfony Key: the owner token shared by every ExtensionStore
 * the Key passes through (as Symfony's own stores share one token per Key), and the
 * extension's Lock per store. Only the owner is serialized: the Lock objects stay in this process.
 *
 * @internal
 */
final class KeyState
{
    /** @var \WeakMap<ExtensionStore, Lock> */
    public \WeakMap $holds;

    /**
     * The stores whose Lock here the extension auto-refreshes without autoRelease: its hold
     * outlives the Key, and its refreshing is to end with the Key.
     *
     * @var \WeakMap<ExtensionStore, true>
     */
    public \WeakMap $refreshed;

    /** Made by unserialize(): the Key may come from another process, which may hold under its owner. */
    public bool $unserialized = false;

    public function __construct(public readonly string $owner)
    {
        $this->holds = new \WeakMap();
        $this->refreshed = new \WeakMap();
    }

    /**
     * The Key is gone: a hold it leaves (a Lock without autoRelease) runs out the TTL Symfony's
     * Lock last put on it, as Symfony promises, instead of being refreshed on while the process
     * lives (the extension goes on refreshing a hold whose lock object lets go of it).
     */
    public function __destruct()
    {
        $left = [];
        foreach ($this->refreshed as $store => $_) {
            if (isset($this->holds[$store])) {
                $left[] = [$store, $this->holds[$store]->getResource()];
            }
        }
        if ($left === []) {
            return;
        }
        // The Locks let go of their holds first: the refreshing they leave can then be stopped.
        $this->holds = new \WeakMap();
        foreach ($left as [$store, $resource]) {
            $store->stopRefreshing($resource, $this->owner);
        }
    }

    public function __serialize(): array
    {
        return ['owner' => $this->owner];
    }

    public function __unserialize(array $data): void
    {
        if (!\is_string($data['owner'] ?? null)) {
            throw new \UnexpectedValueException('Cannot unserialize ' . self::class . ': no owner token');
        }
        $this->owner = $data['owner'];
        $this->holds = new \WeakMap();
        $this->refreshed = new \WeakMap();
        $this->unserialized = true;
    }
}
