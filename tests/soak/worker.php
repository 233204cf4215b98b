<?php
// One soak worker: mixed load on every store until the driver creates the stop file.
// Started by soak.php as: php -d extension=lock.so worker.php RUN_DIR WORKER_ID SEED

declare(strict_types=1);

require __DIR__ . '/soak.inc';

/** What one step works on: the resource, its store and the Lock object. */
final class SoakStep
{
    public function __construct(
        public readonly int $res,
        public readonly string $kind,
        public readonly string $variant,
        public readonly Lock\Store $store,
        public Lock\Lock $lock,
        public readonly bool $reused,
    ) {
    }
}

final class SoakWorker
{
    private const STATUS_EVERY_NS = 250_000_000;

    private array $cfg;
    private array $stores = [];
    /** @var array<string, Lock\Lock> reused Lock objects by "variant|resource" */
    private array $locks = [];
    private array $gates = [];
    private $gateRedis;
    private string $at = '';
    private int $lastStatus = 0;
    private bool $warmDone = false;
    private array $s;
    /** A fault worker 0 injects after warm-up to show that a check fails (SOAK_INJECT, see soak.php). */
    private string $inject;
    private array $junk = [];

    public function __construct(private readonly string $dir, private readonly int $id)
    {
        $this->inject = $id === 0 ? (string) getenv('SOAK_INJECT') : '';
        $this->cfg = json_decode(file_get_contents($dir . '/config.json'), true, 512, JSON_THROW_ON_ERROR);
        $this->s = [
            'id' => $id,
            'pid' => getmypid(),
            'phase' => 'start',
            'op' => '',
            't' => 0,
            'ops' => 0,
            'calls' => [],
            'inc' => array_fill(0, count($this->cfg['resources']), 0),
            'reads' => 0,
            'viol' => ['write_busy' => 0, 'write_torn' => 0, 'read_busy' => 0, 'read_changed' => 0, 'read_torn' => 0],
            'viol_msgs' => [],
            'fence' => ['checked' => 0, 'bad' => 0, 'cross_checked' => 0, 'cross_back' => 0, 'wrong_type' => 0],
            'fence_msgs' => [],
            'verify_lost' => [],
            'skipped_restart' => 0,
            'expired_in_cs' => array_fill(0, count($this->cfg['resources']), 0),
            'storage_in' => 0,
            'storage_out' => 0,
            'storage_out_msgs' => [],
            'unexpected' => 0,
            'unexpected_msgs' => [],
            'epoch_ok' => [],
            'overshoot_ms' => [],
            'slow_waits' => [],
            'force' => 0,
            'force_skipped' => 0,
            'fd_warm' => null,
            'fd_final' => null,
            'fd_max' => 0,
            'mem_warm' => null,
            'mem_final' => null,
        ];
    }

    public function run(): int
    {
        set_error_handler(static function (int $no, string $msg, string $file, int $line): bool {
            if ((error_reporting() & $no) === 0) {
                return false; // silenced with @ on purpose
            }
            throw new ErrorException($msg, 0, $no, $file, $line);
        });
        foreach ($this->cfg['resources'] as $i => $r) {
            $this->gates[$i] = soak_gate_open($this->dir . "/gate-$i");
        }
        $this->gateRedis = soak_gate_open($this->dir . '/gate-redis');
        foreach ($this->variants() as $v) {
            $this->stores[$v] = $this->makeStore($v, false);
        }
        $this->s['phase'] = 'run';
        $this->status(true);
        while (!$this->stopping()) {
            $this->step();
            $this->s['ops']++;
            if (!$this->warmDone && hrtime(true) >= $this->cfg['warmAt']) {
                $this->warmSample();
            }
        }
        // The end: every reused object still alive, every connection settled, then count.
        $this->settle();
        $this->s['fd_final'] = soak_fd_count();
        $this->s['mem_final'] = memory_get_usage();
        $this->s['phase'] = 'done';
        $this->status(true);
        return 0;
    }

    /** Every store variant this worker keeps one reused store of. */
    private function variants(): array
    {
        $v = [];
        foreach ($this->cfg['resources'] as $r) {
            foreach ($r['variants'] as $x) {
                $v[$x] = true;
            }
        }
        return array_keys($v);
    }

    /** A store of a variant, by constructor or by DSN (new ones use both ways). */
    private function makeStore(string $variant, bool $viaDsn): Lock\Store
    {
        if ($variant === 'flock') {
            return $viaDsn ? Lock\Factory::fromDsn('flock://' . $this->cfg['flockDir'])->getStore()
                : new Lock\Store\FlockStore($this->cfg['flockDir']);
        }
        if ($variant === 'semaphore') {
            return $viaDsn ? Lock\Factory::fromDsn('semaphore:')->getStore() : new Lock\Store\SemaphoreStore();
        }
        // redis-fair-p, redis-unfair-np, ...
        [, $fair, $pers] = explode('-', $variant);
        $opts = ['prefix' => $this->cfg['prefix'], 'timeout' => $this->cfg['redisTimeout'],
            'persistent' => $pers === 'p', 'fair' => $fair === 'fair'];
        $base = 'redis://127.0.0.1:' . $this->cfg['port'];
        if ($viaDsn) {
            return Lock\Factory::fromDsn($base . '?' . http_build_query([
                'prefix' => $opts['prefix'], 'timeout' => $opts['timeout'],
                'persistent' => $opts['persistent'] ? 1 : 0, 'fair' => $opts['fair'] ? 1 : 0]))->getStore();
        }
        return new Lock\Store\RedisStore($base, $opts);
    }

    private function ttlFor(string $kind): ?float
    {
        if ($kind !== 'redis') {
            return mt_rand(0, 1) ? null : 300.0;
        }
        // Short enough that a hold left behind blocks the others briefly, long enough that
        // no read-modify-write (well under a millisecond) outlives it on a loaded machine.
        return [3.0, 5.0, 10.0][mt_rand(0, 2)];
    }

    private function stopping(): bool
    {
        $now = hrtime(true);
        if ($now - $this->lastStatus < self::STATUS_EVERY_NS) {
            return false;
        }
        $this->status(false);
        clearstatcache(true, $this->dir . '/stop');
        return file_exists($this->dir . '/stop');
    }

    /** Rewrites the status file (the driver's heartbeat and, at the end, the counts). */
    private function status(bool $force): void
    {
        $now = hrtime(true);
        if (!$force && $now - $this->lastStatus < self::STATUS_EVERY_NS) {
            return;
        }
        $this->lastStatus = $now;
        $this->s['t'] = $now;
        soak_write_atomic($this->dir . "/status-{$this->id}.json", json_encode($this->s, JSON_THROW_ON_ERROR));
    }

    /** After warm-up: the descriptor and heap counts the end is compared with. */
    private function warmSample(): void
    {
        [, $down] = soak_read_state($this->dir);
        if ($down) {
            return; // mid-restart: take it after the next step
        }
        $this->settle();
        $this->s['fd_warm'] = soak_fd_count();
        $this->s['mem_warm'] = memory_get_usage();
        $this->warmDone = true;
    }

    /**
     * Brings every connection to its steady state, so that two descriptor counts
     * compare like with like: each reused store makes one successful call (its
     * connection open), and each persistent variant gets one new store that makes a
     * call and goes away (the idle pooled connection that new persistent stores use).
     */
    private function settle(): void
    {
        foreach ($this->stores as $v => $store) {
            $name = $this->resourceOf($v);
            $this->retryStorage(fn () => $store->isLocked($name));
            if (str_ends_with($v, '-p')) {
                $fresh = $this->makeStore($v, false);
                $this->retryStorage(fn () => $fresh->isLocked($name));
                unset($fresh);
            }
        }
        // Every reused Lock object exists from here on, so both counts hold them all.
        foreach ($this->cfg['resources'] as $i => $r) {
            foreach ($r['variants'] as $v) {
                $this->reusedLock($i, $v);
            }
        }
    }

    /** A resource of the soak that stores of this variant use (so that settling makes no new lock file). */
    private function resourceOf(string $variant): string
    {
        foreach ($this->cfg['resources'] as $r) {
            if (in_array($variant, $r['variants'], true)) {
                return $r['name'];
            }
        }
        throw new LogicException("no resource for $variant");
    }

    private function retryStorage(callable $fn): void
    {
        for ($try = 0; ; $try++) {
            try {
                $fn();
                return;
            } catch (Lock\StorageException $e) {
                if ($try >= 50) {
                    $this->unexpected('settle', $e);
                    return;
                }
                usleep(100000);
            }
        }
    }

    private function reusedLock(int $res, string $variant): Lock\Lock
    {
        $key = "$variant|$res";
        return $this->locks[$key] ??= new Lock\Lock($this->cfg['resources'][$res]['name'],
            $this->stores[$variant], $this->ttlFor($this->cfg['resources'][$res]['kind']));
    }

    private function step(): void
    {
        if ($this->inject !== '' && $this->warmDone) {
            $this->injectFault();
        }
        $res = mt_rand(0, count($this->cfg['resources']) - 1);
        $r = $this->cfg['resources'][$res];
        $variant = $r['variants'][mt_rand(0, count($r['variants']) - 1)];
        $freshStore = mt_rand(0, 99) < 10;
        $reused = !$freshStore && mt_rand(0, 1) === 1;
        $this->at = 'setup';
        try {
            $store = $freshStore ? $this->makeStore($variant, mt_rand(0, 1) === 1) : $this->stores[$variant];
            if ($reused) {
                $lock = $this->reusedLock($res, $variant);
            } elseif (mt_rand(0, 3) === 0) {
                $lock = (new Lock\Factory($store, $this->ttlFor($r['kind'])))->createLock($r['name']);
            } else {
                $lock = new Lock\Lock($r['name'], $store, $this->ttlFor($r['kind']));
            }
        } catch (Throwable $e) {
            $this->fault($r['kind'], $e);
            return;
        }
        $st = new SoakStep($res, $r['kind'], $variant, $store, $lock, $reused);
        $p = mt_rand(0, 999);
        $op = match (true) {
            $p < 420 => 'exclusive',
            $p < 650 => 'read',
            $p < 820 => 'run',
            $p < 880 => 'promote',
            $p < 940 => 'restore',
            $p < 995 => 'isLocked',
            default => 'forceRelease',
        };
        if ($op === 'restore' && $r['kind'] !== 'redis') {
            $op = 'exclusive'; // flock and semaphore holds belong to their process
        }
        $this->s['op'] = "$op {$r['name']} $variant";
        try {
            match ($op) {
                'exclusive' => $this->opExclusive($st),
                'read' => $this->opRead($st),
                'run' => $this->opRun($st),
                'promote' => $this->opPromote($st),
                'restore' => $this->opRestore($st),
                'isLocked' => $this->opIsLocked($st),
                'forceRelease' => $this->opForce($st),
            };
        } catch (Throwable $e) {
            $this->fault($r['kind'], $e);
        } finally {
            $this->letGo($st);
        }
    }

    /** Breaks a rule on purpose (only when SOAK_INJECT is set): each check must then fail. */
    private function injectFault(): void
    {
        static $once = false;
        $first = !$once;
        $once = true;
        switch ($this->inject) {
            case 'unlocked': // a read-modify-write without the lock
                if ($this->s['ops'] % 10 === 0) {
                    $res = mt_rand(0, count($this->cfg['resources']) - 1);
                    $kind = $this->cfg['resources'][$res]['kind'];
                    $st = new SoakStep($res, $kind, $this->cfg['resources'][$res]['variants'][0],
                        $this->stores[$this->cfg['resources'][$res]['variants'][0]], $this->reusedLock($res, $this->cfg['resources'][$res]['variants'][0]), true);
                    $this->write($st, null, 0);
                }
                break;
            case 'fd':
                $this->junk[] = fopen('/dev/null', 'r');
                break;
            case 'rss':
                $this->junk[] = str_repeat('x', 1024);
                break;
            case 'hang':
                $this->s['op'] = 'injected hang';
                sleep(3600);
                break;
            case 'crash':
                posix_kill(getmypid(), SIGSEGV);
                break;
            case 'sem':
                if ($first) {
                    $l = new Lock\Lock('soak-injected-' . getmypid(), $this->stores['semaphore']);
                    $l->acquire();
                    $l->release();
                }
                break;
            case 'redis-key':
                // Again and again: a restart empties the server.
                if ($this->s['ops'] % 200 === 0) {
                    $l = new Lock\Lock('injected-' . $this->s['ops'], $this->stores['redis-fair-np'], null, false);
                    $this->retryStorage(fn () => $l->acquire());
                }
                break;
            case 'storage':
                if ($this->s['ops'] % 100 === 0) {
                    $this->at = 'isLocked(injected)';
                    try {
                        (new Lock\Store\RedisStore('redis://127.0.0.1:1', ['timeout' => 0.1]))->isLocked('x');
                    } catch (Throwable $e) {
                        $this->fault('redis', $e);
                    }
                }
                break;
        }
    }

    /** Counts an outcome of a call: "kind call outcome". */
    private function count(string $kind, string $call, string $outcome): void
    {
        $k = "$kind $call $outcome";
        $this->s['calls'][$k] = ($this->s['calls'][$k] ?? 0) + 1;
    }

    /** A wait for $timeout seconds: one try, a bounded wait, or (flock and semaphore only) no bound. */
    private function pickWait(string $kind): array
    {
        $p = mt_rand(0, 99);
        if ($p < 20) {
            return [false, null];
        }
        if ($p < 27 && $kind !== 'redis') {
            return [true, null];
        }
        return [true, [0.005, 0.02, 0.1, 0.5, 1.0, 2.0][mt_rand(0, 5)]];
    }

    /** Calls an acquire method with a wait, counting the outcome and how far a timed wait overran. */
    private function acquireVia(SoakStep $st, string $method): bool
    {
        [$blocking, $timeout] = $this->pickWait($st->kind);
        $this->at = $method . ($blocking ? ($timeout === null ? '(wait)' : '(timeout)') : '(try)');
        $t0 = hrtime(true);
        $got = $st->lock->$method($blocking, $timeout);
        if (!$got && $timeout !== null) {
            $over = (hrtime(true) - $t0) / 1e6 - $timeout * 1000;
            $k = $st->kind . ($st->kind === 'redis' && $this->inWindow() ? ' (restart or cut)' : '');
            $o = $this->s['overshoot_ms'][$k] ?? ['max' => 0.0, 'n' => 0, 'over100' => 0];
            $o['max'] = max($o['max'], round($over, 1));
            $o['n']++;
            $o['over100'] += $over > 100 ? 1 : 0;
            $this->s['overshoot_ms'][$k] = $o;
            if ($over > 50) {
                $this->note('slow_waits', sprintf('%s %s(%s) on %s %s: %.1f ms over', $k, $method, $timeout,
                    $st->variant, $st->reused ? 'reused' : 'new', $over));
            }
        }
        $this->count($st->kind, $this->at, $got ? 'true' : 'false');
        return $got;
    }

    private function maybeRefresh(SoakStep $st): void
    {
        if (mt_rand(0, 99) < 25) {
            $this->at = 'refresh';
            $st->lock->refresh($st->kind === 'redis' && mt_rand(0, 1) ? [3.0, 6.0][mt_rand(0, 1)] : null);
            $this->count($st->kind, 'refresh', 'ok');
        }
        if (mt_rand(0, 99) < 5) {
            usleep(mt_rand(0, 3000)); // a holder that takes its time before the work
        }
    }

    /** Releases at the end of a hold; on Redis sometimes with a cooldown. */
    private function release(SoakStep $st): void
    {
        $delay = $st->kind === 'redis' && mt_rand(0, 99) < 8 ? [0.01, 0.05, 0.1][mt_rand(0, 2)] : 0.0;
        $this->at = $delay > 0 ? 'release(delay)' : 'release';
        $st->lock->release($delay);
        $this->count($st->kind, $this->at, 'ok');
    }

    private function fencingToken(SoakStep $st, bool $exclusive): ?int
    {
        $this->at = 'getFencingToken';
        $token = $st->lock->getFencingToken();
        if ($this->inject === 'fence' && $this->warmDone && is_int($token)) {
            $token = intdiv($token, 2); // as a stale holder's token would look
        }
        // flock and Redis give one for every exclusive hold; semaphores and read holds none.
        $want = $exclusive && $st->kind !== 'semaphore';
        if ($want ? !is_int($token) : ($token !== null && $st->kind !== 'semaphore')) {
            $this->s['fence']['wrong_type']++;
            $this->note('fence_msgs', "{$st->kind} res {$st->res}: token " . var_export($token, true)
                . ' for ' . ($exclusive ? 'an exclusive' : 'a read') . ' hold');
        }
        return $token;
    }

    private function opExclusive(SoakStep $st): void
    {
        if (!$this->acquireVia($st, 'acquire')) {
            return;
        }
        $token = $this->fencingToken($st, true);
        $this->maybeRefresh($st);
        $this->guarded($st, fn (int $epoch) => $this->write($st, $token, $epoch));
        $this->release($st);
    }

    private function opRead(SoakStep $st): void
    {
        if (!$this->acquireVia($st, 'acquireRead')) {
            return;
        }
        $this->fencingToken($st, false);
        $this->maybeRefresh($st);
        $this->guarded($st, fn (int $epoch) => $this->readCheck($st));
        $this->release($st);
    }

    private function opRun(SoakStep $st): void
    {
        $timeout = [null, 0.05, 0.5, 2.0][mt_rand(0, 3)];
        if ($timeout === null && $st->kind === 'redis') {
            $timeout = 1.0; // a wait without end would outlast a restart only to fail
        }
        $this->at = 'run';
        try {
            $value = $st->lock->run(function (Lock\Lock $l) use ($st): string {
                $token = $this->fencingToken($st, true);
                $this->guarded($st, fn (int $epoch) => $this->write($st, $token, $epoch));
                $this->at = 'run';
                return 'done';
            }, $timeout);
        } catch (Lock\TimeoutException) {
            $this->count($st->kind, 'run', 'TimeoutException');
            return;
        }
        $this->count($st->kind, 'run', $value === 'done' ? 'ok' : 'bad value');
        if ($value !== 'done') {
            $this->unexpected('run', new UnexpectedValueException('run() returned ' . var_export($value, true)));
        }
    }

    /** Reader, then promoted to writer (may be refused), then perhaps demoted again. */
    private function opPromote(SoakStep $st): void
    {
        if (!$this->acquireVia($st, 'acquireRead')) {
            return;
        }
        $this->guarded($st, fn (int $epoch) => $this->readCheck($st));
        $this->at = 'acquire(promote)';
        $promoted = $st->lock->acquire(true, [0.01, 0.2][mt_rand(0, 1)]);
        $this->count($st->kind, $this->at, $promoted ? 'true' : 'false');
        if ($promoted) {
            $token = $this->fencingToken($st, true);
            $this->guarded($st, fn (int $epoch) => $this->write($st, $token, $epoch));
            if (mt_rand(0, 1)) {
                $this->at = 'acquireRead(demote)';
                $demoted = $st->lock->acquireRead();
                $this->count($st->kind, $this->at, $demoted ? 'true' : 'false');
                if ($demoted) {
                    $this->guarded($st, fn (int $epoch) => $this->readCheck($st));
                }
            }
        }
        $this->release($st);
    }

    /** Redis: acquire, drop the object without releasing, adopt the hold by its token, work, release. */
    private function opRestore(SoakStep $st): void
    {
        $ttl = $this->ttlFor('redis');
        $first = new Lock\Lock($this->cfg['resources'][$st->res]['name'], $st->store, $ttl, false);
        $this->at = 'acquire(for restore)';
        if (!$first->acquire(true, 0.5)) {
            $this->count('redis', $this->at, 'false');
            return;
        }
        $this->count('redis', $this->at, 'true');
        $owner = $first->getOwner();
        unset($first); // autoRelease false: the hold stays
        $this->at = 'restoreLock';
        $st->lock = (new Lock\Factory($st->store, $ttl))->restoreLock($this->cfg['resources'][$st->res]['name'], $owner, $ttl);
        $this->count('redis', 'restoreLock', 'ok');
        $this->at = 'getFencingToken(restored)';
        $token = $st->lock->getFencingToken();
        $this->guarded($st, fn (int $epoch) => $this->write($st, $token, $epoch));
        $this->release($st);
    }

    private function opIsLocked(SoakStep $st): void
    {
        $this->at = 'isLocked';
        $locked = $st->store->isLocked($this->cfg['resources'][$st->res]['name']);
        $this->count($st->kind, 'isLocked', $locked ? 'true' : 'false');
    }

    /** Breaks whoever holds the resource, but never inside a holder's read-modify-write (the gate). */
    private function opForce(SoakStep $st): void
    {
        $gate = $this->gates[$st->res];
        if (!soak_gate_exclusive($gate, 1.0)) {
            $this->s['force_skipped']++;
            return;
        }
        try {
            $this->at = 'forceRelease';
            $st->store->forceRelease($this->cfg['resources'][$st->res]['name']);
            $this->count($st->kind, 'forceRelease', 'ok');
            $this->s['force']++;
        } finally {
            flock($gate, LOCK_UN);
        }
    }

    /**
     * Runs $body(epoch) inside the gates, only when the hold is verified ours there.
     * Inside the gates no forceRelease of this resource and no Redis restart can
     * happen, so a hold that isAcquired() confirms stays ours until the body ends
     * (on Redis unless its TTL runs out, which isExpired() tells afterwards).
     */
    private function guarded(SoakStep $st, callable $body): void
    {
        $redis = $st->kind === 'redis';
        if ($redis) {
            [, $down] = soak_read_state($this->dir);
            if ($down) {
                $this->s['skipped_restart']++; // a restart waits for the gate: do not hold it up
                return;
            }
            flock($this->gateRedis, LOCK_SH);
        }
        $gate = $this->gates[$st->res];
        flock($gate, LOCK_SH);
        try {
            $epoch = 0;
            if ($redis) {
                [$epoch, $down] = soak_read_state($this->dir);
                if ($down) {
                    $this->s['skipped_restart']++;
                    return;
                }
            }
            $this->at = 'isAcquired';
            if (!$st->lock->isAcquired()) {
                $this->count($st->kind, 'isAcquired', 'false');
                $this->s['verify_lost'][$st->kind] = ($this->s['verify_lost'][$st->kind] ?? 0) + 1;
                return;
            }
            $this->count($st->kind, 'isAcquired', 'true');
            $body($epoch);
            if ($redis) {
                $this->s['epoch_ok'][$epoch] = ($this->s['epoch_ok'][$epoch] ?? 0) + 1;
                $this->at = 'isExpired';
                if ($st->lock->isExpired()) {
                    $this->s['expired_in_cs'][$st->res]++;
                }
            }
        } finally {
            flock($gate, LOCK_UN);
            if ($redis) {
                flock($this->gateRedis, LOCK_UN);
            }
        }
    }

    /** The holder's read-modify-write of the resource's counter, with the fencing check. */
    private function write(SoakStep $st, ?int $token, int $epoch): void
    {
        $path = $this->dir . '/counter-' . $st->res;
        $c = soak_counter_read($path);
        if ($c === null) {
            $this->violation('write_torn', $st, 'torn counter file before the write');
            return;
        }
        [$v, $fence, $fenceEpoch, $busy] = $c;
        if ($busy) {
            $this->violation('write_busy', $st, "another writer was inside (saw busy $v)");
        }
        soak_counter_write($path, "busy $v {$this->id}");
        if (mt_rand(0, 3) === 0) {
            usleep(mt_rand(0, 800)); // widen the window a second writer would need
        }
        soak_counter_write($path, ($v + 1) . ' ' . ($token ?? 0) . ' ' . $epoch);
        $this->s['inc'][$st->res]++;
        if ($token !== null && $fence > 0) {
            if ($fenceEpoch === $epoch) {
                $this->s['fence']['checked']++;
                if ($token <= $fence) {
                    $this->s['fence']['bad']++;
                    $this->note('fence_msgs', "res {$st->res} epoch $epoch: token $token after $fence");
                }
            } else {
                // Across a Redis restart the counter was lost with the server's data.
                $this->s['fence']['cross_checked']++;
                if ($token <= $fence) {
                    $this->s['fence']['cross_back']++;
                }
            }
        }
    }

    /** A reader's check: no writer inside, and nothing changes while it reads. */
    private function readCheck(SoakStep $st): void
    {
        $path = $this->dir . '/counter-' . $st->res;
        $a = soak_counter_read($path);
        if (mt_rand(0, 1)) {
            usleep(mt_rand(0, 500));
        }
        $b = soak_counter_read($path);
        if ($a === null || $b === null) {
            $this->violation('read_torn', $st, 'torn counter file under a read hold');
        } elseif ($a[3] || $b[3]) {
            $this->violation('read_busy', $st, 'a writer was inside during a read hold');
        } elseif ($a !== $b) {
            $this->violation('read_changed', $st, "the counter changed under a read hold ({$a[0]} -> {$b[0]})");
        }
        $this->s['reads']++;
    }

    private function violation(string $what, SoakStep $st, string $msg): void
    {
        $this->s['viol'][$what]++;
        $this->note('viol_msgs', "{$st->kind} res {$st->res} ({$st->variant}): $msg");
    }

    private function note(string $list, string $msg): void
    {
        if (count($this->s[$list]) < 10) {
            $this->s[$list][] = $msg;
        }
    }

    /** Classifies an exception that ended a step. */
    private function fault(string $kind, Throwable $e): void
    {
        $cls = substr(strrchr('\\' . get_class($e), '\\'), 1);
        $this->count($kind, $this->at, $cls);
        if ($e instanceof Lock\StorageException && $kind === 'redis') {
            if ($this->inWindow()) {
                $this->s['storage_in']++;
            } else {
                $this->s['storage_out']++;
                $this->note('storage_out_msgs', "{$this->at}: {$e->getMessage()}");
            }
            usleep(mt_rand(10000, 50000)); // back off, as a client of a dead server would
            return;
        }
        if ($e instanceof Lock\ExpiredException || $e instanceof Lock\TimeoutException) {
            return; // broken by forceRelease or a restart; counted above
        }
        $this->unexpected($this->at, $e);
    }

    /** Whether Redis is in a disturbance window: a restart pending or under way, or a grace after it or a connection cut. */
    private function inWindow(): bool
    {
        [, $down, $since] = soak_read_state($this->dir);
        return $down || hrtime(true) - $since < (int) ($this->cfg['restartGrace'] * 1e9);
    }

    private function unexpected(string $where, Throwable $e): void
    {
        $this->s['unexpected']++;
        $this->note('unexpected_msgs', "$where: " . get_class($e) . ': ' . $e->getMessage()
            . ' at ' . basename($e->getFile()) . ':' . $e->getLine());
    }

    /**
     * Makes sure nothing stays held after a step. release() is a no-op when not held;
     * a reused Lock whose release failed is replaced (its destruction drops the hold
     * silently, or Redis lets it expire), as an application would.
     */
    private function letGo(SoakStep $st): void
    {
        $this->at = 'release(cleanup)';
        try {
            $st->lock->release();
            return;
        } catch (Lock\ExpiredException $e) {
            $this->count($st->kind, $this->at, substr(strrchr('\\' . get_class($e), '\\'), 1));
            return;
        } catch (Lock\StorageException $e) {
            $this->count($st->kind, $this->at, 'StorageException');
        } catch (Throwable $e) {
            $this->unexpected($this->at, $e);
        }
        if ($st->reused) {
            unset($this->locks["{$st->variant}|{$st->res}"]);
        }
    }
}

[, $dir, $id, $seed] = $argv;
mt_srand((int) $seed);
exit((new SoakWorker($dir, (int) $id))->run());
