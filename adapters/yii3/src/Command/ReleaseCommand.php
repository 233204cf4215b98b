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
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * `yii lock:release NAME`: breaks the hold of the mutex NAME, whoever has it
 * (Lock\Store::forceRelease()), after asking (--force: without asking; not
 * interactive: refused), and shows what it broke. Exit code 1 when nothing
 * holds it or the answer is no.
 */
#[AsCommand(name: 'lock:release', description: 'Breaks the hold of a mutex, whoever has it')]
final class ReleaseCommand extends Command
{
    public function __construct(private readonly LockMutexFactory $factory)
    {
        parent::__construct();
    }

    protected function configure(): void
    {
        $this
            ->addArgument('name', InputArgument::REQUIRED, 'The mutex name, as given to MutexFactoryInterface::create() or Synchronizer::execute()')
            ->addOption('force', null, InputOption::VALUE_NONE, 'Release without asking')
            ->addOption('format', null, InputOption::VALUE_REQUIRED, 'table or json', 'table');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $view = new LockStateView($input, $output);
        $store = $view->store($this->factory);
        if (is_int($store)) {
            return $store;
        }
        $name = $view->name;
        try {
            $state = $store->inspect($name);
            if (!$state['held']) {
                return $view->fail(sprintf('Lock "%s" is not held: nothing to release.', $name));
            }
            if (!$input->getOption('force')) {
                $question = sprintf('Break the %s hold of lock "%s" (owners: %s)?', LockStateView::text('mode', $state['mode']), $name, LockStateView::text('owners', $state['owners']));
                if (!$input->isInteractive()) {
                    return $view->fail($question . ' Not confirmed: pass --force to release without asking.');
                }
                if (!(new SymfonyStyle($input, $output))->confirm($question, false)) {
                    return $view->fail('Not released.');
                }
            }
            $store->forceRelease($name);
        } catch (LockException $e) {
            return $view->fail($e->getMessage());
        }
        $view->show(sprintf('Released lock "%s"; it was held:', $name), ['mode' => $state['mode'], 'owners' => $state['owners'], 'fencing' => $state['fencing']]);

        return self::SUCCESS;
    }
}
