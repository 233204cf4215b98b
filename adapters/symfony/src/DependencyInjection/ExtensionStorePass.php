<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\DependencyInjection;

use Lock\Adapter\Symfony\Console\InspectCommand;
use Lock\Adapter\Symfony\Console\LockStores;
use Lock\Adapter\Symfony\Console\ReleaseCommand;
use Lock\Adapter\Symfony\ExtensionStoreFactory;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\DependencyInjection\ChildDefinition;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\Compiler\ServiceLocatorTagPass;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * Every store built by Symfony's StoreFactory::createStore() (each DSN of framework.lock, on
 * FrameworkBundle 5.4 to 7.4; tagged lock.store from 6.4 on) is built by ExtensionStoreFactory
 * instead, with the same argument (its DSN may be an %env()% placeholder, known only at run time)
 * and the "logger" service, on the "lock" channel as FrameworkBundle gives it to lock factories.
 * With symfony/console, the commands lock:inspect and lock:release, over the store of each
 * lock.<resource>.factory.
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
        if (class_exists(Command::class)) {
            $this->registerCommands($container);
        }
    }

    private function registerCommands(ContainerBuilder $container): void
    {
        $stores = [];
        foreach ($container->getDefinitions() as $id => $definition) {
            if (!preg_match('/^lock\.(.+)\.factory$/', $id, $m) || !$definition instanceof ChildDefinition || $definition->getParent() !== 'lock.factory.abstract') {
                continue;
            }
            $arguments = $definition->getArguments();
            $store = $arguments['index_0'] ?? $arguments[0] ?? null;
            if ($store instanceof Reference) {
                $stores[$m[1]] = $store;
            }
        }
        $container->register('lock.console.stores', LockStores::class)
            ->setArguments([ServiceLocatorTagPass::register($container, $stores)]);
        $commands = [
            'lock.console.inspect' => [InspectCommand::class, 'lock:inspect', 'Shows who holds a lock, in which mode, for how long, and who waits for it'],
            'lock.console.release' => [ReleaseCommand::class, 'lock:release', 'Breaks the hold on a lock, whoever has it'],
        ];
        foreach ($commands as $id => [$class, $name, $description]) {
            $container->register($id, $class)
                ->setArguments([new Reference('lock.console.stores')])
                ->addTag('console.command', ['command' => $name, 'description' => $description]);
        }
    }
}
