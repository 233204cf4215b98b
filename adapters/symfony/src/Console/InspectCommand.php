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
 * lock:inspect NAME: what the extension's store of a framework.lock resource knows about the
 * lock NAME (Lock\Store::inspect()), as a table or as JSON.
 */
#[AsCommand(name: 'lock:inspect', description: 'Shows who holds a lock, in which mode, for how long, and who waits for it')]
final class InspectCommand extends Command
{
    public function __construct(private readonly LockStores $stores)
    {
        parent::__construct('lock:inspect');
    }

    protected function configure(): void
    {
        $this->setDescription('Shows who holds a lock, in which mode, for how long, and who waits for it')
            ->addArgument('name', InputArgument::REQUIRED, 'The lock\'s name, as given to LockFactory::createLock()')
            ->addOption('store', null, InputOption::VALUE_REQUIRED, 'The framework.lock resource whose store to ask (lock.<store>.factory)', 'default')
            ->addOption('format', null, InputOption::VALUE_REQUIRED, 'table or json', 'table')
            ->setHelp(<<<'HELP'
                Prints the answer of the extension's <info>Lock\Store::inspect()</info> for the lock <info>NAME</info>:
                held, mode (write, read, cooldown), owners, ttl (seconds left), fencing (the last
                token handed out), waiters and queue. "unknown" is what the store cannot tell.
                With <info>--format=json</info>, one JSON object with the same keys (null for unknown).

                Exit status: 0, whether held or free; 1 when the store cannot be asked; 2 on bad input.
                HELP);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        try {
            [$name, $format, $store] = $this->stores->read($input);
            $state = new State($store->inspect($name));
        } catch (\InvalidArgumentException|\ValueError $e) {
            $io->getErrorStyle()->error($e->getMessage());

            return 2;
        } catch (\LogicException|LockException $e) {
            $io->getErrorStyle()->error($e->getMessage());

            return 1;
        }
        if ($format === 'json') {
            $output->writeln($state->json(), OutputInterface::OUTPUT_RAW);

            return 0;
        }
        $output->writeln(sprintf('Lock <info>%s</info> (%s):', State::token($name), get_debug_type($store)));
        (new Table($output))->setRows($state->rows())->render();

        return 0;
    }
}
