<?php
// The soak: mixed load on every store from several worker processes, with Redis
// restarts, then one PASS/FAIL line per check. Run it through scripts/soak.sh, which
// loads the extension, makes and removes the run directory, and cleans up after it.
//
//   php -d extension=lock.so soak.php --dir RUN_DIR --seconds N [--workers N] [--seed N] [--ipc private|shared]
//
// The rules (also in docs/testing.md, The soak):
//
// Lost updates. Every resource guards a counter file "VALUE FENCE EPOCH". A holder
// reads it, writes "busy VALUE WORKER", pauses now and then, and writes VALUE+1, and
// counts one increment. At the end each counter must equal the sum of the workers'
// increments of its resource: zero lost updates (and zero phantom ones).
// The soak breaks holds on purpose (forceRelease, Redis restarts that lose every
// key); a hold broken in the middle of its read-modify-write would make a lost update
// that is no bug of the lock. So the read-modify-write runs inside gates (plain
// flock() locks of the run directory, taken shared by holders, exclusively by the
// soak's own disturbers): inside them the holder first asks isAcquired(), and only
// a hold confirmed there counts; a Redis restart or a forceRelease waits until no
// holder of its resource is inside, and holders do not enter while a restart is
// pending. Holds are still broken by restarts and forceRelease between acquire and
// the gate, in waits and in release, and those calls must then give the documented
// exceptions. The gates never serialise holders (shared): mutual exclusion is the
// extension's alone, and a hold that isAcquired() wrongly confirms shows as a lost
// update. A Redis hold whose TTL ran out inside the gate (a stall of seconds) is
// reported with the result; it is the documented limit of expiring locks.
//
// Storage errors. Redis calls may throw StorageException from the moment a restart
// is pending until restartGrace seconds after the new server answers; those are
// counted, not failures. One outside such a window is a failure, and so is one from
// flock or semaphore. After every restart each worker must hold a Redis lock again.
//
// Memory. The driver samples each worker's VmRSS twice a second. Baseline: the
// largest sample of the second eighth of the load (after warm-up); end: the largest
// of the last quarter. Growth must stay under 2 MB per worker.
//
// Descriptors. Each worker counts its own descriptors after warm-up and at the end,
// both times after a settling pass that gives every reused store one successful
// call and the persistent pool its idle connection, with every reused Lock alive:
// the end count must not exceed the warm one. The driver's descriptors before the
// run and after it must be equal.
//
// Semaphores. In a private IPC namespace (when unshare works) every set is ours:
// once the workers are gone, the sets left must be the store's own sets of the
// soak's semaphore resources (never removed on release, by design); the driver
// removes those with forceRelease, and then the namespace must hold exactly the
// sets it held before. In the shared namespace only sets with the soak's keys are
// looked at. Anything else is a leak. Redis: once the workers are gone, every key
// left under the soak's prefix must expire except the fencing counters (":f").
// flock: the lock directory holds one lock file per resource and nothing else.
//
// Crashes and hangs: every worker must exit 0 after the stop; one whose heartbeat
// (its status file) stalls for 30 s is killed by the watchdog and is a failure.
//
// Self-test of the checks: SOAK_INJECT=unlocked|fence|fd|rss|hang|crash|sem|redis-key|storage
// makes worker 0 break one rule after warm-up (a read-modify-write without the lock, a
// stale fencing token, a descriptor or memory it never frees, a hang, a crash, a semaphore set or Redis key
// left behind, a storage error outside a restart); the matching check must then fail.

declare(strict_types=1);

require dirname(__DIR__) . '/inc/common.inc';
require dirname(__DIR__) . '/inc/resp.inc';
require __DIR__ . '/soak.inc';

/**
 * The soak's own redis-server on a free loopback port, without persistence, so that a
 * restart loses every key. Its command line names the run directory (--dir), by which
 * scripts/soak.sh finds and kills it should the driver die.
 */
final class SoakRedis
{
    public int $port = 0;
    /** @var resource|null */
    private $proc = null;

    public function __construct(private readonly string $dir)
    {
        for ($attempt = 0; $attempt < 5; $attempt++) {
            $server = stream_socket_server('tcp://127.0.0.1:0');
            $name = stream_socket_get_name($server, false);
            fclose($server);
            $this->port = (int) substr($name, strrpos($name, ':') + 1);
            if ($this->launch()) {
                return;
            }
        }
        throw new RuntimeException('soak: cannot start redis-server: ' . @file_get_contents($dir . '/redis.log'));
    }

    /** Starts it again on the same port, empty (the old listener may linger a moment). */
    public function restart(): void
    {
        for ($attempt = 0; $attempt < 50; $attempt++) {
            if ($this->launch()) {
                return;
            }
            usleep(100000);
        }
        throw new RuntimeException("soak: cannot restart redis-server on port {$this->port}");
    }

    /** Ends it with $signal and waits until it is gone. */
    public function end(int $signal): void
    {
        if ($this->proc === null) {
            return;
        }
        $pid = proc_get_status($this->proc)['pid'];
        posix_kill($pid, $signal);
        $deadline = hrtime(true) + 30_000_000_000;
        while (proc_get_status($this->proc)['running']) {
            if (hrtime(true) > $deadline) {
                posix_kill($pid, SIGKILL);
            }
            usleep(5000);
        }
        proc_close($this->proc);
        $this->proc = null;
    }

    private function launch(): bool
    {
        $cmd = ['redis-server', '--port', (string) $this->port, '--bind', '127.0.0.1', '--save', '',
            '--appendonly', 'no', '--daemonize', 'no', '--dir', $this->dir, '--logfile', $this->dir . '/redis.log'];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        if ($proc === false) {
            return false;
        }
        $this->proc = $proc;
        file_put_contents($this->dir . '/redis.pid', proc_get_status($proc)['pid'] . "\n");
        $deadline = hrtime(true) + 10_000_000_000;
        while (hrtime(true) < $deadline) {
            if (!proc_get_status($proc)['running']) {
                proc_close($proc);
                $this->proc = null;
                return false;
            }
            try {
                $c = new LockTestResp($this->port, 1.0);
                $pong = $c->cmd('PING');
                $c->close();
                if ($pong === 'PONG') {
                    return true;
                }
            } catch (RuntimeException) {
            }
            usleep(10000);
        }
        $this->end(SIGKILL);
        return false;
    }
}

final class SoakDriver
{
    private const HANG_S = 30.0;
    private const RSS_LIMIT_KB = 2048;

    private array $cfg;
    private array $procs = [];
    private array $pids = [];
    private array $exit = [];
    private array $rss = [];
    private array $fdMaxSeen = [];
    private array $final = [];
    private array $hung = [];
    private array $crashed = [];
    private array $restarts = [];
    private array $restartFailures = [];
    private array $cuts = [];
    private int $clientsMax = 0;
    private int $semMax = 0;
    private ?LockTestResp $mon = null;
    private $gateRedis;
    private SoakRedis $srv;
    private int $epoch = 0;
    private bool $interrupted = false;
    private array $results = [];
    private int $t0;

    public function __construct(
        private readonly string $dir,
        private readonly int $seconds,
        private readonly int $workers,
        private readonly int $seed,
        private readonly string $ipc,
    ) {
    }

    public function main(): int
    {
        pcntl_async_signals(true);
        foreach ([SIGTERM, SIGINT, SIGHUP] as $sig) {
            pcntl_signal($sig, function (): void {
                $this->interrupted = true;
            });
        }
        $fdBefore = soak_fd_count();
        $semBefore = soak_sem_sets();

        $this->setUp();
        try {
            return $this->soak($fdBefore, $semBefore);
        } finally {
            // Every exit path: no worker and no server outlives the driver.
            $this->killWorkers();
            $this->srv->end(SIGKILL);
        }
    }

    private function soak(int $fdBefore, array $semBefore): int
    {
        echo "soak: {$this->seconds} s, {$this->workers} workers, seed {$this->seed}, redis 127.0.0.1:{$this->cfg['port']}, ",
            $this->ipc === 'private' ? 'private IPC namespace' : 'shared IPC namespace', "\n";
        $this->startWorkers();
        // Opened after the workers started, so that they do not inherit it.
        $this->gateRedis = soak_gate_open($this->dir . '/gate-redis');
        $this->load();
        $this->stopWorkers();
        if ($this->interrupted) {
            echo "FAIL soak: interrupted\n";
            return 1;
        }

        $this->checkCrashes();
        $this->checkLostUpdates();
        $this->checkExclusion();
        $this->checkFencing();
        $this->checkExceptions();
        $this->checkStorageErrors();
        $this->checkRecovery();
        $this->checkRss();
        $this->checkWorkerFds();
        $this->checkStuckHolds();
        $this->checkRedisKeys();
        $this->checkFlockFiles();
        $this->checkSemaphores($semBefore);

        // The run's own descriptors: everything it opened is closed again.
        $this->mon?->close();
        $this->mon = null;
        fclose($this->gateRedis);
        $this->srv->end(SIGTERM);
        gc_collect_cycles();
        $fdAfter = soak_fd_count();
        $this->result($fdAfter === $fdBefore, "driver fds before/after $fdBefore -> $fdAfter");

        return $this->summary();
    }

    private function setUp(): void
    {
        $rid = bin2hex(random_bytes(4));
        $resources = [];
        for ($i = 0; $i < 3; $i++) {
            $resources[] = ['name' => "soak-$rid-flock-$i", 'kind' => 'flock', 'variants' => ['flock']];
        }
        for ($i = 0; $i < 3; $i++) {
            $resources[] = ['name' => "soak-$rid-sem-$i", 'kind' => 'semaphore', 'variants' => ['semaphore']];
        }
        // Fair only, unfair only, and both on one resource (documented as safe).
        $fair = ['redis-fair-p', 'redis-fair-np'];
        $unfair = ['redis-unfair-p', 'redis-unfair-np'];
        foreach ([$fair, $fair, $unfair, array_merge($fair, $unfair)] as $i => $v) {
            $resources[] = ['name' => "soak-$rid-redis-$i", 'kind' => 'redis', 'variants' => $v];
        }
        if ($this->ipc === 'shared') {
            // For scripts/soak.sh's clean-up, should this driver die before it removes them.
            $keys = '';
            foreach ($resources as $r) {
                $keys .= $r['kind'] === 'semaphore' ? sprintf("0x%08x\n", soak_sem_key($r['name']) & 0xffffffff) : '';
            }
            file_put_contents($this->dir . '/semkeys', $keys);
        }
        mkdir($this->dir . '/locks', 0700);
        foreach ($resources as $i => $r) {
            soak_counter_write($this->dir . "/counter-$i", '0 0 0');
            touch($this->dir . "/gate-$i");
        }
        touch($this->dir . '/gate-redis');
        soak_write_state($this->dir, 0, false);

        $this->srv = new SoakRedis($this->dir);
        $this->t0 = hrtime(true);
        $ns = $this->seconds * 1_000_000_000;
        $this->cfg = [
            'port' => $this->srv->port,
            'prefix' => "soak:$rid:",
            'flockDir' => $this->dir . '/locks',
            'resources' => $resources,
            'redisTimeout' => 1.0,
            'restartGrace' => 3.0,
            'loadStart' => $this->t0,
            'warmAt' => $this->t0 + intdiv($ns, 4),
            'loadEnd' => $this->t0 + $ns,
        ];
        soak_write_atomic($this->dir . '/config.json', json_encode($this->cfg, JSON_PRETTY_PRINT | JSON_THROW_ON_ERROR));
    }

    private function startWorkers(): void
    {
        for ($w = 0; $w < $this->workers; $w++) {
            $cmd = lock_test_php_cmd('-d', 'memory_limit=256M', __DIR__ . '/worker.php',
                $this->dir, (string) $w, (string) ($this->seed * 1000 + $w));
            $log = $this->dir . "/worker-$w.log";
            $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes);
            if ($proc === false) {
                throw new RuntimeException("soak: cannot start worker $w");
            }
            $this->procs[$w] = $proc;
            $this->pids[$w] = proc_get_status($proc)['pid'];
            $this->rss[$w] = [];
            $this->fdMaxSeen[$w] = 0;
        }
        file_put_contents($this->dir . '/pids', implode("\n", $this->pids) . "\n");
    }

    /** The load phase: sample, watch, restart Redis now and then. */
    private function load(): void
    {
        $end = $this->cfg['loadEnd'];
        // Restarts leave the last stretch alone, so that every worker can show it recovered.
        $interval = max(8.0, min(30.0, $this->seconds / 6));
        $quietTail = (int) (max(6.0, $interval * 0.6) * 1e9);
        $nextRestart = $this->t0 + (int) ($interval * (0.75 + mt_rand() / mt_getrandmax() * 0.5) * 1e9);
        $nextSample = 0;
        $nextCut = $nextRestart + (int) ($interval / 2 * 1e9);
        while (!$this->interrupted && ($now = hrtime(true)) < $end) {
            if ($now >= $nextSample) {
                $this->sample($now);
                $this->watchdog($now);
                $nextSample = $now + 500_000_000;
            }
            if ($now >= $nextRestart && $now < $end - $quietTail) {
                $this->restartRedis();
                $nextRestart = hrtime(true) + (int) ($interval * (0.75 + mt_rand() / mt_getrandmax() * 0.5) * 1e9);
                $nextCut = $nextRestart - (int) ($interval / 2 * 1e9);
            }
            if ($now >= $nextCut && $now < $end - $quietTail) {
                $this->cutConnections();
                $nextCut = PHP_INT_MAX;
            }
            usleep(50000);
        }
    }

    private function sample(int $now): void
    {
        $t = ($now - $this->t0) / 1e9;
        foreach ($this->pids as $w => $pid) {
            if (isset($this->exit[$w])) {
                continue;
            }
            $kb = soak_rss_kb($pid);
            if ($kb !== null) {
                $this->rss[$w][] = [$t, $kb];
            }
            $this->fdMaxSeen[$w] = max($this->fdMaxSeen[$w], soak_fd_count($pid) ?? 0);
        }
        $this->semMax = max($this->semMax, count(soak_sem_sets()));
        try {
            $this->mon ??= new LockTestResp($this->cfg['port'], 1.0);
            if (preg_match('/^connected_clients:(\d+)/m', (string) $this->mon->ok('INFO', 'clients'), $m)) {
                // Our own monitoring connection is not the workers'.
                $this->clientsMax = max($this->clientsMax, (int) $m[1] - 1);
            }
        } catch (RuntimeException) {
            $this->mon = null; // restarting; reconnect at the next sample
        }
    }

    /** Kills a worker whose heartbeat stalled, and notes one that died before the stop. */
    private function watchdog(int $now): void
    {
        foreach ($this->procs as $w => $proc) {
            if (isset($this->exit[$w])) {
                continue;
            }
            $st = proc_get_status($proc);
            if (!$st['running']) {
                $this->exit[$w] = $st['signaled'] ? -$st['termsig'] : $st['exitcode'];
                $this->crashed[$w] = 'ended during the load with ' . $this->describeExit($this->exit[$w]);
                continue;
            }
            $status = $this->readStatus($w);
            $beat = $status['t'] ?? $this->t0;
            if (($now - $beat) / 1e9 > self::HANG_S) {
                $this->killHung($w, $status, ($now - $beat) / 1e9);
            }
        }
    }

    private function killHung(int $w, ?array $status, float $stalled): void
    {
        $pid = $this->pids[$w];
        $wchan = trim((string) @file_get_contents("/proc/$pid/wchan"));
        $stack = trim((string) @file_get_contents("/proc/$pid/stack"));
        posix_kill($pid, SIGKILL);
        $this->hung[$w] = sprintf('no heartbeat for %.0f s during "%s" (wchan %s%s); killed',
            $stalled, $status['op'] ?? '?', $wchan ?: '?', $stack !== '' ? ', kernel stack: ' . strtok($stack, "\n") : '');
        $this->exit[$w] = -SIGKILL;
    }

    private function describeExit(int $code): string
    {
        return $code < 0 ? 'signal ' . -$code : "exit code $code";
    }

    private function readStatus(int $w): ?array
    {
        $raw = @file_get_contents($this->dir . "/status-$w.json");
        return $raw === false ? null : json_decode($raw, true);
    }

    /** One restart: pending, wait for the gate, kill or stop, stay down a while, start empty. */
    private function restartRedis(): void
    {
        $n = count($this->restarts) + 1;
        soak_write_state($this->dir, $this->epoch, true);
        $t = hrtime(true);
        if (!soak_gate_exclusive($this->gateRedis, 20.0)) {
            $this->restartFailures[] = "restart $n: holders kept the Redis gate for 20 s";
            soak_write_state($this->dir, $this->epoch, false);
            return;
        }
        $gateMs = (hrtime(true) - $t) / 1e6;
        $signal = $n % 2 === 1 ? 'SIGKILL' : 'SIGTERM';
        $this->srv->end($signal === 'SIGKILL' ? SIGKILL : SIGTERM);
        $this->mon = null;
        $downMs = mt_rand(300, 1500);
        usleep($downMs * 1000);
        $this->srv->restart();
        $this->epoch++;
        soak_write_state($this->dir, $this->epoch, false);
        flock($this->gateRedis, LOCK_UN);
        $this->restarts[] = ['signal' => $signal, 'down_ms' => $downMs, 'gate_ms' => $gateMs,
            'total_ms' => (hrtime(true) - $t) / 1e6];
    }

    /**
     * Cuts every client connection (CLIENT KILL), keys kept: calls in flight may fail
     * with StorageException for restartGrace seconds (the state's time is renewed for
     * that), the next ones must reconnect, holds must survive.
     */
    private function cutConnections(): void
    {
        try {
            $this->mon ??= new LockTestResp($this->cfg['port'], 1.0);
            soak_write_state($this->dir, $this->epoch, false);
            $killed = $this->mon->ok('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
            soak_write_state($this->dir, $this->epoch, false);
            $this->cuts[] = (int) $killed;
        } catch (RuntimeException $e) {
            $this->mon = null;
            $this->restartFailures[] = 'CLIENT KILL failed: ' . $e->getMessage();
        }
    }

    private function stopWorkers(): void
    {
        touch($this->dir . '/stop');
        // The stop: each worker ends its step (the longest wait is a few seconds), settles and exits.
        $deadline = hrtime(true) + 60_000_000_000;
        while (true) {
            $running = 0;
            foreach ($this->procs as $w => $proc) {
                if ($proc === null) {
                    continue;
                }
                $st = proc_get_status($proc);
                if ($st['running']) {
                    $running++;
                    continue;
                }
                $this->exit[$w] ??= $st['signaled'] ? -$st['termsig'] : $st['exitcode'];
                proc_close($proc);
                $this->procs[$w] = null;
            }
            if ($running === 0) {
                break;
            }
            if ($this->interrupted) {
                return;
            }
            $now = hrtime(true);
            if ($now > $deadline) {
                foreach ($this->procs as $w => $proc) {
                    if ($proc !== null && !isset($this->hung[$w])) {
                        $this->killHung($w, $this->readStatus($w), ($now - $this->cfg['loadEnd']) / 1e9);
                        $this->hung[$w] = 'did not exit within 60 s of the stop: ' . $this->hung[$w];
                    }
                }
                $deadline = PHP_INT_MAX;
            }
            usleep(50000);
        }
        foreach ($this->pids as $w => $pid) {
            $this->final[$w] = $this->readStatus($w);
        }
    }

    private function killWorkers(): void
    {
        foreach ($this->procs as $w => $proc) {
            if ($proc !== null) {
                posix_kill($this->pids[$w], SIGKILL);
                proc_close($proc);
                $this->procs[$w] = null;
            }
        }
    }

    private function result(bool $ok, string $what): void
    {
        $this->results[] = $ok;
        echo $ok ? 'PASS' : 'FAIL', " soak: $what\n";
    }

    private function detail(string $line): void
    {
        echo "  $line\n";
    }

    private function workersDone(): bool
    {
        foreach ($this->final as $s) {
            if (($s['phase'] ?? '') !== 'done') {
                return false;
            }
        }
        return true;
    }

    private function checkCrashes(): void
    {
        $bad = [];
        foreach ($this->pids as $w => $pid) {
            if (isset($this->hung[$w])) {
                $bad[] = "worker $w (pid $pid): hung: {$this->hung[$w]}";
            } elseif (isset($this->crashed[$w])) {
                $bad[] = "worker $w (pid $pid): {$this->crashed[$w]}";
            } elseif (($this->exit[$w] ?? null) !== 0 || ($this->final[$w]['phase'] ?? '') !== 'done') {
                $bad[] = "worker $w (pid $pid): " . $this->describeExit($this->exit[$w] ?? -1) . ', phase ' . ($this->final[$w]['phase'] ?? '?');
            }
        }
        $this->result($bad === [], sprintf('no crash or hang (%d workers exited 0, %d killed by the watchdog)',
            $this->workers - count($bad), count($this->hung)));
        foreach ($bad as $line) {
            $this->detail($line);
            $w = (int) substr($line, 7);
            $log = trim((string) @file_get_contents($this->dir . "/worker-$w.log"));
            if ($log !== '') {
                $this->detail('  log: ' . substr($log, -1500));
            }
        }
    }

    private function sumOver(string $key): int
    {
        $n = 0;
        foreach ($this->final as $s) {
            $n += (int) ($s[$key] ?? 0);
        }
        return $n;
    }

    /** The per-key counts under $key, added up over every worker's final state. */
    private function sumMapsOver(string $key): array
    {
        $sum = [];
        foreach ($this->final as $s) {
            foreach ($s[$key] ?? [] as $k => $n) {
                $sum[$k] = ($sum[$k] ?? 0) + $n;
            }
        }
        return $sum;
    }

    private function checkLostUpdates(): void
    {
        $total = 0;
        $lost = 0;
        $phantom = 0;
        $perRes = [];
        $bad = [];
        foreach ($this->cfg['resources'] as $i => $r) {
            $sum = 0;
            foreach ($this->final as $s) {
                $sum += $s['inc'][$i] ?? 0;
            }
            $c = soak_counter_read($this->dir . "/counter-$i");
            $value = $c === null || $c[3] ? null : $c[0];
            $total += $sum;
            if ($value === null) {
                $bad[] = "{$r['name']}: counter file left torn or busy";
            } elseif ($value !== $sum) {
                $lost += max(0, $sum - $value);
                $phantom += max(0, $value - $sum);
                $bad[] = "{$r['name']}: counter $value, increments $sum (" . ($sum > $value ? 'lost ' . ($sum - $value) : 'phantom ' . ($value - $sum)) . ')';
            }
            $perRes[] = "{$r['kind']}-" . substr($r['name'], strrpos($r['name'], '-') + 1) . " $sum";
        }
        $perWorker = [];
        foreach ($this->final as $w => $s) {
            $perWorker[] = "w$w " . array_sum($s['inc'] ?? []);
        }
        $expired = 0;
        foreach ($this->final as $s) {
            $expired += array_sum($s['expired_in_cs'] ?? []);
        }
        $ok = $bad === [] && $this->workersDone();
        $this->result($ok, "lost updates $lost ($total increments" . ($phantom > 0 ? ", $phantom phantom" : '') . ')'
            . ($this->workersDone() ? '' : '; inconclusive: not every worker reported its final count'));
        $this->detail('per worker: ' . implode(', ', $perWorker) . ' (sum ' . $total . ')');
        $this->detail('per resource: ' . implode(', ', $perRes));
        if ($expired > 0) {
            $this->detail("$expired Redis holds outlived their TTL inside the read-modify-write (a stall of seconds)");
        }
        foreach ($bad as $line) {
            $this->detail($line);
        }
        $skipped = $this->sumOver('skipped_restart');
        $lostHolds = $this->sumMapsOver('verify_lost');
        ksort($lostHolds);
        $this->detail('holds not counted: found broken at the gate ' . json_encode($lostHolds)
            . ", skipped while a restart was pending $skipped; forceRelease " . $this->sumOver('force')
            . ' (' . $this->sumOver('force_skipped') . ' skipped: gate busy)');
    }

    private function checkExclusion(): void
    {
        $viol = $this->sumMapsOver('viol');
        $msgs = [];
        foreach ($this->final as $s) {
            array_push($msgs, ...($s['viol_msgs'] ?? []));
        }
        $n = array_sum($viol);
        $this->result($n === 0, "exclusion violations $n (" . $this->sumOver('reads') . ' verified read holds, '
            . 'writers checked for a writer or reader inside)');
        if ($n > 0) {
            $this->detail(json_encode($viol));
            foreach (array_slice($msgs, 0, 10) as $m) {
                $this->detail($m);
            }
        }
    }

    private function checkFencing(): void
    {
        $f = $this->sumMapsOver('fence') + ['checked' => 0, 'bad' => 0, 'cross_checked' => 0, 'cross_back' => 0, 'wrong_type' => 0];
        $msgs = [];
        foreach ($this->final as $s) {
            array_push($msgs, ...($s['fence_msgs'] ?? []));
        }
        $bad = $f['bad'] + $f['wrong_type'];
        $this->result($bad === 0, "fencing violations $bad ({$f['checked']} tokens checked against the last writer's, "
            . "{$f['wrong_type']} of the wrong type; across Redis restarts {$f['cross_checked']} checked, "
            . "{$f['cross_back']} went back)");
        foreach (array_slice($msgs, 0, 10) as $m) {
            $this->detail($m);
        }
    }

    private function checkExceptions(): void
    {
        $msgs = [];
        foreach ($this->final as $s) {
            array_push($msgs, ...($s['unexpected_msgs'] ?? []));
        }
        $n = $this->sumOver('unexpected');
        $calls = $this->sumMapsOver('calls');
        ksort($calls);
        $total = array_sum($calls);
        $this->result($n === 0, "unexpected exceptions or warnings $n ($total calls, " . $this->sumOver('ops') . ' steps)');
        foreach (array_slice($msgs, 0, 10) as $m) {
            $this->detail($m);
        }
        $byKind = [];
        foreach ($calls as $k => $c) {
            [$kind, $rest] = explode(' ', $k, 2);
            $byKind[$kind][] = "$rest $c";
        }
        foreach ($byKind as $kind => $list) {
            $this->detail("$kind: " . implode(', ', $list));
        }
        $over = [];
        foreach ($this->final as $s) {
            foreach ($s['overshoot_ms'] ?? [] as $k => $o) {
                $a = $over[$k] ?? ['max' => 0.0, 'n' => 0, 'over100' => 0];
                $over[$k] = ['max' => max($a['max'], $o['max']), 'n' => $a['n'] + $o['n'], 'over100' => $a['over100'] + $o['over100']];
            }
        }
        ksort($over);
        foreach ($this->final as $w => $s) {
            foreach ($s['slow_waits'] ?? [] as $m) {
                $this->detail("w$w: a wait that returned false late: $m");
            }
        }
        $this->detail('timed waits that returned false, overrun of their timeout: ' . implode(', ', array_map(
            static fn (string $k, array $o): string => sprintf('%s %d waits, longest %.1f ms, %d over 100 ms', $k, $o['n'], $o['max'], $o['over100']),
            array_keys($over), $over)));
    }

    private function checkStorageErrors(): void
    {
        $in = $this->sumOver('storage_in');
        $out = $this->sumOver('storage_out');
        $n = count($this->restarts);
        $ok = $out === 0 && ($n === 0 || $in > 0) && $this->restartFailures === [];
        $this->result($ok, sprintf('storage errors only around restarts and connection cuts (%d during %d restarts and %d cuts of %d connections, %d outside)',
            $in, $n, count($this->cuts), array_sum($this->cuts), $out));
        foreach ($this->final as $s) {
            foreach ($s['storage_out_msgs'] ?? [] as $m) {
                $this->detail($m);
            }
        }
        foreach ($this->restartFailures as $m) {
            $this->detail($m);
        }
        if ($n > 0) {
            $this->detail('restarts: ' . implode(', ', array_map(static fn (array $r): string => sprintf('%s down %d ms (gate %.0f ms)',
                $r['signal'], $r['down_ms'], $r['gate_ms']), $this->restarts)));
        }
    }

    private function checkRecovery(): void
    {
        $missing = [];
        for ($e = 0; $e <= $this->epoch; $e++) {
            foreach ($this->final as $w => $s) {
                if (($s['epoch_ok'][$e] ?? 0) === 0) {
                    $missing[] = "worker $w held no Redis lock " . ($e === 0 ? 'before the first restart' : "after restart $e");
                }
            }
        }
        $this->result($missing === [], sprintf('recovery after each of %d restarts (every worker held a Redis lock in each of the %d server lifetimes)',
            $this->epoch, $this->epoch + 1));
        foreach (array_slice($missing, 0, 10) as $m) {
            $this->detail($m);
        }
    }

    private function checkRss(): void
    {
        $worst = PHP_INT_MIN;
        $rows = [];
        $ok = true;
        foreach ($this->rss as $w => $samples) {
            $base = $end = null;
            foreach ($samples as [$t, $kb]) {
                $f = $t / $this->seconds;
                if ($f >= 0.125 && $f < 0.25) {
                    $base = max($base ?? 0, $kb);
                } elseif ($f >= 0.75) {
                    $end = max($end ?? 0, $kb);
                }
            }
            if ($base === null || $end === null) {
                $ok = false;
                $rows[] = "w$w: too few samples";
                continue;
            }
            $growth = $end - $base;
            $worst = max($worst, $growth);
            $ok = $ok && $growth < self::RSS_LIMIT_KB;
            $heap = isset($this->final[$w]['mem_warm'], $this->final[$w]['mem_final'])
                ? sprintf(', heap %+d B', $this->final[$w]['mem_final'] - $this->final[$w]['mem_warm']) : '';
            $rows[] = sprintf('w%d %d -> %d kB (%+d%s)', $w, $base, $end, $growth, $heap);
        }
        $this->result($ok, sprintf('RSS flat (largest growth %+d kB, limit < %d kB, from the 2nd eighth to the last quarter)',
            $worst, self::RSS_LIMIT_KB));
        $this->detail(implode(', ', $rows));
    }

    private function checkWorkerFds(): void
    {
        $ok = true;
        $rows = [];
        foreach ($this->pids as $w => $pid) {
            $warm = $this->final[$w]['fd_warm'] ?? null;
            $end = $this->final[$w]['fd_final'] ?? null;
            $ok = $ok && $warm !== null && $end !== null && $end <= $warm;
            $rows[] = sprintf('w%d %s -> %s (max seen %d)', $w, $warm ?? '?', $end ?? '?', $this->fdMaxSeen[$w]);
        }
        $this->result($ok, 'worker fds flat (after warm-up -> at the end, both settled)');
        $this->detail(implode(', ', $rows) . "; Redis clients at most {$this->clientsMax}");
    }

    /** Every resource is free once the workers are gone (Redis: after its cooldowns and TTLs). */
    private function checkStuckHolds(): void
    {
        $stores = [
            'flock' => new Lock\Store\FlockStore($this->cfg['flockDir']),
            'semaphore' => new Lock\Store\SemaphoreStore(),
            'redis' => new Lock\Store\RedisStore('redis://127.0.0.1:' . $this->cfg['port'], ['prefix' => $this->cfg['prefix']]),
        ];
        $held = [];
        $deadline = hrtime(true) + 12_000_000_000; // the longest Redis TTL the workers use is 10 s
        foreach ($this->cfg['resources'] as $r) {
            while (true) {
                try {
                    $locked = $stores[$r['kind']]->isLocked($r['name']);
                } catch (Lock\LockException $e) {
                    $held[] = "{$r['name']}: " . $e->getMessage();
                    break;
                }
                if (!$locked) {
                    break;
                }
                if ($r['kind'] !== 'redis' || hrtime(true) > $deadline) {
                    $held[] = "{$r['name']} still locked";
                    break;
                }
                usleep(100000);
            }
        }
        $this->result($held === [], sprintf('no stuck holds (%d resources free after the workers ended)',
            count($this->cfg['resources']) - count($held)));
        foreach ($held as $m) {
            $this->detail($m);
        }
    }

    private function checkRedisKeys(): void
    {
        try {
            $c = new LockTestResp($this->cfg['port'], 5.0);
            $keys = $c->keys($this->cfg['prefix']);
            $fences = 0;
            $expiring = 0;
            $leaks = [];
            foreach ($keys as $k) {
                $ttl = $c->ok('PTTL', $k);
                if (str_ends_with($k, '}:f')) {
                    $fences++;
                } elseif ($ttl >= 0 || $ttl === -2) {
                    $expiring++;
                } else {
                    $leaks[] = $k . ' (type ' . $c->ok('TYPE', $k) . ')';
                }
            }
            $c->close();
        } catch (RuntimeException $e) {
            $this->result(false, 'redis keys: ' . $e->getMessage());
            return;
        }
        $this->result($leaks === [], sprintf('redis keys leaked %d (%d left: %d fencing counters, %d expiring)',
            count($leaks), count($keys), $fences, $expiring));
        foreach (array_slice($leaks, 0, 10) as $m) {
            $this->detail($m);
        }
    }

    private function checkFlockFiles(): void
    {
        $files = array_values(array_diff(scandir($this->cfg['flockDir']), ['.', '..']));
        $n = 0;
        foreach ($this->cfg['resources'] as $r) {
            $n += $r['kind'] === 'flock' ? 1 : 0;
        }
        // At most one file per resource: an idle one is removed when its last store lets go of it.
        $ok = count($files) <= $n;
        foreach ($files as $f) {
            $ok = $ok && $f[0] !== '.';
        }
        $this->result($ok, sprintf('flock files leaked %d (%d lock files for %d resources)', max(0, count($files) - $n), count($files), $n));
        if (!$ok) {
            $this->detail(implode(', ', array_slice($files, 0, 20)));
        }
    }

    private function checkSemaphores(array $before): void
    {
        $ours = [];
        foreach ($this->cfg['resources'] as $r) {
            if ($r['kind'] === 'semaphore') {
                $ours[soak_sem_key($r['name'])] = $r['name'];
            }
        }
        $after = soak_sem_sets();
        $inUse = count(array_intersect_key($after, $ours));
        // Sets that were not there before (or were made anew) and are not the store's own sets of our resources.
        $new = array_diff_key(array_diff_assoc($after, $before), $ours);
        if ($this->ipc === 'shared') {
            // Others make sets meanwhile: a new set is a leak of ours when one of our processes used it last.
            $mine = array_flip(array_merge($this->pids, [getmypid()]));
            $new = array_filter($new, static function (int $id) use ($mine): bool {
                foreach (soak_sem_last_pids($id) as $pid) {
                    if (isset($mine[$pid])) {
                        return true;
                    }
                }
                return false;
            });
        }
        $store = new Lock\Store\SemaphoreStore();
        foreach ($ours as $name) {
            $store->forceRelease($name);
        }
        $final = soak_sem_sets();
        $left = count(array_intersect_key($final, $ours));
        $leaked = count($new) + $left;
        if ($this->ipc === 'private') {
            $ok = $leaked === 0 && $final == $before && $inUse <= count($ours);
            $this->result($ok, sprintf('semaphore sets leaked %d (before %d, max during %d, after the workers %d = the store\'s own sets of %d resources, removed by forceRelease: %d; private IPC namespace)',
                $leaked, count($before), $this->semMax, count($after), count($ours), count($final)));
        } else {
            $ok = $leaked === 0 && $inUse <= count($ours);
            $this->result($ok, sprintf('semaphore sets leaked %d (shared IPC namespace: the soak\'s own %d sets after the workers, removed by forceRelease: %d left; %d other sets last used by a soak process; whole system %d -> %d)',
                $leaked, $inUse, $left, count($new), count($before), count($final) - count($new)));
        }
        foreach (array_slice(array_keys($new), 0, 10) as $k) {
            $this->detail(sprintf('a set with key 0x%08x (semid %d) that is not the store\'s own set of a soak resource', (int) $k & 0xffffffff, $new[$k]));
        }
        // Counted; now removed, so that a failed run leaves nothing behind either.
        foreach ($new as $id) {
            shell_exec('ipcrm -s ' . (int) $id . ' 2>/dev/null');
        }
    }

    private function summary(): int
    {
        $pass = count(array_filter($this->results));
        $fail = count($this->results) - $pass;
        $ops = $this->sumOver('ops');
        printf("soak: %d passed, %d failed (%d steps in %d s, %.0f steps/s, %d Redis restarts)\n",
            $pass, $fail, $ops, $this->seconds, $ops / max(1, $this->seconds), count($this->restarts));
        return $fail === 0 ? 0 : 1;
    }
}

$o = getopt('', ['dir:', 'seconds:', 'workers:', 'seed:', 'ipc:']);
if (!isset($o['dir'], $o['seconds']) || !is_dir($o['dir'])) {
    fwrite(STDERR, "usage: soak.php --dir RUN_DIR --seconds N [--workers N] [--seed N] [--ipc private|shared]\n");
    exit(2);
}
// A warning in the driver is a bug of the soak: it must not scroll by unseen.
set_error_handler(static function (int $no, string $msg, string $file, int $line): bool {
    if ((error_reporting() & $no) === 0) {
        return false; // silenced with @ on purpose
    }
    throw new ErrorException($msg, 0, $no, $file, $line);
});
$seed = isset($o['seed']) ? (int) $o['seed'] : random_int(1, 999999);
mt_srand($seed);
exit((new SoakDriver(realpath($o['dir']), max(8, (int) $o['seconds']), max(2, (int) ($o['workers'] ?? 6)),
    $seed, ($o['ipc'] ?? 'shared') === 'private' ? 'private' : 'shared'))->main());
