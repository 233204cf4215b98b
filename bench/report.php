<?php
/*
 * Turns bench/run.sh's raw measurements into the results table: the median rate
 * of each contender over the rounds, our figure against the peer's, the median of
 * the per-round ratios and the verdict against issue 2's targets. Exits 1 when a
 * target is missed.
 *
 *   php report.php <raw.tsv> <header text>
 */

declare(strict_types=1);

/* Rate comparisons: group, what, ours, peer, target ratio (null: for information). */
const COMPARISONS = [
	['redis', 'vs Symfony RedisStore, lock reused', 'redis.ours', 'redis.symfony', 1.8],
	['redis', 'vs phpredis SET NX PX + EVALSHA', 'redis.ours', 'redis.phpredis', 0.95],
	['redis', 'vs Symfony, createLock per cycle', 'redis.ours-new', 'redis.symfony-new', null],
	['flock', 'vs Symfony FlockStore, lock reused', 'flock.ours', 'flock.symfony', 4.0],
	['flock', 'vs Symfony, createLock per cycle', 'flock.ours-new', 'flock.symfony-new', null],
	['sem', 'vs Symfony SemaphoreStore, lock reused', 'sem.ours', 'sem.symfony', 5.0],
	['sem', 'vs Symfony, createLock per cycle', 'sem.ours-new', 'sem.symfony-new', null],
];

/* Memory runs: contender, label; growth must stay under this many kB. */
const MEMORY = [
	['flock.ours', 'flock'],
	['redis.ours', 'redis'],
];
const MEMORY_LIMIT_KB = 1024;

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
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
	$f = explode("\t", $line);
	if ($f[0] === 'rate') {
		$rates[$f[1]][(int) $f[2]] = (float) $f[3];
	} elseif ($f[0] === 'mem') {
		$memory[$f[1]] = ['cycles' => (int) $f[2], 'before' => (int) $f[3], 'after' => (int) $f[4]];
	}
}

$rows = [['group', 'measurement', 'ours', 'peer', 'ratio', 'target', 'result']];
$failed = 0;
$pairs = [];
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
if ($memory !== []) {
	echo "\nmemory runs (VmRSS after a warm-up of 5,000 cycles, then after the run):\n";
	foreach ($memory as $contender => $m) {
		printf("  %s  %s cycles: %d kB -> %d kB\n", $contender, number_format($m['cycles']), $m['before'], $m['after']);
	}
}
echo "\n", $failed === 0 ? 'all targets met' : "$failed target(s) missed", "\n";
exit($failed === 0 ? 0 : 1);
