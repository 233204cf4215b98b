<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Console;

use Lock\LockException;
use Symfony\Component\Console\Attribute\AsCommand;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Helper\Table;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * lock:release NAME: breaks whoever holds the lock NAME in the extension's store of a
 * framework.lock resource (Lock\Store::forceRelease()), after a confirmation or with --force.
 */
#[AsCommand(name: 'lock:release', description: 'Breaks the hold on a lock, whoever has it')]
final class ReleaseCommand extends Command
{
    public function __construct(private readonly LockStores $stores)
    {
        parent::__construct('lock:release');
    }

    protected function configure(): void
    {
        $this->setDescription('Breaks the hold on a lock, whoever has it')
            ->addArgument('name', InputArgument::REQUIRED, 'The lock\'s name, as given to LockFactory::createLock()')
            ->addOption('store', null, InputOption::VALUE_REQUIRED, 'The framework.lock resource whose store to use (lock.<store>.factory)', 'default')
            ->addOption('force', 'f', InputOption::VALUE_NONE, 'Release without asking')
            ->addOption('format', null, InputOption::VALUE_REQUIRED, 'table or json: how to print what was broken', 'table')
            ->setHelp(<<<'HELP'
                Shows who holds the lock <info>NAME</info>, asks for confirmation (unless <info>--force</info>),
                then breaks the hold (the extension's <info>Lock\Store::forceRelease()</info>) and prints what
                it broke: mode, owners, holders, ttl, fencing. The holder finds its lock lost at its next refresh
                or release. Without <info>--force</info>, a run without interaction (<info>-n</info>, no terminal) refuses.

                Exit status: 0 when a hold was broken; 1 when nothing held the lock, the release was
                not confirmed, or the store cannot be asked; 2 on bad input.
                HELP);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        $errors = $io->getErrorStyle();
        try {
            [$name, $format, $store] = $this->stores->read($input);
        } catch (\InvalidArgumentException $e) {
            $errors->error($e->getMessage());

            return 2;
        } catch (\LogicException $e) {
            $errors->error($e->getMessage());

            return 1;
        }
        $shown = State::token($name);
        try {
            $state = new State($store->inspect($name));
            if (($state->state['held'] ?? null) === false) {
                $errors->error(sprintf('Nothing holds the lock %s: nothing to release.', $shown));

                return 1;
            }
            $who = sprintf('The lock %s is held (%s) by %s.', $shown, $state->state['mode'] ?? 'mode unknown', $state->owners());
            if (!$input->getOption('force')) {
                if (!$input->isInteractive()) {
                    $errors->error($who . ' Not released: pass --force to release it without a confirmation.');

                    return 1;
                }
                $errors->writeln($who);
                if (!$io->confirm('Break this hold?', false)) {
                    $errors->writeln('Not released.');

                    return 1;
                }
            }
            $store->forceRelease($name);
        } catch (\ValueError $e) {
            $errors->error($e->getMessage());

            return 2;
        } catch (LockException $e) {
            $errors->error($e->getMessage());

            return 1;
        }
        if ($format === 'json') {
            $output->writeln($state->json(), OutputInterface::OUTPUT_RAW);

            return 0;
        }
        $output->writeln(sprintf('Released the lock <info>%s</info>, which was held as follows:', $shown));
        (new Table($output))->setRows($state->rows(State::BROKEN))->render();

        return 0;
    }
}
