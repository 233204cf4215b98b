<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use Lock\Adapter\Symfony\LockSymfonyBundle;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Component\Config\Loader\LoaderInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\HttpKernel\Kernel;

/**
 * A real kernel with FrameworkBundle and the adapter's bundle, $lock being the framework.lock
 * configuration. Public services: LockFactories (autowired) and, given a resource "invoices",
 * InvoicesLockFactory (autowired by the argument name $invoicesLockFactory), and with $collectLogs
 * the "logger" service, a CollectingLogger. The container is
 * compiled once into $directory and reused from there by any process that builds the same
 * kernel (same $environment, no debug), as in production.
 */
final class TestKernel extends Kernel
{
    /**
     * @param string|array<mixed> $lock
     * @param bool                $collectLogs the "logger" service is a CollectingLogger (public)
     */
    public function __construct(private readonly string|array $lock, private readonly string $directory, string $environment, private readonly bool $collectLogs = false)
    {
        parent::__construct($environment, false);
    }

    public function registerBundles(): iterable
    {
        return [new FrameworkBundle(), new LockSymfonyBundle()];
    }

    public function registerContainerConfiguration(LoaderInterface $loader): void
    {
        $loader->load(function (ContainerBuilder $container): void {
            $container->loadFromExtension('framework', [
                'secret' => 'test',
                'test' => true,
                'http_method_override' => false,
                'lock' => $this->lock,
            ]);
            $container->register(LockFactories::class)
                ->setArguments([new Reference('lock.factory')])
                ->setAutowired(true)
                ->setPublic(true);
            if ($this->collectLogs) {
                $container->register('logger', CollectingLogger::class)->setPublic(true);
            }
            if (\is_array($this->lock) && isset($this->lock['invoices'])) {
                $container->register(InvoicesLockFactory::class)->setAutowired(true)->setPublic(true);
            }
        });
    }

    public function getProjectDir(): string
    {
        return $this->directory;
    }

    public function getCacheDir(): string
    {
        return $this->directory . '/cache/' . $this->environment;
    }

    public function getLogDir(): string
    {
        return $this->directory . '/log';
    }
}
