<?php

declare(strict_types=1);

namespace Lock\Adapter\Laravel\Console;

use Illuminate\Console\Command;
use Lock\LockException;
use Symfony\Component\Console\Helper\Table;
use Symfony\Component\Console\Output\OutputInterface;

/**
 * php artisan lock:release NAME: breaks whoever holds the lock Cache::lock(NAME) takes on a
 * lock-ext cache store (Lock\Store::forceRelease()), after a confirmation or with --force.
 */
final class ReleaseCommand extends Command
{
    protected $signature = 'lock:release
        {name : The lock\'s name, as given to Cache::lock()}
        {--store= : The lock-ext cache store (default: the default cache store)}
        {--f|force : Release without asking}
        {--format=table : table or json: how to print what was broken}';

    protected $description = 'Break the hold on a lock, whoever has it';

    protected $help = <<<'HELP'
        Shows who holds the lock <info>NAME</info>, asks for confirmation (unless <info>--force</info>),
        then breaks the hold (the extension's <info>Lock\Store::forceRelease()</info>) and prints what
        it broke: mode, owners, holders, ttl, fencing. The holder finds its lock gone at its next release or
        refresh. Without <info>--force</info>, a run without interaction (<info>-n</info>, no terminal) refuses.

        Exit status: 0 when a hold was broken; 1 when nothing held the lock, the release was
        not confirmed, or the store cannot be asked; 2 on bad input.
        HELP;

    public function handle(): int
    {
        $errors = $this->output->getErrorStyle();
        try {
            [$name, $resource, $format, , $store] = (new LockStores($this->laravel->make('cache'), $this->laravel->make('config')))->read($this->input);
        } catch (\InvalidArgumentException $e) {
            $errors->error($e->getMessage());

            return 2;
        } catch (\LogicException $e) {
            $errors->error($e->getMessage());

            return 1;
        }
        $shown = State::token($name);
        try {
            $state = new State($store->inspect($resource));
            if (($state->state['held'] ?? null) === false) {
                $errors->error(sprintf('Nothing holds the lock %s: nothing to release.', $shown));

                return 1;
            }
            $who = sprintf('The lock %s is held (%s) by %s.', $shown, $state->state['mode'] ?? 'mode unknown', $state->owners());
            if (!$this->option('force')) {
                if (!$this->input->isInteractive()) {
                    $errors->error($who . ' Not released: pass --force to release it without a confirmation.');

                    return 1;
                }
                $errors->writeln($who);
                if (!$this->output->confirm('Break this hold?', false)) {
                    $errors->writeln('Not released.');

                    return 1;
                }
            }
            $store->forceRelease($resource);
        } catch (\ValueError $e) {
            $errors->error($e->getMessage());

            return 2;
        } catch (LockException $e) {
            $errors->error($e->getMessage());

            return 1;
        }
        if ($format === 'json') {
            $this->output->writeln($state->json(), OutputInterface::OUTPUT_RAW);

            return 0;
        }
        $this->output->writeln(sprintf('Released the lock <info>%s</info>, which was held as follows:', $shown));
        (new Table($this->output))->setRows($state->rows(State::BROKEN))->render();

        return 0;
    }
}
