<?php

declare(strict_types=1);

namespace Lock\Adapter\Drupal\Drush\Commands;

use Consolidation\AnnotatedCommand\CommandResult;
use Consolidation\OutputFormatters\Options\FormatterOptions;
use Consolidation\OutputFormatters\StructuredData\PropertyList;
use Drush\Attributes as CLI;
use Drush\Commands\DrushCommands;
use Lock\Adapter\Drupal\LockBackend;
use Lock\LockException;
use Lock\Store;
use Psr\Container\ContainerInterface;

/**
 * `drush lock:inspect NAME` and `drush lock:release NAME` over the store of the
 * `lock` service (LockBackend), for operators. NAME is the name given to
 * \Drupal::lock()->acquire() (or lock.persistent's): the backend holds the
 * resource of that name in the store, so inspecting it shows that hold.
 *
 * Drush finds the class by its namespace (…\Drush\Commands) and name
 * (…DrushCommands) in Composer's autoloader, as it finds site-wide commands,
 * and runs the commands at its default, full bootstrap, where the `lock`
 * service is there to take.
 */
final class LockExtDrushCommands extends DrushCommands
{
    private const LABELS = ['held' => 'Held', 'mode' => 'Mode', 'owners' => 'Owners', 'ttl' => 'TTL',
        'fencing' => 'Fencing token', 'waiters' => 'Waiters', 'queue' => 'Queue', 'holders' => 'Holders'];

    /**
     * The formats that print inspect()'s answer whole (xml warns on its scalars); checked
     * before anything is released, as the formatters run after the command.
     */
    private const FORMATS = ['table', 'json', 'yaml', 'csv', 'tsv', 'list', 'var_export', 'php', 'print-r'];

    /** @param LockBackend|null $lock the `lock` service; null: taken from Drupal's container when a command runs */
    public function __construct(private ?LockBackend $lock = null)
    {
        parent::__construct();
    }

    public static function create(ContainerInterface $container): self
    {
        $lock = $container->get('lock');

        return new self($lock instanceof LockBackend ? $lock : null);
    }

    /**
     * Shows what the lock store knows about a lock: held, mode, owners, ttl,
     * fencing token, waiters and their queue, the holders' pids or sessions ("unknown" where the store cannot
     * tell; null in JSON).
     */
    #[CLI\Command(name: 'lock:inspect')]
    #[CLI\Argument(name: 'name', description: 'The lock name, as given to \Drupal::lock()->acquire()')]
    #[CLI\Option(name: 'format', description: 'table (default), json, yaml, csv, tsv, list, var_export, php or print-r')]
    #[CLI\FieldLabels(labels: self::LABELS)]
    #[CLI\Usage(name: 'drush lock:inspect cron', description: 'Who holds the cron lock, and who waits for it')]
    #[CLI\Usage(name: 'drush lock:inspect cron --format=json', description: 'The same as one JSON object')]
    public function inspect(string $name, array $options = ['format' => 'table']): CommandResult
    {
        $store = $this->store($name, $options['format']);
        if (!$store instanceof Store) {
            return $store;
        }
        try {
            $state = $store->inspect($name);
        } catch (LockException $e) {
            return self::failure($e->getMessage());
        }

        return CommandResult::data(self::propertyList($state));
    }

    /**
     * Breaks the hold of a lock, whoever has it, after asking (--force:
     * without asking; not interactive: refused), and shows what it broke.
     * Exit code 1 when nothing holds it.
     */
    #[CLI\Command(name: 'lock:release')]
    #[CLI\Argument(name: 'name', description: 'The lock name, as given to \Drupal::lock()->acquire()')]
    #[CLI\Option(name: 'force', description: 'Release without asking')]
    #[CLI\Option(name: 'format', description: 'table (default), json, yaml, csv, tsv, list, var_export, php or print-r')]
    #[CLI\FieldLabels(labels: self::LABELS)]
    #[CLI\Usage(name: 'drush lock:release cron', description: 'Break the cron lock of a run that died, after confirming')]
    #[CLI\Usage(name: 'drush lock:release cron --force --format=json', description: 'The same without asking; what it broke as JSON')]
    public function release(string $name, array $options = ['force' => false, 'format' => 'table']): CommandResult
    {
        $store = $this->store($name, $options['format']);
        if (!$store instanceof Store) {
            return $store;
        }
        try {
            $state = $store->inspect($name);
            if (!$state['held']) {
                return self::failure(sprintf('Lock "%s" is not held: nothing to release.', $name));
            }
            if (!$options['force']) {
                $question = sprintf('Break the %s hold of lock "%s" (owners: %s)?', self::text('mode', $state['mode']), $name, self::text('owners', $state['owners']));
                if (!$this->input()->isInteractive()) {
                    return self::failure($question . ' Not confirmed: pass --force to release without asking.');
                }
                if (!$this->io()->confirm($question, false)) {
                    return self::failure('Not released.');
                }
            }
            $store->forceRelease($name);
        } catch (LockException $e) {
            return self::failure($e->getMessage());
        }

        return CommandResult::data(self::propertyList(['mode' => $state['mode'], 'owners' => $state['owners'], 'fencing' => $state['fencing']]));
    }

    /** The `lock` service's store, or the failure to report. */
    private function store(string $name, mixed $format): Store|CommandResult
    {
        if ($name === '') {
            return self::failure('NAME must be a lock name of 1 byte or more.');
        }
        if (!in_array($format, self::FORMATS, true)) {
            return self::failure(sprintf('Unknown --format "%s": use %s.', is_string($format) ? $format : '', implode(', ', self::FORMATS)));
        }
        $lock = $this->lock ?? \Drupal::service('lock');
        if (!$lock instanceof LockBackend) {
            return self::failure(sprintf("The lock service is %s, not %s: add lock_ext.services.yml to \$settings['container_yamls'].", get_debug_type($lock), LockBackend::class));
        }
        $store = $lock->getStore();
        if (!method_exists($store, 'inspect')) {
            return self::failure(sprintf('%s cannot be inspected: this version of the lock extension has no inspect() on it.', get_class($store)));
        }

        return $store;
    }

    /** A message for stderr and exit code 1, as drush prints a command's error. */
    private static function failure(string $message): CommandResult
    {
        return CommandResult::dataWithExitCode($message, self::EXIT_FAILURE);
    }

    /** Store::inspect()'s answer for the formatters: as it is in JSON or YAML, in words in a table. */
    private static function propertyList(array $state): PropertyList
    {
        $held = $state['held'] ?? true;
        $list = new PropertyList($state);
        $list->addRendererFunction(static fn ($key, $value, FormatterOptions $options, $row) => self::text((string) $key, $value, $held));

        return $list;
    }

    /** One value of Store::inspect() for people: null is "unknown" (the store cannot tell), but for a free lock's mode and the ttl of a hold without expiry. */
    private static function text(string $key, mixed $value, bool $held = true): string
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
