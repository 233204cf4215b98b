<?php
/*
 * The waiting contenders of the benchmark (groups handoff and contention), loaded
 * by worker.php: blocking acquires of ours and of Symfony's, between processes of
 * their own. Each contender forks its partners once at start-up; every partner
 * builds its own store and connection after the fork.
 *
 * handoff.<store>.<who>: the worker (the holder) and one forked waiter. Per
 * handoff the holder holds the lock, tells the waiter to go; the waiter says it is
 * about to wait and calls a blocking acquire; the holder waits until the waiter
 * sleeps in the kernel, pauses a random 1 ms .. BENCH_HANDOFF_DELAY_MS more (so the
 * release falls at a random phase of a waiter that polls), reads hrtime() and
 * releases. The waiter reads hrtime() when its acquire returns, releases, and sends
 * that time back. hrtime() is CLOCK_MONOTONIC, one clock for every process of the
 * machine, so the difference is the handoff latency.
 *
 * contend.<store>.<who>: the worker coordinates CONTENDERS forked processes. For
 * a slice it gives them a common start and end; each then loops: blocking acquire,
 * hold for HOLD_NS (busy-waiting on hrtime(), so the hold is exactly that long and
 * counts as work), release, then OTHER_US of other work (usleep, like I/O, leaving
 * the CPUs to the holder and the woken waiter). Each reports its count, the time it
 * held the lock (from acquire() returning to release() being called, cut at the
 * end), its longest wait (from the call to acquire() to its return) and, for each
 * hold, when acquire() was called, returned and when release() was called; the
 * worker merges the holds to check that no two overlapped. When BENCH_WAITS_DIR is
 * set, the worker also appends each slice's waits to BENCH_WAITS_DIR/<name>.waits,
 * one line per process: "<slice> <process> <returned> <wait> <returned> <wait> ..."
 * (ns; the return counted from the slice's start), for bench/chart.php.
 */

declare(strict_types=1);

use Symfony\Component\Lock\LockFactory as SfFactory;

/* Processes contending in the contention group, and what each does per cycle. */
const CONTENDERS = 8;
const HOLD_NS = 1_000_000;
const OTHER_US = 1000;
/* Longest a blocking acquire of ours may wait before the run is declared broken (s). */
const WAIT_LIMIT = 60.0;

/**
 * A blocking lock on $resource for a waiting contender, built in the calling
 * process: [acquire (blocking, aborts when not had), release, clean-up]; $waiter
 * for the waiting side of a handoff (only Drupal's wait() differs).
 */
function bench_waiting_lock(string $group, string $who, string $resource, bool $waiter = false): array
{
	if (bench_is_framework($who)) {
		if ($group !== 'redis') {
			bench_fail("$who is for redis only");
		}
		return bench_framework_waiting_lock($who, $resource, $waiter);
	}
	if ($group === 'redlock' || $who === 'ours' || $who === 'ours-unfair') {
		if ($who === 'ours-unfair' && $group !== 'redis') {
			bench_fail("$who is for redis only");
		}
		$store = $group === 'redlock'
			? bench_redlock_store(str_starts_with($who, 'ours-') ? substr($who, 5) : $who)
			: bench_our_store($group, $who === 'ours');
		$lock = (new Lock\Factory($store))->createLock($resource);
		return [
			static function () use ($lock): void {
				if (!$lock->acquire(true, WAIT_LIMIT)) {
					bench_fail('blocking acquire not done within ' . WAIT_LIMIT . ' s');
				}
			},
			static fn () => $lock->release(),
			static fn () => $store->forceRelease($resource),
		];
	}
	if ($who === 'floor' && ($group === 'redis' || $group === 'flock' || $group === 'sem')) {
		return bench_bare_waiting_lock($group, $resource);
	}
	if ($who === 'floor') {
		// The bare primitive's own wait: pg_advisory_lock() or GET_LOCK(), woken by the server's lock queue.
		[$take, $give, $close] = bench_db_floor($group, $resource);
		return [
			static function () use ($take): void {
				if (!$take(true)) {
					bench_fail('the bare primitive did not take the lock');
				}
			},
			$give,
			$close,
		];
	}
	if ($who !== 'symfony') {
		bench_fail("unknown contender kind $who");
	}
	bench_symfony();
	$lock = (new SfFactory(bench_symfony_store($group)))->createLock($resource);
	return [
		/* Symfony 5.4 has no timeout: it returns true or throws. */
		static fn () => $lock->acquire(true),
		static fn () => $lock->release(),
		static fn () => null,
	];
}

/**
 * The bare primitive's own wait, as bench_waiting_lock's triple: Redis, a token
 * passed through a list (BLPOP takes it, RPUSH gives it back: the server wakes
 * the waiter that blocked first); flock, flock(LOCK_EX) on a file opened once;
 * sem, sem_acquire() on a set got once. The token and the set are made by
 * bench_bare_setup before the processes fork.
 */
function bench_bare_waiting_lock(string $group, string $resource): array
{
	if ($group === 'redis') {
		$redis = bench_phpredis();
		$list = bench_bare_name($resource);
		return [
			static function () use ($redis, $list): void {
				if ($redis->blPop([$list], (int) ceil(WAIT_LIMIT)) === []) {
					bench_fail('the token did not come within ' . WAIT_LIMIT . ' s');
				}
			},
			static fn () => $redis->rPush($list, 't'),
			static fn () => null,
		];
	}
	if ($group === 'flock') {
		$fp = fopen(bench_env('BENCH_DIR') . '/' . bench_bare_name($resource), 'c');
		if ($fp === false) {
			bench_fail('cannot open the floor\'s lock file');
		}
		return [
			static function () use ($fp): void {
				if (!flock($fp, LOCK_EX)) {
					bench_fail('flock(LOCK_EX) failed');
				}
			},
			static fn () => flock($fp, LOCK_UN),
			static fn () => fclose($fp),
		];
	}
	$sem = sem_get(bench_bare_key($resource), 1, 0600, false);
	if ($sem === false) {
		bench_fail('sem_get failed');
	}
	return [
		static function () use ($sem): void {
			if (!sem_acquire($sem)) {
				bench_fail('sem_acquire failed');
			}
		},
		static fn () => sem_release($sem),
		static fn () => null,
	];
}

/** The floor's list or file name for $resource. */
function bench_bare_name(string $resource): string
{
	return 'floor-' . hash('crc32b', $resource);
}

/** The floor's semaphore key for $resource. */
function bench_bare_key(string $resource): int
{
	return 0x10000000 | (crc32("floor:$resource") & 0x0fffffff);
}

/** Before a floor's processes fork: one token in the Redis list; returns what undoes it after they end. */
function bench_bare_setup(string $group, string $resource): callable
{
	if ($group === 'redis') {
		$redis = bench_phpredis();
		$list = bench_bare_name($resource);
		$redis->del($list);
		$redis->rPush($list, 't');
		/* Closed before the fork: no child may share the connection. */
		$redis->close();
		return static fn () => bench_phpredis()->del($list);
	}
	if ($group === 'sem') {
		return static function () use ($resource): void {
			$sem = sem_get(bench_bare_key($resource), 1, 0600, false);
			if ($sem !== false) {
				sem_remove($sem);
			}
		};
	}
	return static fn () => @unlink(bench_env('BENCH_DIR') . '/' . bench_bare_name($resource));
}

/** Whether process $pid sleeps in the kernel (state S or D), i.e. is blocked. */
function bench_blocked(int $pid): bool
{
	$stat = @file_get_contents("/proc/$pid/stat");
	if ($stat === false) {
		bench_fail("process $pid is gone");
	}
	/* The state follows the command name, which is in parentheses. */
	$state = $stat[(int) strrpos($stat, ')') + 2] ?? '';
	return $state === 'S' || $state === 'D';
}

/** Reads one line from a partner's socket; the partner's death aborts the run. */
function bench_read($sock, string $who): string
{
	$line = fgets($sock);
	if ($line === false) {
		bench_fail("$who stopped answering");
	}
	return rtrim($line, "\n");
}

/** Forks a partner that runs $body with its end of a socket pair; returns [pid, our end]. */
function bench_fork(callable $body): array
{
	/* Our ends of the partners forked before: a partner must not keep them open, or its siblings never see EOF. */
	static $ours = [];

	$pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
	if ($pair === false) {
		bench_fail('cannot make a socket pair');
	}
	$pid = pcntl_fork();
	if ($pid < 0) {
		bench_fail('cannot fork');
	}
	if ($pid === 0) {
		foreach ([...$ours, $pair[0]] as $end) {
			fclose($end);
		}
		$body($pair[1]);
		exit(0);
	}
	fclose($pair[1]);
	$ours[] = $pair[0];
	return [$pid, $pair[0]];
}

/** The waiter of the handoff contender: acquires when told, reports when it got the lock. */
function bench_handoff_waiter($sock, string $group, string $who, string $resource): void
{
	[$acquire, $release, $cleanup] = bench_waiting_lock($group, $who, $resource, true);
	while (($line = fgets($sock)) !== false && trim($line) === 'go') {
		fwrite($sock, "w\n");
		$acquire();
		$got = hrtime(true);
		$release();
		fwrite($sock, "$got\n");
	}
	$cleanup();
}

/** Runs $n handoffs to the waiter (pid, socket) and returns their latencies in ns. */
function bench_handoffs(callable $acquire, callable $release, int $pid, $sock, int $n, int $maxDelayUs): array
{
	$latencies = [];
	for ($i = 0; $i < $n; $i++) {
		/* The waiter released before it reported, so this does not wait. */
		$acquire();
		fwrite($sock, "go\n");
		if (bench_read($sock, 'the waiter') !== 'w') {
			bench_fail('the waiter is out of step');
		}
		while (!bench_blocked($pid)) {
			usleep(50);
		}
		usleep(random_int(1000, max(1000, $maxDelayUs)));
		$released = hrtime(true);
		$release();
		$latencies[] = (int) bench_read($sock, 'the waiter') - $released;
	}
	return $latencies;
}

/**
 * One process of the contention contender: for each "go <start> <end>" it runs
 * cycles from start to end and reports "<count> <held> <longest-wait>", then
 * "<called> <returned> <released>" of each hold.
 */
function bench_contender_loop($sock, string $group, string $who, string $resource): void
{
	[$acquire, $release, $cleanup] = bench_waiting_lock($group, $who, $resource);
	while (($line = fgets($sock)) !== false) {
		$cmd = explode(' ', trim($line));
		if ($cmd[0] !== 'go') {
			break;
		}
		[, $start, $end] = array_map('intval', $cmd);
		$wait = $start - hrtime(true);
		if ($wait > 0) {
			usleep(intdiv($wait, 1000));
		}
		$count = 0;
		$held = 0;
		$longest = 0;
		$holds = [];
		while (($called = hrtime(true)) < $end) {
			$acquire();
			$got = hrtime(true);
			$longest = max($longest, $got - $called);
			if ($got >= $end) {
				$release();
				break;
			}
			$until = $got + HOLD_NS;
			while (hrtime(true) < $until) {
				/* Busy: the hold is work, exactly HOLD_NS long. */
			}
			$done = hrtime(true);
			$release();
			$count++;
			$held += min($done, $end) - $got;
			array_push($holds, $called, $got, $done);
			usleep(OTHER_US);
		}
		fwrite($sock, "$count $held $longest " . implode(' ', $holds) . "\n");
	}
	$cleanup();
}

/**
 * Runs one contention slice of $seconds over the partners; returns the summary line.
 * With $waits, appends each process's waits to that file as slice number $slice.
 */
function bench_contend(array $partners, float $seconds, ?string $waits = null, int $slice = 0): string
{
	/* A common start shortly ahead, so that every process is ready for it. */
	$start = hrtime(true) + 50_000_000;
	$end = $start + (int) ($seconds * 1e9);
	foreach ($partners as [, $sock]) {
		fwrite($sock, "go $start $end\n");
	}
	$held = 0;
	$longest = 0;
	$counts = [];
	$intervals = [];
	$lines = '';
	foreach ($partners as $i => [, $sock]) {
		$f = array_map('intval', explode(' ', bench_read($sock, "contender $i")));
		$counts[] = $f[0];
		$held += $f[1];
		$longest = max($longest, $f[2]);
		$line = "$slice $i";
		for ($k = 3; $k + 2 < count($f); $k += 3) {
			$intervals[] = [$f[$k + 1], $f[$k + 2]];
			$line .= ' ' . ($f[$k + 1] - $start) . ' ' . ($f[$k + 1] - $f[$k]);
		}
		$lines .= "$line\n";
	}
	if ($waits !== null && file_put_contents($waits, $lines, FILE_APPEND) === false) {
		bench_fail("cannot write $waits");
	}
	/* Mutual exclusion, seen from the clock: sorted by start, no hold may begin before the last one ended. */
	usort($intervals, static fn ($a, $b) => $a[0] <=> $b[0]);
	$overlaps = 0;
	$lastEnd = 0;
	foreach ($intervals as [$from, $to]) {
		if ($from < $lastEnd) {
			$overlaps++;
		}
		$lastEnd = max($lastEnd, $to);
	}
	return sprintf('%d %d %d %d %s', $end - $start, $held, $longest, $overlaps, implode(' ', $counts));
}

/** Serves a waiting contender: warms up, prints "ready", then answers the runner's commands. */
function bench_waiting_serve(string $name, string $resource, float $warmup): void
{
	$parts = explode('.', $name);
	if (count($parts) !== 3 || !in_array($parts[1], ['redis', 'flock', 'sem', 'pgsql', 'mysql', 'redlock'], true)) {
		bench_fail("unknown contender $name");
	}
	[$kind, $group, $who] = $parts;
	$unset = $who === 'floor' && in_array($group, ['redis', 'flock', 'sem'], true)
		? bench_bare_setup($group, $resource) : static fn () => null;
	/* Loaded before the fork, so that the partners share the work of loading it. */
	if ($who === 'symfony') {
		bench_symfony();
	} elseif (bench_is_framework($who)) {
		bench_framework_load(bench_framework_install($who));
	}
	if ($kind === 'handoff') {
		$maxDelayUs = (int) ((float) (getenv('BENCH_HANDOFF_DELAY_MS') ?: '110') * 1000);
		[$pid, $sock] = bench_fork(static fn ($s) => bench_handoff_waiter($s, $group, $who, $resource));
		[$acquire, $release, $cleanup] = bench_waiting_lock($group, $who, $resource);
		bench_handoffs($acquire, $release, $pid, $sock, max(1, (int) $warmup), $maxDelayUs);
		echo "ready\n";
		while (($line = fgets(STDIN)) !== false) {
			$cmd = explode(' ', trim($line));
			if ($cmd[0] === 'quit') {
				break;
			}
			if ($cmd[0] !== 'handoff' || !isset($cmd[1])) {
				bench_fail('unknown command ' . trim($line));
			}
			/* One handoff first, unmeasured: the pair sat idle while the others ran. */
			bench_handoffs($acquire, $release, $pid, $sock, 1, $maxDelayUs);
			echo implode(' ', bench_handoffs($acquire, $release, $pid, $sock, (int) $cmd[1], $maxDelayUs)), "\n";
		}
		fclose($sock);
		pcntl_waitpid($pid, $status);
		$cleanup();
		$unset();
		return;
	}
	if ($kind !== 'contend') {
		bench_fail("unknown contender $name");
	}
	$partners = [];
	for ($i = 0; $i < CONTENDERS; $i++) {
		$partners[] = bench_fork(static fn ($s) => bench_contender_loop($s, $group, $who, $resource));
	}
	bench_contend($partners, $warmup);
	$dir = getenv('BENCH_WAITS_DIR');
	$waits = $dir === false || $dir === '' ? null : "$dir/$name.waits";
	$slice = 0;
	echo "ready\n";
	while (($line = fgets(STDIN)) !== false) {
		$cmd = explode(' ', trim($line));
		if ($cmd[0] === 'quit') {
			break;
		}
		if ($cmd[0] !== 'contend' || !isset($cmd[1])) {
			bench_fail('unknown command ' . trim($line));
		}
		echo bench_contend($partners, (float) $cmd[1], $waits, ++$slice), "\n";
	}
	foreach ($partners as [$pid, $sock]) {
		fclose($sock);
		pcntl_waitpid($pid, $status);
	}
	$unset();
}
