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

    /** Made by unserialize(): the Key may come from another process, which may hold under its owner. */
    public bool $unserialized = false;

    public function __construct(public readonly string $owner)
    {
        $this->holds = new \WeakMap();
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
        $this->unserialized = true;
    }
}
