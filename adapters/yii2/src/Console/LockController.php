<?php

declare(strict_types=1);

namespace Lock\Adapter\Yii2\Console;

use Lock\Adapter\Yii2\LockMutex;
use Lock\LockException;
use Lock\Store;
use yii\console\Controller;
use yii\console\ExitCode;

/**
 * `yii lock/inspect NAME` and `yii lock/release NAME` over the store of a LockMutex
 * component, for operators. Map it in the console application's configuration:
 *
 * ```php
 * 'controllerMap' => ['lock' => \Lock\Adapter\Yii2\Console\LockController::class],
 * ```
 *
 * NAME is the name given to the mutex's acquire(): the component keeps its
 * holds under that name as the resource, so inspecting it shows the hold
 * acquire(NAME) took.
 */
class LockController extends Controller
{
    /** The id of the LockMutex application component. */
    public $mutex = 'mutex';

    /** table: for people; json: one JSON object, null where the store cannot tell. */
    public $format = 'table';

    /** release: break the hold without asking. */
    public $force = false;

    private const FORMATS = ['table', 'json'];

    public function options($actionID)
    {
        $options = array_merge(parent::options($actionID), ['mutex', 'format']);
        if ($actionID === 'release') {
            $options[] = 'force';
        }

        return $options;
    }

    /**
     * Shows what the store knows about the lock NAME: held, mode, owners,
     * ttl, fencing token, waiters and their queue. Exits 0 whether or not it
     * is held.
     *
     * @param string $name the name given to the mutex's acquire()
     */
    public function actionInspect($name)
    {
        $store = $this->store($name);
        if (!$store instanceof Store) {
            return $store;
        }
        try {
            $state = $store->inspect((string) $name);
        } catch (LockException $e) {
            return $this->fail($e->getMessage());
        }
        $this->stdout($this->format === 'json'
            ? self::json($state)
            : $this->table(sprintf('Lock "%s" on %s', $name, get_class($store)), $state));

        return ExitCode::OK;
    }

    /**
     * Breaks the hold of the lock NAME, whoever has it (Store::forceRelease()),
     * after asking (--force: without asking; never when not interactive), and
     * shows what it broke. Exits 1 when nothing holds it or the answer is no.
     *
     * @param string $name the name given to the mutex's acquire()
     */
    public function actionRelease($name)
    {
        $store = $this->store($name);
        if (!$store instanceof Store) {
            return $store;
        }
        $name = (string) $name;
        try {
            $state = $store->inspect($name);
            if (!$state['held']) {
                $this->stderr(sprintf("Lock \"%s\" is not held: nothing to release.\n", $name));

                return ExitCode::UNSPECIFIED_ERROR;
            }
            if (!$this->force) {
                $question = sprintf('Break the %s hold of lock "%s" (owners: %s)?', self::text('mode', $state['mode']), $name, self::text('owners', $state['owners']));
                if (!$this->interactive) {
                    return $this->fail($question . ' Not confirmed: pass --force to release without asking.');
                }
                if (!$this->confirm($question)) {
                    $this->stderr("Not released.\n");

                    return ExitCode::UNSPECIFIED_ERROR;
                }
            }
            $store->forceRelease($name);
        } catch (LockException $e) {
            return $this->fail($e->getMessage());
        }
        $broken = ['mode' => $state['mode'], 'owners' => $state['owners'], 'fencing' => $state['fencing']];
        $this->stdout($this->format === 'json'
            ? self::json($broken)
            : $this->table(sprintf('Released lock "%s"; it was held:', $name), $broken));

        return ExitCode::OK;
    }

    /** The mutex component's store, or the exit code of an error about the input or the component. */
    private function store($name): Store|int
    {
        if (!is_string($name) || $name === '') {
            return $this->fail('NAME must be a lock name of 1 byte or more.', ExitCode::USAGE);
        }
        if (!in_array($this->format, self::FORMATS, true)) {
            return $this->fail(sprintf('Unknown --format "%s": use %s.', $this->format, implode(' or ', self::FORMATS)), ExitCode::USAGE);
        }
        $mutex = \Yii::$app->get($this->mutex, false);
        if (!$mutex instanceof LockMutex) {
            return $this->fail(sprintf('The application component "%s" is not a %s.', $this->mutex, LockMutex::class), ExitCode::CONFIG);
        }
        $store = $mutex->getStore();
        if (!method_exists($store, 'inspect')) {
            return $this->fail(sprintf('%s cannot be inspected: this version of the lock extension has no inspect() on it.', get_class($store)));
        }

        return $store;
    }

    private function fail(string $message, int $code = ExitCode::UNSPECIFIED_ERROR): int
    {
        $this->stderr($message . "\n");

        return $code;
    }

    /** @param array<string, mixed> $state */
    private function table(string $title, array $state): string
    {
        $width = max(array_map('strlen', array_keys($state)));
        $out = $title . "\n";
        foreach ($state as $key => $value) {
            $out .= sprintf("  %-{$width}s  %s\n", $key, self::text($key, $value, $state['held'] ?? true));
        }

        return $out;
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

    private static function json(array $state): string
    {
        return json_encode($state, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION) . "\n";
    }
}
