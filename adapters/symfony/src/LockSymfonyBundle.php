<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony;

use Lock\Adapter\Symfony\DependencyInjection\ExtensionStorePass;
use Symfony\Component\DependencyInjection\Compiler\PassConfig;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Exception\LogicException;
use Symfony\Component\HttpKernel\Bundle\Bundle;

/**
 * framework.lock takes the extension's DSNs behind "lock:" (framework: { lock: 'lock:redis://...' }),
 * and every factory FrameworkBundle builds from it (lock.factory, the autowired LockFactory, named
 * resources) goes through ExtensionStore; every other DSN stays Symfony's own store.
 */
final class LockSymfonyBundle extends Bundle
{
    public function build(ContainerBuilder $container): void
    {
        if (!\extension_loaded('lock')) {
            throw new LogicException(ExtensionStoreFactory::notLoaded(sprintf('%s is registered (config/bundles.php)', self::class)));
        }
        // Before MonologBundle's LoggerChannelPass, which reads the "monolog.logger" tags this pass adds.
        $container->addCompilerPass(new ExtensionStorePass(), PassConfig::TYPE_BEFORE_OPTIMIZATION, 10);
    }
}
