<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\DependencyInjection;

use Lock\Adapter\Symfony\ExtensionStoreFactory;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * Every store built by Symfony's StoreFactory::createStore() (each DSN of framework.lock, on
 * FrameworkBundle 5.4 to 7.4; tagged lock.store from 6.4 on) is built by ExtensionStoreFactory
 * instead, with the same argument (its DSN may be an %env()% placeholder, known only at run time)
 * and the "logger" service, on the "lock" channel as FrameworkBundle gives it to lock factories.
 *
 * @internal
 */
final class ExtensionStorePass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        foreach ($container->getDefinitions() as $definition) {
            $factory = $definition->getFactory();
            if (\is_array($factory) && \is_string($factory[0] ?? null) && ltrim($factory[0], '\\') === StoreFactory::class
                && strtolower((string) ($factory[1] ?? '')) === 'createstore') {
                $definition->setFactory([ExtensionStoreFactory::class, 'createStore']);
                $definition->setArgument(1, new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE));
                if (!$definition->hasTag('monolog.logger')) {
                    $definition->addTag('monolog.logger', ['channel' => 'lock']);
                }
            }
        }
    }
}
