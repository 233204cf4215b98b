<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Console;

use Illuminate\Console\Command;
use Lock\LockException;
use Symfony\Component\Console\Helper\Table;
use Symfony\Component\Console\Output\OutputInterface;

/**
 * php artisan lock:inspect NAME: what the extension's store of a lock-ext cache store knows about
 * the lock Cache::lock(NAME) takes (Lock\Store::inspect()), as a table or as JSON.
 */
final class InspectCommand extends Command
{
    protected $signature = 'lock:inspect
        {name : The lock\'s name, as given to Cache::lock()}
        {--store= : The lock-ext cache store (default: the default cache store)}
        {--format=table : table or json}';

    protected $description = 'Show who holds a lock, in which mode, for how long, and who waits for it';

    protected $help = <<<'HELP'
        Prints the answer of the extension's <info>Lock\Store::inspect()</info> for the lock <info>NAME</info>:
        held, mode (write, read, cooldown), owners, ttl (seconds left), fencing (the last
        token handed out), waiters and queue. "unknown" is what the store cannot tell.
        With <info>--format=json</info>, one JSON object with the same keys (null for unknown).

        Exit status: 0, whether held or free; 1 when the store cannot be asked; 2 on bad input.
        HELP;

    public function handle(): int
    {
        $errors = $this->output->getErrorStyle();
        try {
            [$name, $resource, $format, $storeName, $store] = (new LockStores($this->laravel->make('cache'), $this->laravel->make('config')))->read($this->input);
            $state = new State($store->inspect($resource));
        } catch (\InvalidArgumentException|\ValueError $e) {
            $errors->error($e->getMessage());

            return 2;
        } catch (\LogicException|LockException $e) {
            $errors->error($e->getMessage());

            return 1;
        }
        if ($format === 'json') {
            $this->output->writeln($state->json(), OutputInterface::OUTPUT_RAW);

            return 0;
        }
        $this->output->writeln(sprintf('Lock <info>%s</info> (cache store %s, %s):', State::token($name), $storeName, get_debug_type($store)));
        (new Table($this->output))->setRows($state->rows())->render();

        return 0;
    }
}
