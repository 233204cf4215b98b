<?php
/*
 * Turns bench/run.sh's raw measurements into the results table: the median rate
 * of each contender over the rounds, our figure against the peer's, the median of
 * the per-round ratios and the verdict against issue 2 and 4's targets; the handoff
 * latencies and contention figures against issue 3's; the autorefresh group's (a
 * CPU-bound loop beside refreshed holds, 1,000 holds kept) against issue 23's. Exits 1
 * when a target is missed.
 *
 *   php report.php <raw.tsv> <header text>
 */

declare(strict_types=1);

/* Rate comparisons: group, what, ours, peer, target ratio (null: for information). */
const COMPARISONS = [
	['redis', 'vs Symfony RedisStore, lock reused', 'redis.ours', 'redis.symfony', 1.8],
	['redis', 'vs phpredis SET NX PX + EVALSHA', 'redis.ours', 'redis.phpredis', 0.95],
	['redis', 'vs Symfony, createLock per cycle', 'redis.ours-new', 'redis.symfony-new', null],
	['read', 'redis: acquireRead vs Symfony RedisStore', 'redis.ours-read', 'redis.symfony-read', 1.8],
	['read', 'flock: acquireRead vs Symfony FlockStore', 'flock.ours-read', 'flock.symfony-read', 4.0],
	['flock', 'vs PHP flock() LOCK_EX|LOCK_NB + LOCK_UN (the floor)', 'flock.ours', 'flock.floor', 0.9],
	['flock', 'vs Symfony FlockStore, lock reused', 'flock.ours', 'flock.symfony', 4.0],
	['flock', 'vs Symfony, createLock per cycle', 'flock.ours-new', 'flock.symfony-new', null],
	['sem', 'vs PHP sem_acquire() + sem_release() (the floor)', 'sem.ours', 'sem.floor', 0.9],
	['sem', 'vs Symfony SemaphoreStore, lock reused', 'sem.ours', 'sem.symfony', 5.0],
	['sem', 'vs Symfony, createLock per cycle', 'sem.ours-new', 'sem.symfony-new', null],
	['topology', 'TLS: vs phpredis over TLS, SET NX PX + EVALSHA', 'tls.ours', 'tls.phpredis', 0.95],
	['topology', 'TLS vs plain TCP (for information)', 'tls.ours', 'redis.ours', null],
	['topology', 'replicas => 1 (WAIT 1) vs the same master without', 'primary.ours-replicas', 'primary.ours', null],
	['topology', 'Sentinel vs the same master by address', 'sentinel.ours', 'primary.ours', 0.9],
	['topology', 'Cluster vs the master of the slot by address', 'cluster.ours', 'cluster.ours-direct', 0.9],
	// --- MemcachedStore (issue 13) ---
	['memcached', 'vs Symfony MemcachedStore, lock reused', 'memcached.ours', 'memcached.symfony', 1.5],
	['memcached', 'vs Symfony, createLock per cycle', 'memcached.ours-new', 'memcached.symfony-new', null],
	// --- end MemcachedStore ---
	['pgsql', 'vs pg_try_advisory_lock + pg_advisory_unlock (the floor)', 'pgsql.ours', 'pgsql.floor', null],
	['pgsql', 'vs Symfony PostgreSqlStore, lock reused', 'pgsql.ours', 'pgsql.symfony', 1.5],
	['pgsql', 'vs Symfony, createLock per cycle', 'pgsql.ours-new', 'pgsql.symfony-new', null],
	['pgsql', 'holds => table vs Symfony PostgreSqlStore (for information)', 'pgsql.ours-table', 'pgsql.symfony', null],
	['mysql', 'vs GET_LOCK(name, 0) + RELEASE_LOCK (the floor)', 'mysql.ours', 'mysql.floor', null],
	['mysql', 'holds => table vs Symfony PdoStore on MariaDB, lock reused', 'mysql.ours-table', 'mysql.symfony', 1.5],
	['mysql', 'session holds vs Symfony PdoStore (for information)', 'mysql.ours', 'mysql.symfony', null],
	['mysql', 'vs Symfony, createLock per cycle', 'mysql.ours-new', 'mysql.symfony-new', null],
	['frameworks', 'Symfony 7.4 LockFactory: the adapter vs Symfony RedisStore', 'redis.sf-ours', 'redis.sf-own', 1.5],
	// Both cycles are the same two round trips: the goal is our overhead, as for the Redis floor (issue 21).
	['frameworks', 'Laravel 12 Cache::lock(): the adapter vs RedisLock', 'redis.lv-ours', 'redis.lv-own', 0.95],
];

/*
 * Costs of the redlock group: group, what, contender, base, the most times the base's cost
 * that the contender's cycle may cost (null: for information). The ratio is the median over
 * the rounds of base rate / contender rate within the round: what one cycle costs, in
 * cycles of the base (lower is better), paired by round as the rates are.
 */
const COSTS = [
	['redlock', 'CombinedStore of 3 servers vs one RedisStore', 'redlock.ours-three', 'redlock.ours-one', 1.3],
	['redlock', 'CombinedStore of 5 servers vs one RedisStore', 'redlock.ours-five', 'redlock.ours-one', 1.5],
	['redlock', 'over a 2 ms network: CombinedStore of 3 vs one RedisStore', 'redlock.ours-three-net', 'redlock.ours-one-net', 1.3],
	['redlock', 'over a 2 ms network: CombinedStore of 5 vs one RedisStore', 'redlock.ours-five-net', 'redlock.ours-one-net', 1.5],
	['redlock', 'the bare fan over 3 servers vs over one (the floor)', 'redlock.floor-three', 'redlock.floor-one', null],
	['redlock', 'the bare fan over 5 servers vs over one (the floor)', 'redlock.floor-five', 'redlock.floor-one', null],
	['redlock', 'CombinedStore of 3 vs the bare fan over 3', 'redlock.ours-three', 'redlock.floor-three', null],
	['redlock', 'CombinedStore of 5 vs the bare fan over 5', 'redlock.ours-five', 'redlock.floor-five', null],
	['redlock', 'CombinedStore of 3 vs Symfony CombinedStore of 3 RedisStores', 'redlock.ours-three', 'redlock.symfony-three', null],
	['redlock', 'Symfony: CombinedStore of 3 vs its RedisStore on one', 'redlock.symfony-three', 'redlock.symfony-one', null],
	['redlock', 'CombinedStore of 3, one 50 ms slower, vs all 3 fast', 'redlock.ours-slow', 'redlock.ours-three', null],
];

/*
 * One member of three 50 ms slower: the cycle against what the combined store promises, its
 * all-fast cycle of the same round plus, for each of the two calls, the grace the slower
 * member gets once the majority answered (the time the call took so far, half the all-fast
 * cycle, but at least 1 ms and at most 5 ms): contender, all-fast contender, the most
 * times that bound the cycle may cost.
 */
const SLOW_MEMBER = ['redlock.ours-slow', 'redlock.ours-three', 1.25];
const GRACE_MIN_NS = 1_000_000;
const GRACE_MAX_NS = 5_000_000;

/*
 * Handoff through a framework's own blocking call over its adapter: label,
 * contender; the p50 must stay within this many times the extension's own
 * handoff (handoff.redis.ours) of the same rounds.
 */
const FRAMEWORK_HANDOFF = [
	['Symfony acquire(true)', 'handoff.redis.sf-ours'],
	['Laravel block()', 'handoff.redis.lv-ours'],
	['Yii 2 acquire($name, $timeout)', 'handoff.redis.yii2-ours'],
	['Drupal wait()', 'handoff.redis.drupal-ours'],
];
const FRAMEWORK_HANDOFF_RATIO = 1.5;
/* The framework's own driver, for information: Laravel's RedisLock block() sleeps 250 ms between tries. */
const FRAMEWORK_HANDOFF_OWN = [['Laravel RedisLock block()', 'handoff.redis.lv-own']];

/*
 * Handoff against the bare primitive's own waiter, woken by the same release: label, ours,
 * the floor, and the most ours' p50 may be, as times the floor's (paired by round).
 */
const FLOOR_HANDOFF = [
	['redis: vs a bare token, RPUSH -> BLPOP', 'handoff.redis.ours', 'handoff.redis.floor', 1.3],
	['flock: vs a waiter blocked in flock(LOCK_EX)', 'handoff.flock.ours', 'handoff.flock.floor', 1.5],
	['sem: vs a waiter blocked in sem_acquire()', 'handoff.sem.ours', 'handoff.sem.floor', 1.5],
	['pgsql: vs a bare pg_advisory_lock() waiter', 'handoff.pgsql.ours', 'handoff.pgsql.floor', 1.5],
	['mysql: vs a bare GET_LOCK() waiter', 'handoff.mysql.ours', 'handoff.mysql.floor', 1.5],
	// Not a floor: the same hand-off over one server, what the combined store's hand-off adds to it (null: for information).
	['redlock: CombinedStore of 3 vs one RedisStore', 'handoff.redlock.ours-three', 'handoff.redlock.ours-one', 2.0],
	['redlock: CombinedStore of 5 vs one RedisStore', 'handoff.redlock.ours-five', 'handoff.redlock.ours-one', null],
	['redlock over a 2 ms network: CombinedStore of 3 vs one RedisStore', 'handoff.redlock.ours-three-net', 'handoff.redlock.ours-one-net', 2.0],
];

/* Memory runs: contender, label; growth must stay under this many kB. */
const MEMORY = [
	['flock.ours', 'flock'],
	['redis.ours', 'redis'],
];
const MEMORY_LIMIT_KB = 1024;

/* Distinct names: the last 10,000 names' rate against the first 10,000's. */
const DISTINCT_RATIO = 0.9;

/*
 * Handoff latency: store, ours, peer, targets for p50 and p99 in ms (null: for
 * information). The latencies of all rounds are pooled for the percentiles.
 */
const HANDOFF = [
	['redis', 'handoff.redis.ours', 'handoff.redis.symfony', 0.5, 2.0],
	['redis, fair => false', 'handoff.redis.ours-unfair', 'handoff.redis.symfony', null, null],
	['flock', 'handoff.flock.ours', 'handoff.flock.symfony', 0.2, null],
	['sem', 'handoff.sem.ours', 'handoff.sem.symfony', 0.2, null],
	['pgsql', 'handoff.pgsql.ours', 'handoff.pgsql.symfony', null, null],
	['mysql', 'handoff.mysql.ours', 'handoff.mysql.symfony', null, null],
];

/*
 * Contention: store, ours, peer, target utilisation (%), longest wait (ms) and
 * largest deviation of a process's count from the average (%); null: for information.
 */
const CONTENTION = [
	['redis', 'contend.redis.ours', 'contend.redis.symfony', 90.0, 3 * 8 * 1.0, 10.0],
	['redis, fair => false', 'contend.redis.ours-unfair', 'contend.redis.symfony', null, null, null],
	['flock', 'contend.flock.ours', 'contend.flock.symfony', 90.0, 3 * 8 * 1.0 + 2.0, 10.0],
	['sem', 'contend.sem.ours', 'contend.sem.symfony', 90.0, 3 * 8 * 1.0 + 2.0, 10.0],
];

/*
 * Contention against the bare primitive passed between the same 8 processes: store,
 * ours, the floor, the most points ours' utilisation may fall below the floor's (null:
 * for information).
 */
const FLOOR_CONTENTION = [
	['redis', 'contend.redis.ours', 'contend.redis.floor', 3.0],
	['flock', 'contend.flock.ours', 'contend.flock.floor', null],
	['sem', 'contend.sem.ours', 'contend.sem.floor', null],
];

/*
 * The autorefresh group (issue 23): the CPU-bound loop beside holds that the extension's
 * thread refreshes runs at least this many times its speed alone (the median over the
 * rounds of the two timings of a round); and the thread refreshes each hold between these
 * many times per TTL (one every third of it, not more: the ends leave room for the window's
 * edges and a thread that is a little late).
 */
const AUTOREFRESH_SPEED = 0.98;
const AUTOREFRESH_PER_TTL = [2.7, 3.05];

/* A contender whose rounds differ by more than this (percent of its median) ran on a busy machine. */
const NOISY_SPREAD = 25;

/** The median of a non-empty list of numbers. */
function median(array $values): float
{
	sort($values);
	$n = count($values);
	$mid = intdiv($n, 2);
	return $n % 2 ? (float) $values[$mid] : ($values[$mid - 1] + $values[$mid]) / 2;
}

/** The upper quartile of a non-empty list of numbers (nearest rank). */
function upper_quartile(array $values): float
{
	sort($values);
	return (float) $values[(int) ceil(0.75 * count($values)) - 1];
}

/** The p-th percentile (0-100) of a non-empty list of numbers (nearest rank). */
function percentile(array $values, float $p): float
{
	sort($values);
	return (float) $values[max(0, (int) ceil($p / 100 * count($values)) - 1)];
}

/** A duration given in ns as milliseconds, with three significant decimals below 1 ms. */
function ms(float $ns): string
{
	$ms = $ns / 1e6;
	return $ms < 1 ? sprintf('%.3f ms', $ms) : ($ms < 100 ? sprintf('%.2f ms', $ms) : sprintf('%.0f ms', $ms));
}

/** "x.xxx" for how many times better ours is ($better / $worse), or "-" when it cannot be said. */
function times(float $better, float $worse): string
{
	return $worse > 0 ? sprintf('%.2fx', $better / $worse) : '-';
}

/** A rate as "12,345/s". */
function rate(float $rate): string
{
	return number_format($rate) . '/s';
}

if ($argc !== 3) {
	fwrite(STDERR, "usage: report.php <raw.tsv> <header>\n");
	exit(2);
}
$rates = [];
$memory = [];
/* contender => round => list of latencies (ns) */
$handoffs = [];
/* contender => round => [wall, held, longest wait, overlaps, counts] (ns, counts) */
$contention = [];
/* store => names, rates of the first and last 10,000, what was left and what may be */
$distinct = [];
/* The autorefresh group: round => the loop's figures; the keep run's figures; the CPUs it was pinned to. */
$autoCpu = [];
$autoKeep = null;
$autoCpus = '-';
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
	$f = explode("\t", $line);
	if ($f[0] === 'rate') {
		$rates[$f[1]][(int) $f[2]] = (float) $f[3];
	} elseif ($f[0] === 'mem') {
		$memory[$f[1]] = ['cycles' => (int) $f[2], 'before' => (int) $f[3], 'after' => (int) $f[4]];
	} elseif ($f[0] === 'handoff') {
		$handoffs[$f[1]][(int) $f[2]] = array_map('intval', explode(' ', $f[3]));
	} elseif ($f[0] === 'distinct') {
		[$n, $first, $last, $left, $allowed] = explode(' ', $f[2]);
		$distinct[$f[1]] = ['names' => (int) $n, 'first' => (float) $first, 'last' => (float) $last,
			'left' => (int) $left, 'allowed' => (int) $allowed, 'what' => implode(' ', array_slice(explode(' ', $f[2]), 5))];
	} elseif ($f[0] === 'autorefresh' && $f[1] === 'cpu') {
		$autoCpu[(int) $f[2]] = array_combine(['holds', 'ttl_ms', 'alone', 'with', 'refreshes', 'thread', 'lost'],
			array_map('intval', explode(' ', $f[3])));
	} elseif ($f[0] === 'autorefresh' && $f[1] === 'keep') {
		$autoKeep = array_combine(['holds', 'ttl_ms', 'window', 'checks', 'free', 'scripts', 'refreshed', 'user_us',
			'sys_us', 'thread', 'server_us', 'script_us', 'held'], array_map('intval', explode(' ', $f[2])));
	} elseif ($f[0] === 'autorefresh' && $f[1] === 'cpus') {
		$autoCpus = $f[2];
	} elseif ($f[0] === 'contend') {
		$v = array_map('intval', explode(' ', $f[3]));
		$contention[$f[1]][(int) $f[2]] = [$v[0], $v[1], $v[2], $v[3], array_slice($v, 4)];
	}
}

$rows = [['group', 'measurement', 'ours', 'peer', 'ratio', 'target', 'result']];
$failed = 0;
$pairs = [];
$costs = [];
foreach (COMPARISONS as [$group, $what, $ours, $peer, $target]) {
	if (!isset($rates[$ours], $rates[$peer])) {
		continue;
	}
	$a = median($rates[$ours]);
	$b = median($rates[$peer]);
	/*
	 * The ratio pairs the two slices of each round, which ran within a second of each
	 * other, so load that comes and goes between rounds cancels out; a ratio of the
	 * medians would not, when the load shifts the rates of a whole run of rounds.
	 */
	$paired = [];
	foreach ($rates[$ours] as $round => $rate) {
		if (isset($rates[$peer][$round])) {
			$paired[$round] = $rate / $rates[$peer][$round];
		}
	}
	ksort($paired);
	$ratio = median($paired);
	$pairs[] = [$ours, $peer, $paired];
	if ($target === null) {
		$verdict = 'info';
	} elseif ($ratio >= $target) {
		$verdict = 'PASS';
	} else {
		$verdict = 'FAIL';
		$failed++;
	}
	$rows[] = [$group, $what, rate($a), rate($b), sprintf('%.2fx', $ratio),
		$target === null ? '-' : sprintf('>= %.2fx', $target), $verdict];
}
/** Adds a table row for a figure of ours beside the peer's, with its verdict against $ok (null: for information). */
$addRow = static function (string $group, string $what, string $ours, string $peer, string $ratio, string $target, ?bool $ok)
	use (&$rows, &$failed): void {
	if ($ok === false) {
		$failed++;
	}
	$rows[] = [$group, $what, $ours, $peer, $ratio, $target, $ok === null ? 'info' : ($ok ? 'PASS' : 'FAIL')];
};

/* The costs of a cycle, as times per cycle: the medians' reciprocals. */
foreach (COSTS as [$group, $what, $contender, $base, $most]) {
	if (!isset($rates[$contender], $rates[$base])) {
		continue;
	}
	$paired = [];
	foreach ($rates[$contender] as $round => $rate) {
		if (isset($rates[$base][$round])) {
			$paired[$round] = $rates[$base][$round] / $rate;
		}
	}
	ksort($paired);
	$ratio = median($paired);
	$costs[] = [$contender, $base, $paired];
	$addRow($group, "$what: cost of a cycle", ms(1e9 / median($rates[$contender])), ms(1e9 / median($rates[$base])),
		sprintf('%.2fx', $ratio), $most === null ? '-' : sprintf('<= %.2fx', $most), $most === null ? null : $ratio <= $most);
}
[$slow, $fast, $most] = SLOW_MEMBER;
if (isset($rates[$slow], $rates[$fast])) {
	$paired = [];
	$bounds = [];
	foreach ($rates[$slow] as $round => $rate) {
		if (isset($rates[$fast][$round])) {
			$cycle = 1e9 / $rates[$fast][$round];
			$bound = $cycle + 2 * min(GRACE_MAX_NS, max(GRACE_MIN_NS, $cycle / 2));
			$bounds[] = $bound;
			$paired[] = (1e9 / $rate) / $bound;
		}
	}
	$ratio = median($paired);
	$addRow('redlock', 'one of 3 servers 50 ms slower: cycle vs all-fast cycle + 2 graces', ms(1e9 / median($rates[$slow])),
		ms(median($bounds)), sprintf('%.2fx', $ratio), sprintf('<= %.2fx', $most), $ratio <= $most);
}

$base = 'handoff.redis.ours';
foreach ([...FRAMEWORK_HANDOFF, ...FRAMEWORK_HANDOFF_OWN] as [$label, $contender]) {
	if (!isset($handoffs[$contender], $handoffs[$base])) {
		continue;
	}
	$own = in_array([$label, $contender], FRAMEWORK_HANDOFF_OWN, true);
	/* Paired by round, as the rates are: the two ran within seconds of each other. */
	$paired = [];
	foreach ($handoffs[$contender] as $round => $lat) {
		if (isset($handoffs[$base][$round])) {
			$paired[] = median($lat) / max(1, median($handoffs[$base][$round]));
		}
	}
	$a = array_merge(...array_values($handoffs[$contender]));
	$ratio = median($paired);
	$addRow('handoff', sprintf('%s: p50 of %d, vs the extension\'s own', $label, count($a)), ms(percentile($a, 50)),
		ms(percentile(array_merge(...array_values($handoffs[$base])), 50)), sprintf('%.2fx', $ratio),
		$own ? '-' : sprintf('<= %.1fx', FRAMEWORK_HANDOFF_RATIO), $own ? null : $ratio <= FRAMEWORK_HANDOFF_RATIO);
}

foreach (FLOOR_HANDOFF as [$label, $ours, $floor, $most]) {
	if (!isset($handoffs[$ours], $handoffs[$floor])) {
		continue;
	}
	$paired = [];
	foreach ($handoffs[$ours] as $round => $lat) {
		if (isset($handoffs[$floor][$round])) {
			$paired[] = median($lat) / max(1, median($handoffs[$floor][$round]));
		}
	}
	$a = array_merge(...array_values($handoffs[$ours]));
	$ratio = median($paired);
	$addRow('handoff', sprintf('%s: p50 of %d', $label, count($a)), ms(percentile($a, 50)),
		ms(percentile(array_merge(...array_values($handoffs[$floor])), 50)), sprintf('%.2fx', $ratio),
		$most === null ? '-' : sprintf('<= %.1fx', $most), $most === null ? null : $ratio <= $most);
}

foreach (HANDOFF as [$store, $ours, $peer, $p50Target, $p99Target]) {
	if (!isset($handoffs[$ours], $handoffs[$peer])) {
		continue;
	}
	$a = array_merge(...array_values($handoffs[$ours]));
	$b = array_merge(...array_values($handoffs[$peer]));
	/* As for the rates, the p50 ratio pairs the two contenders' slices of each round. */
	$paired = [];
	foreach ($handoffs[$ours] as $round => $lat) {
		if (isset($handoffs[$peer][$round])) {
			$paired[] = median($handoffs[$peer][$round]) / max(1, median($lat));
		}
	}
	$p50 = percentile($a, 50);
	$p99 = percentile($a, 99);
	$addRow('handoff', sprintf('%s: p50 of %d, vs Symfony', $store, count($a)), ms($p50), ms(percentile($b, 50)),
		sprintf('%.2fx', median($paired)), $p50Target === null ? '-' : sprintf('<= %.1f ms', $p50Target),
		$p50Target === null ? null : $p50 <= $p50Target * 1e6);
	$addRow('handoff', sprintf('%s: p99', $store), ms($p99), ms(percentile($b, 99)),
		times(percentile($b, 99), $p99), $p99Target === null ? '-' : sprintf('<= %.1f ms', $p99Target),
		$p99Target === null ? null : $p99 <= $p99Target * 1e6);
}

/** A contention contender's totals over its rounds: utilisation %, longest wait ns, counts, count deviation %, overlaps. */
$totals = static function (array $byRound): array {
	$wall = $held = $longest = $overlaps = 0;
	$counts = [];
	foreach ($byRound as [$w, $h, $l, $o, $c]) {
		$wall += $w;
		$held += $h;
		$longest = max($longest, $l);
		$overlaps += $o;
		foreach ($c as $i => $n) {
			$counts[$i] = ($counts[$i] ?? 0) + $n;
		}
	}
	$average = array_sum($counts) / max(1, count($counts));
	$deviation = $average > 0 ? max(array_map(static fn ($n) => abs($n - $average), $counts)) / $average * 100 : 100.0;
	return [$held / max(1, $wall) * 100, $longest, $counts, $deviation, $overlaps];
};
foreach (CONTENTION as [$store, $ours, $peer, $utilTarget, $waitTarget, $spreadTarget]) {
	if (!isset($contention[$ours], $contention[$peer])) {
		continue;
	}
	[$ua, $la, , $da, $oa] = $totals($contention[$ours]);
	[$ub, $lb, , $db, $ob] = $totals($contention[$peer]);
	$addRow('contention', "$store: lock utilisation", sprintf('%.1f%%', $ua), sprintf('%.1f%%', $ub), times($ua, $ub),
		$utilTarget === null ? '-' : sprintf('>= %.0f%%', $utilTarget), $utilTarget === null ? null : $ua >= $utilTarget);
	$addRow('contention', "$store: longest single wait", ms($la), ms($lb), times($lb, $la),
		$waitTarget === null ? '-' : sprintf('<= %.0f ms', $waitTarget), $waitTarget === null ? null : $la <= $waitTarget * 1e6);
	$addRow('contention', "$store: largest count off the average", sprintf('%.1f%%', $da), sprintf('%.1f%%', $db), times($db, $da),
		$spreadTarget === null ? '-' : sprintf('<= %.0f%%', $spreadTarget), $spreadTarget === null ? null : $da <= $spreadTarget);
	/* Holds that overlapped in time would mean a broken lock (or a broken measurement): ours must have none. */
	$addRow('contention', "$store: holds that overlapped", (string) $oa, (string) $ob, '-', '0', $oa === 0);
}
foreach (FLOOR_CONTENTION as [$store, $ours, $floor, $points]) {
	if (!isset($contention[$ours], $contention[$floor])) {
		continue;
	}
	[$ua] = $totals($contention[$ours]);
	[$uf] = $totals($contention[$floor]);
	$addRow('contention', "$store: utilisation vs the bare primitive", sprintf('%.1f%%', $ua), sprintf('%.1f%%', $uf),
		sprintf('%+.1f pts', $ua - $uf), $points === null ? '-' : sprintf('>= floor - %.0f pts', $points),
		$points === null ? null : $ua >= $uf - $points);
}

foreach (MEMORY as [$contender, $label]) {
	if (!isset($memory[$contender])) {
		continue;
	}
	$m = $memory[$contender];
	$growth = $m['after'] - $m['before'];
	$ok = $growth < MEMORY_LIMIT_KB;
	$failed += $ok ? 0 : 1;
	$rows[] = ['memory', sprintf('%s: RSS growth over %s cycles', $label, number_format($m['cycles'])),
		sprintf('%+d kB', $growth), '-', '-', sprintf('< %d kB', MEMORY_LIMIT_KB), $ok ? 'PASS' : 'FAIL'];
}

/* Distinct names: no slowdown as names pile up, nothing left behind but the cache. */
foreach ($distinct as $store => $d) {
	$ratio = $d['first'] > 0 ? $d['last'] / $d['first'] : 0.0;
	$ok = $ratio >= DISTINCT_RATIO;
	$failed += $ok ? 0 : 1;
	$rows[] = ['distinct', sprintf('%s: rate of the last vs the first 10,000 of %s names', $store, number_format($d['names'])),
		rate($d['last']), rate($d['first']), sprintf('%.2fx', $ratio), sprintf('>= %.2fx', DISTINCT_RATIO), $ok ? 'PASS' : 'FAIL'];
	$ok = $d['left'] <= $d['allowed'];
	$failed += $ok ? 0 : 1;
	$rows[] = ['distinct', sprintf('%s: %s left after %s names', $store, $d['what'], number_format($d['names'])),
		(string) $d['left'], '-', '-', sprintf('<= %d', $d['allowed']), $ok ? 'PASS' : 'FAIL'];
}

/* Auto-refresh: what the thread costs the PHP code beside it, and many holds kept for long. */
if ($autoCpu !== []) {
	ksort($autoCpu);
	$first = reset($autoCpu);
	/* Speed with the holds over speed alone = time alone over time with, paired by round. */
	$speed = median(array_map(static fn (array $r): float => $r['alone'] / max(1, $r['with']), $autoCpu));
	$ok = $speed >= AUTOREFRESH_SPEED;
	$addRow('autorefresh', sprintf('CPU-bound PHP loop beside %d holds of %s s refreshed vs not refreshed: speed, %d rounds',
		$first['holds'], $first['ttl_ms'] / 1000, count($autoCpu)),
		ms(median(array_column($autoCpu, 'with'))), ms(median(array_column($autoCpu, 'alone'))),
		sprintf('%.3fx', $speed), sprintf('>= %.2fx', AUTOREFRESH_SPEED), $ok);
	$with = array_sum(array_column($autoCpu, 'with'));
	$refreshes = array_sum(array_column($autoCpu, 'refreshes'));
	$thread = array_sum(array_column($autoCpu, 'thread'));
	$addRow('autorefresh', sprintf('beside the loop: refreshes/s (%d holds x 3 / TTL: %d/s); the thread\'s CPU', $first['holds'],
		(int) round($first['holds'] * 3000 / $first['ttl_ms'])), rate($refreshes / max(1, $with) * 1e9),
		sprintf('%.1f%% of a CPU', $thread / max(1, $with) * 100), '-', '-', null);
	$lost = array_sum(array_column($autoCpu, 'lost'));
	$addRow('autorefresh', 'beside the loop: holds found gone at their release', (string) $lost, '-', '-', '0', $lost === 0);
}
if ($autoKeep !== null) {
	$k = $autoKeep;
	$seconds = $k['window'] / 1e9;
	$what = sprintf('%s holds of %s s, %.0f s', number_format($k['holds']), $k['ttl_ms'] / 1000, $seconds);
	$addRow('autorefresh', "$what: checks by a second process that found a hold free", (string) $k['free'],
		number_format($k['checks']) . ' checks', '-', '0', $k['free'] === 0);
	$addRow('autorefresh', "$what: holds still held at the end", number_format($k['held']), '-', '-',
		number_format($k['holds']), $k['held'] === $k['holds']);
	/* The bounds per TTL, as refreshes per hold per second. */
	[$low, $high] = array_map(static fn (float $b): float => $b * 1000 / $k['ttl_ms'], AUTOREFRESH_PER_TTL);
	foreach ([['refresh scripts the server ran (INFO commandstats)', $k['scripts']],
		['refreshes the holder counted (Lock\stats auto_refreshed)', $k['refreshed']]] as [$label, $n]) {
		$perSecond = $n / max(1, $k['holds']) / $seconds;
		$addRow('autorefresh', "$what: $label per hold per s", sprintf('%.3f', $perSecond), number_format($n), '-',
			sprintf('%.2f-%.2f', $low, $high), $perSecond >= $low && $perSecond <= $high);
	}
	$cpu = $k['user_us'] + $k['sys_us'];
	$addRow('autorefresh', "$what: holder's CPU (getrusage), its refreshing thread's (/proc)",
		sprintf('%.2f s = %.1f%%', $cpu / 1e6, $cpu / 1e4 / $seconds),
		sprintf('%.2f s = %.1f%%', $k['thread'] / 1e9, $k['thread'] / 1e7 / $seconds), '-', '-', null);
	$addRow('autorefresh', "$what: server's CPU (INFO cpu), of it in the refresh scripts",
		sprintf('%.2f s = %.1f%%', $k['server_us'] / 1e6, $k['server_us'] / 1e4 / $seconds),
		sprintf('%.2f s = %.1f%%', $k['script_us'] / 1e6, $k['script_us'] / 1e4 / $seconds), '-', '-', null);
}

$widths = [];
foreach ($rows as $row) {
	foreach ($row as $i => $cell) {
		$widths[$i] = max($widths[$i] ?? 0, strlen($cell));
	}
}
echo $argv[2], "\n\n";
foreach ($rows as $n => $row) {
	$cells = [];
	foreach ($row as $i => $cell) {
		/* Text columns align left, figures right. */
		$cells[] = $i < 2 || $i === 6 ? str_pad($cell, $widths[$i]) : str_pad($cell, $widths[$i], ' ', STR_PAD_LEFT);
	}
	echo rtrim(implode('  ', $cells)), "\n";
	if ($n === 0) {
		echo str_repeat('-', array_sum($widths) + 2 * (count($widths) - 1)), "\n";
	}
}

if ($rates !== []) {
	echo "\nrates per round (cycles/s), median first:\n";
	$width = max(array_map('strlen', array_keys($rates)));
	$noisy = [];
	foreach ($rates as $contender => $byRound) {
		ksort($byRound);
		$spread = (max($byRound) - min($byRound)) / median($byRound) * 100;
		printf("  %s  %10s  [%s]  spread %.0f%%\n", str_pad($contender, $width), number_format(median($byRound)),
			implode(' ', array_map(static fn ($r) => number_format($r), $byRound)), $spread);
		if ($spread > NOISY_SPREAD) {
			$noisy[] = $contender;
		}
	}
	if ($noisy !== []) {
		printf("  note: the machine was busy (spread over %d%%): %s.\n"
			. "  The medians hold while most rounds agree; else rerun with more rounds (BENCH_ROUNDS=40).\n",
			NOISY_SPREAD, implode(', ', $noisy));
	}
}
if ($pairs !== []) {
	echo "\nratios per round (ours/peer of the two slices of a round), median first; then the ratio\n"
		. "of the upper quartiles of the two contenders' rates, an estimate for a quiet machine:\n";
	foreach ($pairs as [$ours, $peer, $paired]) {
		printf("  %s / %s  %.2f  [%s]  upper quartiles %.2f\n", $ours, $peer, median($paired),
			implode(' ', array_map(static fn ($r) => sprintf('%.2f', $r), $paired)),
			upper_quartile($rates[$ours]) / upper_quartile($rates[$peer]));
	}
}
if ($costs !== []) {
	echo "\ncosts per round (the first contender's time per cycle over the second's, the base's), median first:\n";
	foreach ($costs as [$contender, $base, $paired]) {
		printf("  %s / %s  %.2f  [%s]\n", $contender, $base, median($paired),
			implode(' ', array_map(static fn ($r) => sprintf('%.2f', $r), $paired)));
	}
}
if ($handoffs !== []) {
	echo "\nhandoff latency per round (median of the round's handoffs, ms), then p50 / p90 / p99 / max of all:\n";
	$width = max(array_map('strlen', array_keys($handoffs)));
	foreach ($handoffs as $contender => $byRound) {
		ksort($byRound);
		$all = array_merge(...array_values($byRound));
		printf("  %s  [%s]  %s / %s / %s / %s\n", str_pad($contender, $width),
			implode(' ', array_map(static fn ($l) => sprintf('%.3f', median($l) / 1e6), $byRound)),
			ms(percentile($all, 50)), ms(percentile($all, 90)), ms(percentile($all, 99)), ms(max($all)));
	}
}
if ($contention !== []) {
	echo "\ncontention per round (utilisation %, longest wait ms), then each process's count over all rounds:\n";
	$width = max(array_map('strlen', array_keys($contention)));
	foreach ($contention as $contender => $byRound) {
		ksort($byRound);
		[, , $counts] = $totals($byRound);
		printf("  %s  [%s]  counts %s\n", str_pad($contender, $width),
			implode(' ', array_map(static fn ($r) => sprintf('%.1f%%/%.1f', $r[1] / max(1, $r[0]) * 100, $r[2] / 1e6), $byRound)),
			implode(' ', $counts));
	}
	printf("  (%d processes; each cycle: blocking acquire, hold 1 ms busy, release, 1 ms usleep)\n", count($counts));
}
if ($memory !== []) {
	echo "\nmemory runs (VmRSS after a warm-up of 5,000 cycles, then after the run):\n";
	foreach ($memory as $contender => $m) {
		printf("  %s  %s cycles: %d kB -> %d kB\n", $contender, number_format($m['cycles']), $m['before'], $m['after']);
	}
}
if ($autoCpu !== []) {
	printf("\nautorefresh, the CPU-bound loop per round (s beside holds not refreshed / s beside refreshed ones = speed; refreshes, thread CPU ms):\n");
	foreach ($autoCpu as $round => $r) {
		printf("  %2d  %.3f / %.3f = %.3fx  %d refreshes, %d ms\n", $round, $r['alone'] / 1e9, $r['with'] / 1e9,
			$r['alone'] / max(1, $r['with']), $r['refreshes'], intdiv($r['thread'], 1_000_000));
	}
	$speeds = array_map(static fn (array $r): float => $r['alone'] / max(1, $r['with']), $autoCpu);
	$q1 = percentile($speeds, 25);
	$q3 = percentile($speeds, 75);
	$share = array_sum(array_column($autoCpu, 'thread')) / max(1, array_sum(array_column($autoCpu, 'with')));
	printf("  speed: median %.3fx, quartiles %.3fx - %.3fx; the thread's share of the loop's CPU %.1f%%\n",
		median($speeds), $q1, $q3, $share * 100);
	if ($q3 - $q1 > 0.05) {
		printf("  note: the machine was busy (the rounds' quartiles lie %.0f%% apart): the median is a weak verdict;\n"
			. "  on a quiet machine the loop keeps about 1 - the thread's share of the CPU they share, %.3fx.\n"
			. "  Rerun with more rounds (BENCH_AUTOREFRESH_ROUNDS=100) or on a quieter machine.\n",
			($q3 - $q1) * 100, 1 - $share);
	}
}
if ($autoKeep !== null) {
	$k = $autoKeep;
	$scripts = max(1, $k['scripts']);
	printf("\nautorefresh, %s holds kept %.1f s: %s refresh scripts on the server, %s counted by the holder;\n"
		. "  holder CPU user %.2f s + sys %.2f s (%.0f us a refresh), its refreshing thread %.2f s;\n"
		. "  server CPU %.2f s (%.0f us a refresh, the checker's %s isLocked() calls included), %.0f us a refresh inside the script\n",
		number_format($k['holds']), $k['window'] / 1e9, number_format($k['scripts']), number_format($k['refreshed']),
		$k['user_us'] / 1e6, $k['sys_us'] / 1e6, ($k['user_us'] + $k['sys_us']) / $scripts, $k['thread'] / 1e9,
		$k['server_us'] / 1e6, $k['server_us'] / $scripts, number_format($k['checks']), $k['script_us'] / $scripts);
}
if ($autoCpu !== [] || $autoKeep !== null) {
	echo $autoCpus === '-'
		? "  (the PHP processes and the redis-server were not pinned to CPUs: the machine has one)\n"
		: sprintf("  (the PHP processes ran on CPU %s, the redis-server on CPU %s, by taskset)\n", ...explode(' ', $autoCpus));
}
if ($handoffs !== [] || $contention !== []) {
	echo "\nratio: how many times better ours is than the peer (rates, utilisation: ours/peer;\n"
		. "latencies, waits, count deviations: peer/ours; a handoff p50 pairs the slices of each round).\n";
}
if ($costs !== []) {
	echo "\nredlock rows: times per cycle (the reciprocal of the median rate), and the ratio is a cost,\n"
		. "the first contender's time per cycle over the second's, paired by round: lower is better.\n"
		. "A handoff row against a floor or a base is a cost as well (ours/theirs).\n";
}
echo "\n", $failed === 0 ? 'all targets met' : "$failed target(s) missed", "\n";
exit($failed === 0 ? 0 : 1);
