<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii3\Command;

use Lock\Adapter\Yii3\LockMutexFactory;
use Lock\Store;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Formatter\OutputFormatter;
use Symfony\Component\Console\Helper\Table;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\ConsoleOutputInterface;
use Symfony\Component\Console\Output\OutputInterface;

/**
 * What lock:inspect and lock:release share: their input checked, the store,
 * and Lock\Store::inspect()'s answer shown as a table or as JSON.
 *
 * @internal
 */
final class LockStateView
{
    private const FORMATS = ['table', 'json'];

    public readonly string $name;

    public function __construct(private readonly InputInterface $input, private readonly OutputInterface $output)
    {
        $this->name = (string) $input->getArgument('name');
    }

    /** The factory's store, or the exit code of an error about the input or the store. */
    public function store(LockMutexFactory $factory): Store|int
    {
        if ($this->name === '') {
            return $this->fail('NAME must be a mutex name of 1 byte or more.', Command::INVALID);
        }
        $format = $this->input->getOption('format');
        if (!in_array($format, self::FORMATS, true)) {
            return $this->fail(sprintf('Unknown --format "%s": use %s.', $format, implode(' or ', self::FORMATS)), Command::INVALID);
        }
        $store = $factory->getStore();
        if (!method_exists($store, 'inspect')) {
            return $this->fail(sprintf('%s cannot be inspected: this version of the lock extension has no inspect() on it.', get_class($store)));
        }

        return $store;
    }

    /** Writes $message to stderr; returns $code. */
    public function fail(string $message, int $code = Command::FAILURE): int
    {
        $error = $this->output instanceof ConsoleOutputInterface ? $this->output->getErrorOutput() : $this->output;
        $error->writeln($message, OutputInterface::OUTPUT_RAW);

        return $code;
    }

    /** @param array<string, mixed> $state keys and values of Store::inspect() */
    public function show(string $title, array $state): void
    {
        if ($this->input->getOption('format') === 'json') {
            $this->output->writeln(json_encode($state, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION), OutputInterface::OUTPUT_RAW);

            return;
        }
        $this->output->writeln($title, OutputInterface::OUTPUT_RAW);
        $table = new Table($this->output);
        foreach ($state as $key => $value) {
            $table->addRow([$key, OutputFormatter::escape(self::text($key, $value, $state['held'] ?? true))]);
        }
        $table->render();
    }

    /** One value of Store::inspect() for people: null is "unknown" (the store cannot tell), but for a free lock's mode and the ttl of a hold without expiry. */
    public static function text(string $key, mixed $value, bool $held = true): string
    {
        return match (true) {
            $key === 'mode' && $value === null => 'none (free)',
            $key === 'ttl' && $value === null => $held ? 'no expiry' : '-',
            $value === null => 'unknown',
            is_bool($value) => $value ? 'yes' : 'no',
            is_array($value) => $value === [] ? 'none' : implode(', ', $value),
            is_float($value) => sprintf('%.3f s', $value),
            default => (string) $value,
        };
    }
}
