<?php
/*
 * The autorefresh group (issue 23): what the extension's refreshing thread ($autoRefresh)
 * costs the PHP code beside it, and whether it keeps many holds for a long time without
 * refreshing more than it must. bench/run.sh starts it, on a redis-server of the group's own:
 *
 *   php -d extension=lock.so autorefresh.php cpu <rounds> <holds> <ttl-seconds>
 *       A fixed CPU-bound PHP loop (about LOOP_SECONDS long, sized once at the start),
 *       timed beside <holds> Redis holds of <ttl-seconds> taken without autoRefresh (the
 *       "alone" time) and beside as many taken with it, which the thread refreshes, both
 *       in each round, the order turned each round (A B, B A, ...): the process does the
 *       same before each loop and holds as many objects, so that the difference is the
 *       refreshing alone. Prints
 *       per round "cpu <round> <holds> <ttl-ms> <alone-ns> <with-ns> <refreshes>
 *       <thread-cpu-ns> <lost>": the two loop times, the refreshes made and the CPU the
 *       refreshing thread used while the loop ran with the holds, and the holds found
 *       gone at their release after it.
 *   php -d extension=lock.so autorefresh.php keep <holds> <ttl-seconds> <seconds>
 *       Takes <holds> holds of <ttl-seconds> with autoRefresh and sleeps <seconds>, while a
 *       second process (forked before anything of the extension ran in this one) asks
 *       RedisStore::isLocked() of every hold, a pass every CHECK_PASS_SECONDS. Prints
 *       "keep <holds> <ttl-ms> <window-ns> <checks> <seen-free> <scripts> <auto-refreshed>
 *       <cpu-user-us> <cpu-sys-us> <thread-cpu-ns> <server-cpu-us> <script-us> <held-at-end>":
 *       the isLocked() calls and how many found a hold free; the refresh scripts the server
 *       ran in the window (INFO commandstats: EVALSHA calls that did not fail, plus EVAL) and
 *       the holder's own count (Lock\stats() auto_refreshed); the holder's CPU in the window
 *       (getrusage: all its threads) and its refreshing thread's (/proc); the server's CPU in
 *       the window (INFO cpu, user + sys) and its time inside the refresh scripts
 *       (commandstats usec); and the holds the holder still had after the window.
 *
 * The environment gives BENCH_REDIS_PORT (the group's redis-server) and BENCH_RESOURCE
 * (a name of the run, in the keys' prefix). Anything unexpected aborts with exit 1.
 */

declare(strict_types=1);

/* The CPU-bound loop's length alone, in seconds; sized once, then fixed for the run. */
const LOOP_SECONDS = 0.5;
/* The checker starts a pass over every hold this often (seconds). */
const CHECK_PASS_SECONDS = 0.5;

/** Aborts the run with a message on stderr. */
function ar_fail(string $message): never
{
	fwrite(STDERR, "autorefresh: $message\n");
	exit(1);
}

/** The environment variable $name, which the runner must have set. */
function ar_env(string $name): string
{
	$value = getenv($name);
	if ($value === false || $value === '') {
		ar_fail("$name is not set");
	}
	return $value;
}

/** Our store on the group's server, its keys under a prefix of this run. */
function ar_store(): Lock\Store\RedisStore
{
	return new Lock\Store\RedisStore('redis://127.0.0.1:' . ar_env('BENCH_REDIS_PORT'),
		['prefix' => 'lock-bench-ar-' . ar_env('BENCH_RESOURCE') . ':']);
}

/** The name of hold $i. */
function ar_resource(int $i): string
{
	return "hold:$i";
}

/** The fixed CPU-bound work: $n rounds of arithmetic and a hash; its result, so that nothing is optimised away. */
function ar_loop(int $n): int
{
	$x = 1;
	$h = '';
	for ($i = 0; $i < $n; $i++) {
		$x = ($x * 1103515245 + 12345) & 0x7fffffff;
		if (($i & 63) === 0) {
			$h = md5($h . $x);
		}
	}
	return $x ^ strlen($h);
}

/** Times the loop of $n rounds: nanoseconds. */
function ar_time_loop(int $n): int
{
	$start = hrtime(true);
	ar_loop($n);
	return hrtime(true) - $start;
}

/** CPU time (ns) of this process's threads other than the main one: the refreshing thread's. */
function ar_thread_cpu_ns(): int
{
	$pid = getmypid();
	$ns = 0;
	foreach (scandir('/proc/self/task') ?: [] as $tid) {
		if (!ctype_digit($tid) || (int) $tid === $pid) {
			continue;
		}
		/* The time on the CPU in ns, the first field (getrusage and stat count in ticks of 10 ms). */
		$stat = @file_get_contents("/proc/self/task/$tid/schedstat");
		$ns += $stat === false ? 0 : (int) $stat;
	}
	return $ns;
}

/** This store class's auto_refreshed counter. */
function ar_auto_refreshed(): int
{
	return Lock\stats()[Lock\Store\RedisStore::class]['auto_refreshed'] ?? 0;
}

/**
 * Takes $n holds of $ttl with autoRefresh (unless $refreshed is false) on $store, evenly over a
 * third of the TTL, so that their refreshes are spread over time as those of holds taken at
 * different moments are, and the first is due as the last is taken; every one must be had.
 */
function ar_take(Lock\Store $store, int $n, float $ttl, bool $refreshed = true): array
{
	$locks = [];
	$start = hrtime(true);
	for ($i = 0; $i < $n; $i++) {
		ar_sleep_until($start + (int) ($i * $ttl * 1e9 / 3 / $n));
		$lock = new Lock\Lock(ar_resource($i), $store, $ttl, true, null, $refreshed);
		if (!$lock->acquire()) {
			ar_fail('acquire of ' . ar_resource($i) . ' failed: is another run using the prefix?');
		}
		$locks[] = $lock;
	}
	return $locks;
}

/** Releases every hold; returns how many were not held any more (a release that threw). */
function ar_release(array $locks): int
{
	$lost = 0;
	foreach ($locks as $lock) {
		try {
			$lock->release();
		} catch (Lock\ExpiredException) {
			$lost++;
		}
	}
	return $lost;
}

/** Sleeps until hrtime() reaches $until (ns). */
function ar_sleep_until(int $until): void
{
	while (($left = $until - hrtime(true)) > 0) {
		usleep((int) min(1e6, $left / 1000));
	}
}

/** A phpredis connection to the group's server, for INFO. */
function ar_phpredis(): Redis
{
	$redis = new Redis();
	if (!$redis->connect('127.0.0.1', (int) ar_env('BENCH_REDIS_PORT'), 2.0)) {
		ar_fail('phpredis cannot connect');
	}
	return $redis;
}

/** The server's refresh scripts so far ([calls, usec]) and its CPU so far (us), from INFO. */
function ar_server(Redis $redis): array
{
	$scripts = 0;
	$usec = 0;
	foreach ($redis->info('commandstats') as $name => $line) {
		if ($name !== 'cmdstat_evalsha' && $name !== 'cmdstat_eval') {
			continue;
		}
		parse_str(str_replace(',', '&', $line), $f);
		/* An EVALSHA of a script the server does not have yet fails (NOSCRIPT) and is sent again as EVAL. */
		$scripts += (int) $f['calls'] - (int) ($f['failed_calls'] ?? 0);
		$usec += (int) $f['usec'];
	}
	$cpu = $redis->info('cpu');
	return [$scripts, $usec, (int) round(((float) $cpu['used_cpu_user'] + (float) $cpu['used_cpu_sys']) * 1e6)];
}

/** The cpu mode: the loop alone and beside refreshed holds, alternating. */
function ar_cpu(int $rounds, int $holds, float $ttl): void
{
	/* Size the loop once: LOOP_SECONDS alone, measured after a warm-up. */
	ar_time_loop(200_000);
	$probe = 2_000_000;
	$n = (int) ($probe * LOOP_SECONDS * 1e9 / max(1, ar_time_loop($probe)));
	$store = ar_store();
	for ($r = 1; $r <= $rounds; $r++) {
		$alone = $with = 0;
		$refreshes = $threadCpu = $lost = 0;
		/* Odd rounds alone first, even rounds with the holds first. */
		foreach ($r % 2 ? ['alone', 'with'] : ['with', 'alone'] as $mode) {
			$start = hrtime(true);
			/* Alone: the same holds, taken the same way, without refreshing (they run out meanwhile). */
			$locks = ar_take($store, $holds, $ttl, $mode === 'with');
			ar_sleep_until($start + (int) ($ttl * 1e9 / 3));
			$refreshed = ar_auto_refreshed();
			$cpu = ar_thread_cpu_ns();
			$ns = ar_time_loop($n);
			if ($mode === 'with') {
				$with = $ns;
				$refreshes = ar_auto_refreshed() - $refreshed;
				$threadCpu = ar_thread_cpu_ns() - $cpu;
				$lost = ar_release($locks);
			} else {
				$alone = $ns;
				ar_release($locks);
			}
		}
		printf("cpu\t%d\t%d %d %d %d %d %d %d\n", $r, $holds, (int) round($ttl * 1000), $alone, $with, $refreshes,
			$threadCpu, $lost);
	}
}

/** The checker of the keep mode: isLocked() of every hold, a pass every CHECK_PASS_SECONDS, until told to stop. */
function ar_check($sock, int $holds): never
{
	if (trim((string) fgets($sock)) !== 'go') {
		exit(1);
	}
	$store = ar_store();
	stream_set_blocking($sock, false);
	$checks = $free = 0;
	while (true) {
		$pass = hrtime(true);
		for ($i = 0; $i < $holds; $i++) {
			$checks++;
			$free += $store->isLocked(ar_resource($i)) ? 0 : 1;
		}
		if (fgets($sock) !== false) {
			break;
		}
		ar_sleep_until($pass + (int) (CHECK_PASS_SECONDS * 1e9));
		if (fgets($sock) !== false) {
			break;
		}
	}
	stream_set_blocking($sock, true);
	fwrite($sock, "$checks $free\n");
	exit(0);
}

/** The keep mode: $holds holds kept by the thread for $seconds, watched by a second process. */
function ar_keep(int $holds, float $ttl, int $seconds): void
{
	/* The checker is forked before this process made a store or started the thread. */
	$pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
	$pid = pcntl_fork();
	if ($pid < 0) {
		ar_fail('cannot fork the checker');
	}
	if ($pid === 0) {
		fclose($pair[0]);
		ar_check($pair[1], $holds);
	}
	fclose($pair[1]);
	$sock = $pair[0];
	$redis = ar_phpredis();
	$store = ar_store();
	/* The window starts once every hold is taken, and their refreshing is under way. */
	$locks = ar_take($store, $holds, $ttl);
	fwrite($sock, "go\n");
	$server = ar_server($redis);
	$refreshed = ar_auto_refreshed();
	$thread = ar_thread_cpu_ns();
	$usage = getrusage();
	$start = hrtime(true);
	ar_sleep_until($start + $seconds * 1_000_000_000);
	$window = hrtime(true) - $start;
	$usage2 = getrusage();
	$thread = ar_thread_cpu_ns() - $thread;
	$refreshed = ar_auto_refreshed() - $refreshed;
	$server2 = ar_server($redis);
	fwrite($sock, "stop\n");
	$answer = fgets($sock);
	pcntl_waitpid($pid, $status);
	if ($answer === false || !preg_match('/^(\d+) (\d+)$/', trim($answer), $m) || !pcntl_wifexited($status)
		|| pcntl_wexitstatus($status) !== 0) {
		ar_fail('the checker failed');
	}
	$held = 0;
	foreach ($locks as $lock) {
		$held += $lock->isAcquired() && !$lock->isExpired() ? 1 : 0;
	}
	ar_release($locks);
	$us = static fn (array $u, string $f): int => $u["ru_$f.tv_sec"] * 1_000_000 + $u["ru_$f.tv_usec"];
	printf("keep\t%d %d %d %d %d %d %d %d %d %d %d %d %d\n", $holds, (int) round($ttl * 1000), $window,
		(int) $m[1], (int) $m[2], $server2[0] - $server[0], $refreshed,
		$us($usage2, 'utime') - $us($usage, 'utime'), $us($usage2, 'stime') - $us($usage, 'stime'), $thread,
		$server2[2] - $server[2], $server2[1] - $server[1], $held);
}

$mode = $argv[1] ?? '';
if ($mode === 'cpu' && $argc === 5 && ctype_digit($argv[2]) && ctype_digit($argv[3]) && is_numeric($argv[4])) {
	ar_cpu((int) $argv[2], (int) $argv[3], (float) $argv[4]);
} elseif ($mode === 'keep' && $argc === 5 && ctype_digit($argv[2]) && is_numeric($argv[3]) && ctype_digit($argv[4])) {
	ar_keep((int) $argv[2], (float) $argv[3], (int) $argv[4]);
} else {
	ar_fail('usage: autorefresh.php cpu <rounds> <holds> <ttl-seconds> | keep <holds> <ttl-seconds> <seconds>');
}
