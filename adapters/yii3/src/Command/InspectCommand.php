<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3\Command;

use Lock\Adapter\Yii3\LockMutexFactory;
use Lock\LockException;
use Symfony\Component\Console\Attribute\AsCommand;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;

/**
 * `yii lock:inspect NAME`: what the store of the LockMutexFactory knows about
 * the mutex NAME (Lock\Store::inspect()), as a table or, with --format=json,
 * one JSON object. Exit code 0 whether or not it is held.
 */
#[AsCommand(name: 'lock:inspect', description: 'Shows who holds a mutex: mode, owners, ttl, fencing token, waiters')]
final class InspectCommand extends Command
{
    public function __construct(private readonly LockMutexFactory $factory)
    {
        parent::__construct();
    }

    protected function configure(): void
    {
        $this
            ->addArgument('name', InputArgument::REQUIRED, 'The mutex name, as given to MutexFactoryInterface::create() or Synchronizer::execute()')
            ->addOption('format', null, InputOption::VALUE_REQUIRED, 'table or json', 'table');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $view = new LockStateView($input, $output);
        $store = $view->store($this->factory);
        if (is_int($store)) {
            return $store;
        }
        try {
            $state = $store->inspect($view->name);
        } catch (LockException $e) {
            return $view->fail($e->getMessage());
        }
        $view->show(sprintf('Lock "%s" on %s', $view->name, get_class($store)), $state);

        return self::SUCCESS;
    }
}
