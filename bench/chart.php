<?php
/*
 * Draws SVG charts of one bench/run.sh run, for the groups that ran: the handoff
 * latencies of each contender, each contention process's waits over one slice, and
 * the cycle rates of each store beside its floor and Symfony. Standalone SVG, no
 * script, no dependencies.
 *
 *   php chart.php <raw.tsv> <waits-dir> <header text> <path prefix>
 *
 * writes <prefix>handoff.svg, <prefix>contention.svg and <prefix>rates.svg, each
 * only when the run has its data, and prints the path of each file it wrote. The
 * waits directory holds the contention contenders' <name>.waits files (waiting.php).
 */

declare(strict_types=1);

const WIDTH = 1000;
const FONT = 'DejaVu Sans, Verdana, Arial, sans-serif';
/* Colours by role: ours, ours in another mode, the bare primitive, Symfony, a framework over our adapter. */
const ROLE_COLOURS = ['ours' => '#1d4ed8', 'ours-alt' => '#0891b2', 'floor' => '#4b5563', 'peer' => '#c2410c',
	'framework' => '#7c3aed'];
const ROLE_NAMES = ['ours' => 'ours', 'ours-alt' => 'ours, fair => false', 'floor' => 'the floor (bare primitive)',
	'peer' => 'Symfony Lock 5.4', 'framework' => 'a framework over our adapter'];
/* One colour per contention process. */
const PROCESS_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

/* Handoff panels: title, then rows of contender, label, role. */
const HANDOFF_PANELS = [
	['Redis', [
		['handoff.redis.ours', 'ours, fair (the default)', 'ours'],
		['handoff.redis.ours-unfair', 'ours, fair => false', 'ours-alt'],
		['handoff.redis.floor', 'a bare token, RPUSH -> BLPOP', 'floor'],
		['handoff.redis.symfony', 'Symfony RedisStore (polls)', 'peer'],
	]],
	['flock', [
		['handoff.flock.ours', 'ours, FlockStore', 'ours'],
		['handoff.flock.floor', 'a bare flock(LOCK_EX) waiter', 'floor'],
		['handoff.flock.symfony', 'Symfony FlockStore', 'peer'],
	]],
	['semaphore', [
		['handoff.sem.ours', 'ours, SemaphoreStore', 'ours'],
		['handoff.sem.floor', 'a bare sem_acquire() waiter', 'floor'],
		['handoff.sem.symfony', 'Symfony SemaphoreStore', 'peer'],
	]],
	['PostgreSQL', [
		['handoff.pgsql.ours', 'ours, PostgresStore', 'ours'],
		['handoff.pgsql.floor', 'bare pg_advisory_lock()', 'floor'],
		['handoff.pgsql.symfony', 'Symfony PostgreSqlStore', 'peer'],
	]],
	['MariaDB', [
		['handoff.mysql.ours', 'ours, MysqlStore', 'ours'],
		['handoff.mysql.floor', 'bare GET_LOCK()', 'floor'],
		['handoff.mysql.symfony', 'Symfony PdoStore (polls)', 'peer'],
	]],
	['Redis, through the frameworks', [
		['handoff.redis.sf-ours', 'Symfony 7.4 acquire(true)', 'framework'],
		['handoff.redis.lv-ours', 'Laravel 12 block()', 'framework'],
		['handoff.redis.yii2-ours', 'Yii 2 acquire()', 'framework'],
		['handoff.redis.drupal-ours', 'Drupal wait()', 'framework'],
		['handoff.redis.lv-own', "Laravel's own RedisLock block()", 'peer'],
	]],
	['Redis, one lock over several servers', [
		['handoff.redlock.ours-one', 'ours, one RedisStore', 'ours'],
		['handoff.redlock.ours-three', 'ours, CombinedStore of 3', 'ours'],
		['handoff.redlock.ours-five', 'ours, CombinedStore of 5', 'ours'],
	]],
];

/* Contention panels, two to a row: contender, title, longest-wait target (ms). */
const CONTENTION_ROWS = [
	[['contend.redis.ours', 'Redis, ours (fair)', 24.0], ['contend.redis.symfony', 'Redis, Symfony RedisStore', 24.0]],
	[['contend.redis.ours-unfair', 'Redis, ours with fair => false', 24.0], ['contend.redis.floor', 'Redis, a bare token (RPUSH/BLPOP)', 24.0]],
	[['contend.flock.floor', 'flock, a bare flock(LOCK_EX)', 26.0], ['contend.sem.floor', 'semaphore, a bare sem_acquire()', 26.0]],
	[['contend.flock.ours', 'flock, ours', 26.0], ['contend.flock.symfony', 'flock, Symfony FlockStore', 26.0]],
	[['contend.sem.ours', 'semaphore, ours', 26.0], ['contend.sem.symfony', 'semaphore, Symfony SemaphoreStore', 26.0]],
];

/* Rate panels: title, then rows of contender, label, role; the first row is ours, the others are compared with it. */
const RATE_PANELS = [
	['Redis', [
		['redis.ours', 'ours, RedisStore', 'ours'],
		['redis.phpredis', 'phpredis SET NX PX + EVALSHA', 'floor'],
		['redis.symfony', 'Symfony RedisStore', 'peer'],
	]],
	['flock', [
		['flock.ours', 'ours, FlockStore', 'ours'],
		['flock.floor', "PHP's flock() pair", 'floor'],
		['flock.symfony', 'Symfony FlockStore', 'peer'],
	]],
	['semaphore', [
		['sem.ours', 'ours, SemaphoreStore', 'ours'],
		['sem.floor', "PHP's sem_acquire() pair", 'floor'],
		['sem.symfony', 'Symfony SemaphoreStore', 'peer'],
	]],
	['memcached', [
		['memcached.ours', 'ours, MemcachedStore', 'ours'],
		['memcached.symfony', 'Symfony MemcachedStore', 'peer'],
	]],
	['PostgreSQL', [
		['pgsql.ours', 'ours, PostgresStore', 'ours'],
		['pgsql.floor', 'pg_try_advisory_lock() pair', 'floor'],
		['pgsql.symfony', 'Symfony PostgreSqlStore', 'peer'],
	]],
	['MariaDB', [
		['mysql.ours', 'ours, MysqlStore', 'ours'],
		['mysql.floor', 'GET_LOCK(name, 0) pair', 'floor'],
		['mysql.symfony', 'Symfony PdoStore', 'peer'],
	]],
	['Redis, one lock over several servers', [
		['redlock.ours-three', 'ours, CombinedStore of 3', 'ours'],
		['redlock.ours-one', 'ours, one RedisStore', 'ours'],
		['redlock.ours-five', 'ours, CombinedStore of 5', 'ours'],
		['redlock.floor-three', 'the bare fan over 3', 'floor'],
		['redlock.symfony-three', 'Symfony CombinedStore of 3', 'peer'],
	]],
];

/** The median of a non-empty list of numbers. */
function median(array $values): float
{
	sort($values);
	$n = count($values);
	$mid = intdiv($n, 2);
	return $n % 2 ? (float) $values[$mid] : ($values[$mid - 1] + $values[$mid]) / 2;
}

/** The p-th percentile (0-100) of a non-empty list of numbers (nearest rank, as report.php). */
function percentile(array $sorted, float $p): float
{
	return (float) $sorted[max(0, (int) ceil($p / 100 * count($sorted)) - 1)];
}

/** Text made safe for XML. */
function esc(string $text): string
{
	return htmlspecialchars($text, ENT_XML1 | ENT_QUOTES, 'UTF-8');
}

/** A coordinate with one decimal. */
function c(float $v): string
{
	return rtrim(rtrim(sprintf('%.1F', $v), '0'), '.');
}

/** A text element; $attrs are extra attributes (anchor, weight, size, fill). */
function text(float $x, float $y, string $s, string $attrs = ''): string
{
	return sprintf('<text x="%s" y="%s"%s>%s</text>', c($x), c($y), $attrs === '' ? '' : " $attrs", esc($s)) . "\n";
}

/** A duration in ms, as report.php prints it. */
function ms(float $ms): string
{
	return $ms < 1 ? sprintf('%.3f ms', $ms) : ($ms < 100 ? sprintf('%.2f ms', $ms) : sprintf('%.0f ms', $ms));
}

/** The label of a tick on a log time axis at $ms (a power of ten). */
function tick_label(float $ms): string
{
	return match (true) {
		$ms < 0.001 => sprintf('%g ns', $ms * 1e6),
		$ms < 1 => sprintf('%g µs', $ms * 1e3),
		$ms < 1000 => sprintf('%g ms', $ms),
		default => sprintf('%g s', $ms / 1e3),
	};
}

/** A count with k or M, for a rate axis. */
function short_number(float $v): string
{
	return match (true) {
		$v >= 1e6 => sprintf('%gM', $v / 1e6),
		$v >= 1e3 => sprintf('%gk', $v / 1e3),
		default => sprintf('%g', $v),
	};
}

/** The decades [lo, hi] (ms, powers of ten) that hold every value of $values. */
function decades(array $values): array
{
	$lo = 10 ** floor(log10(max(1e-3, min($values))));
	$hi = 10 ** ceil(log10(max($lo * 10, max($values))));
	return [$lo, $hi];
}

/** The position of $v on a log axis from $lo to $hi drawn from $from to $to (values outside are clamped). */
function log_pos(float $v, float $lo, float $hi, float $from, float $to): float
{
	$v = min($hi, max($lo, $v));
	return $from + (log10($v) - log10($lo)) / (log10($hi) - log10($lo)) * ($to - $from);
}

/** A deterministic spread in [-1, 1] for the $i-th dot, so that dots of equal value do not hide each other. */
function jitter(int $i): float
{
	return fmod($i * 0.6180339887, 1.0) * 2 - 1;
}

/** Dots as one path of round zero-length strokes (far smaller than a circle each). */
function dots(array $points, string $colour, float $size, float $opacity): string
{
	if ($points === []) {
		return '';
	}
	$d = '';
	foreach ($points as [$x, $y]) {
		$d .= 'M' . c($x) . ' ' . c($y) . 'h0';
	}
	return sprintf('<path d="%s" stroke="%s" stroke-width="%s" stroke-linecap="round" stroke-opacity="%s" fill="none"/>',
		$d, $colour, c($size), $opacity) . "\n";
}

/** The whole document: a white page, the title, the run's date and machine, $body, then the lines of $footer. */
function document(float $height, string $title, array $header, string $body, array $footer): string
{
	$height += 18 * count($footer);
	$notes = '';
	foreach ($footer as $i => $line) {
		$notes .= text(24, $height - 14 - 18 * (count($footer) - 1 - $i), $line, 'font-size="11" fill="#6b7280"');
	}
	return '<?xml version="1.0" encoding="UTF-8"?>' . "\n"
		. sprintf('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="%s" font-size="13" fill="#111827">',
			WIDTH, (int) ceil($height), WIDTH, (int) ceil($height), FONT) . "\n"
		. '<title>' . esc($title . ' (' . ($header[0] ?? '') . ')') . "</title>\n"
		. sprintf('<rect width="%d" height="%d" fill="#ffffff"/>', WIDTH, (int) ceil($height)) . "\n"
		. text(24, 32, $title, 'font-size="19" font-weight="bold"')
		. text(24, 52, $header[0] ?? '', 'font-size="12" fill="#4b5563"')
		. text(24, 68, $header[3] ?? '', 'font-size="12" fill="#4b5563"')
		. $body
		. $notes
		. "</svg>\n";
}

/** Colour swatches with their names in a row from ($x, $y); returns the SVG. */
function legend(array $entries, float $x, float $y): string
{
	$out = '';
	foreach ($entries as [$colour, $name]) {
		$out .= sprintf('<rect x="%s" y="%s" width="12" height="12" rx="2" fill="%s"/>', c($x), c($y - 10), $colour) . "\n";
		$out .= text($x + 17, $y, $name, 'font-size="12"');
		$x += 17 + 6.6 * strlen($name) + 22;
	}
	return $out;
}

/** Vertical grid lines and labels of a log time axis over [$lo, $hi], from $top to $bottom. */
function log_grid(float $lo, float $hi, float $from, float $to, float $top, float $bottom): string
{
	$out = '';
	for ($d = $lo; $d <= $hi * 1.0001; $d *= 10) {
		for ($m = 1; $m < 10; $m++) {
			$v = $d * $m;
			if ($v > $hi * 1.0001) {
				break;
			}
			$x = log_pos($v, $lo, $hi, $from, $to);
			$out .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>',
				c($x), c($top), c($x), c($bottom), $m === 1 ? '#d1d5db' : '#f1f5f9') . "\n";
			if ($m === 1) {
				$out .= text($x, $bottom + 16, tick_label($v), 'font-size="11" text-anchor="middle" fill="#4b5563"');
			}
		}
	}
	return $out;
}

/** The handoff chart: each contender's handoffs as dots, with its p25-p75 box, p50 bar and p1-p99 whisker. */
function handoff_chart(array $handoffs, array $header): ?string
{
	$panels = [];
	$all = [];
	foreach (HANDOFF_PANELS as [$title, $rows]) {
		$kept = [];
		foreach ($rows as [$contender, $label, $role]) {
			if (!isset($handoffs[$contender])) {
				continue;
			}
			$lat = array_map(static fn ($ns) => max(1, $ns) / 1e6, array_merge(...array_values($handoffs[$contender])));
			sort($lat);
			$kept[] = [$label, $role, $lat];
			array_push($all, ...$lat);
		}
		if ($kept !== []) {
			$panels[] = [$title, $kept];
		}
	}
	if ($panels === []) {
		return null;
	}
	[$lo, $hi] = decades($all);
	$x0 = 290;
	$x1 = 715;
	$roles = [];
	$body = '';
	$y = 118;
	$top = $y - 6;
	$rowHeight = 30;
	foreach ($panels as [$title, $rows]) {
		$body .= text(24, $y + 14, $title, 'font-weight="bold" font-size="14"');
		$y += 24;
		foreach ($rows as [$label, $role, $lat]) {
			$roles[$role] = true;
			$colour = ROLE_COLOURS[$role];
			$mid = $y + $rowHeight / 2;
			$body .= text(36, $mid + 4, $label);
			$points = [];
			foreach ($lat as $i => $v) {
				$points[] = [log_pos($v, $lo, $hi, $x0, $x1), $mid + 9 * jitter($i)];
			}
			$body .= dots($points, $colour, 3.2, 0.35);
			[$p1, $p25, $p50, $p75, $p99] = array_map(static fn ($p) => percentile($lat, $p), [1, 25, 50, 75, 99]);
			$a = log_pos($p1, $lo, $hi, $x0, $x1);
			$b = log_pos($p99, $lo, $hi, $x0, $x1);
			$body .= sprintf('<path d="M%s %sH%sM%s %sv10M%s %sv10" stroke="%s" stroke-width="1.5" fill="none"/>',
				c($a), c($mid), c($b), c($a), c($mid - 5), c($b), c($mid - 5), $colour) . "\n";
			$q1 = log_pos($p25, $lo, $hi, $x0, $x1);
			$q3 = log_pos($p75, $lo, $hi, $x0, $x1);
			$body .= sprintf('<rect x="%s" y="%s" width="%s" height="14" fill="%s" fill-opacity="0.2" stroke="%s" stroke-width="1.5"/>',
				c($q1), c($mid - 7), c(max(1, $q3 - $q1)), $colour, $colour) . "\n";
			$m = log_pos($p50, $lo, $hi, $x0, $x1);
			$body .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3.5"/>',
				c($m), c($mid - 10), c($m), c($mid + 10), $colour) . "\n";
			$body .= text($x1 + 14, $mid + 4, 'p50 ' . ms($p50), 'font-size="12"');
			$body .= text($x1 + 112, $mid + 4, 'p99 ' . ms($p99), 'font-size="12"');
			$body .= text(WIDTH - 24, $mid + 4, sprintf('n=%d', count($lat)), 'font-size="11" fill="#6b7280" text-anchor="end"');
			$y += $rowHeight;
		}
		$y += 8;
	}
	$grid = log_grid($lo, $hi, $x0, $x1, $top, $y);
	$axis = text(($x0 + $x1) / 2, $y + 34, 'from release() in the holder to acquire() returning in the blocked waiter (log scale)',
		'font-size="12" text-anchor="middle"');
	$entries = [];
	foreach (array_keys(ROLE_COLOURS) as $role) {
		if (isset($roles[$role])) {
			$entries[] = [ROLE_COLOURS[$role], ROLE_NAMES[$role]];
		}
	}
	$key = legend($entries, 24, 94)
		. text(WIDTH - 24, 94, 'dot: one handoff; box: p25-p75; bar: p50; whisker: p1-p99',
			'font-size="12" text-anchor="end" fill="#4b5563"');
	return document($y + 56, 'Handoff latency of a blocking acquire()', $header, $key . $grid . $body . $axis, [
		'The holder releases at a random 1 ms up to BENCH_HANDOFF_DELAY_MS after the waiter blocked; all rounds pooled.',
		$header[4] ?? '',
	]);
}

/**
 * The contention chart: for each contender, the slice whose utilisation is the median
 * of its rounds, every wait of each process as a dot at the time it ended.
 */
function contention_chart(array $contention, string $waitsDir, array $header): ?string
{
	/* contender => [round, utilisation %, wall ns, process => list of [ended ns, wait ns]] */
	$picked = [];
	$all = [];
	foreach (CONTENTION_ROWS as $row) {
		foreach ($row as $cell) {
			if ($cell === null || !isset($contention[$cell[0]]) || !is_file("$waitsDir/{$cell[0]}.waits")) {
				continue;
			}
			$util = [];
			foreach ($contention[$cell[0]] as $round => [$wall, $held]) {
				$util[$round] = $held / max(1, $wall) * 100;
			}
			asort($util);
			$round = array_keys($util)[intdiv(count($util) - 1, 2)];
			$processes = [];
			foreach (file("$waitsDir/{$cell[0]}.waits", FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
				$f = array_map('intval', explode(' ', $line));
				if ($f[0] !== $round) {
					continue;
				}
				$waits = [];
				for ($k = 2; $k + 1 < count($f); $k += 2) {
					$waits[] = [$f[$k], $f[$k + 1]];
					$all[] = max(1, $f[$k + 1]) / 1e6;
				}
				$processes[$f[1]] = $waits;
			}
			ksort($processes);
			$picked[$cell[0]] = [$round, $util[$round], $contention[$cell[0]][$round][0], $processes,
				count($contention[$cell[0]])];
		}
	}
	if ($picked === [] || $all === []) {
		return null;
	}
	[$lo, $hi] = decades($all);
	$plotWidth = 390;
	$plotHeight = 170;
	$columns = [72, 72 + $plotWidth + 110];
	$body = '';
	$y = 112;
	$processCount = 0;
	foreach (CONTENTION_ROWS as $row) {
		$drawn = false;
		foreach ($row as $col => $cell) {
			if ($cell === null || !isset($picked[$cell[0]])) {
				continue;
			}
			$drawn = true;
			[$contender, $title, $target] = $cell;
			[$round, $util, $wall, $processes, $rounds] = $picked[$contender];
			$processCount = max($processCount, count($processes));
			$left = $columns[$col];
			$right = $left + $plotWidth;
			$top = $y + 40;
			$bottom = $top + $plotHeight;
			$longest = 0;
			foreach ($processes as $waits) {
				foreach ($waits as [, $w]) {
					$longest = max($longest, $w);
				}
			}
			$body .= text($left - 48, $y + 14, $title, 'font-weight="bold" font-size="14"');
			$body .= text($left - 48, $y + 30, sprintf('slice %d of %d (median utilisation %.1f%%), longest wait %s',
				$round, $rounds, $util, ms($longest / 1e6)), 'font-size="11" fill="#4b5563"');
			$body .= sprintf('<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#9ca3af"/>',
				c($left), c($top), c($plotWidth), c($plotHeight)) . "\n";
			/* Log y axis: decades, the wait growing upwards. */
			for ($d = $lo; $d <= $hi * 1.0001; $d *= 10) {
				$gy = log_pos($d, $lo, $hi, $bottom, $top);
				$body .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e7eb"/>', c($left), c($gy), c($right), c($gy)) . "\n";
				$body .= text($left - 6, $gy + 4, tick_label($d), 'font-size="11" text-anchor="end" fill="#4b5563"');
			}
			$wallMs = $wall / 1e6;
			$step = $wallMs > 2000 ? 500 : ($wallMs > 500 ? 200 : 100);
			for ($t = 0; $t <= $wallMs + 0.001; $t += $step) {
				$gx = $left + $t / $wallMs * $plotWidth;
				$body .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#9ca3af"/>', c($gx), c($bottom), c($gx), c($bottom + 4)) . "\n";
				$body .= text($gx, $bottom + 17, sprintf('%g', $t), 'font-size="11" text-anchor="middle" fill="#4b5563"');
			}
			$ty = log_pos($target, $lo, $hi, $bottom, $top);
			$body .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dc2626" stroke-dasharray="5 4"/>',
				c($left), c($ty), c($right), c($ty)) . "\n";
			$body .= text($right - 4, $ty - 4, sprintf('target for ours: %g ms', $target),
				'font-size="11" text-anchor="end" fill="#dc2626" stroke="#ffffff" stroke-width="3" paint-order="stroke"');
			foreach ($processes as $p => $waits) {
				$points = [];
				foreach ($waits as [$ended, $w]) {
					$points[] = [$left + min(1, max(0, $ended / $wall)) * $plotWidth,
						log_pos(max(1, $w) / 1e6, $lo, $hi, $bottom, $top)];
				}
				$body .= dots($points, PROCESS_COLOURS[$p % count(PROCESS_COLOURS)], 3, 0.75);
			}
			/* Each process's number of holds in its colour: a fair lock gives them all about the same. */
			$counts = '';
			foreach ($processes as $p => $waits) {
				$counts .= sprintf('<tspan dx="6" fill="%s" font-weight="bold">%d</tspan>',
					PROCESS_COLOURS[$p % count(PROCESS_COLOURS)], count($waits));
			}
			$body .= sprintf('<text x="%s" y="%s" font-size="11" fill="#4b5563">holds per process:%s</text>',
				c($left - 48), c($bottom + 36), $counts) . "\n";
		}
		if ($drawn) {
			$y += 40 + $plotHeight + 56;
		}
	}
	$entries = [];
	for ($p = 0; $p < $processCount; $p++) {
		$entries[] = [PROCESS_COLOURS[$p % count(PROCESS_COLOURS)], 'process ' . ($p + 1)];
	}
	$key = legend($entries, 24, 92);
	$body .= text(24, $y + 4, 'Each dot is one wait of one process that ended in a hold: from its call of acquire(true) to the '
		. 'return (log scale),', 'font-size="12"');
	$body .= text(24, $y + 22, sprintf('at the time it returned (ms into the slice); %d processes, each: acquire, hold 1 ms, release, '
		. '1 ms of other work.', $processCount), 'font-size="12"');
	return document($y + 40, 'Contention: every wait of each process over one slice', $header, $key . $body,
		[$header[4] ?? '']);
}

/** A step for a linear axis up to $max: 1, 2, 2.5 or 5 times a power of ten, giving about five ticks. */
function nice_step(float $max): float
{
	$raw = $max / 5;
	$power = 10 ** floor(log10($raw));
	foreach ([1, 2, 2.5, 5, 10] as $m) {
		if ($m * $power >= $raw) {
			return $m * $power;
		}
	}
	return 10 * $power;
}

/** The rates chart: each store's median rate of ours, the floor and Symfony, with ours/each ratio. */
function rates_chart(array $rates, array $header): ?string
{
	$x0 = 290;
	$x1 = 760;
	$body = '';
	$y = 116;
	$roles = [];
	$slices = 0;
	foreach (RATE_PANELS as [$title, $rows]) {
		$ours = $rows[0][0];
		$kept = array_values(array_filter($rows, static fn ($r) => isset($rates[$r[0]])));
		if (!isset($rates[$ours]) || count($kept) < 2) {
			continue;
		}
		$max = max(array_map(static fn ($r) => max($rates[$r[0]]), $kept));
		$step = nice_step($max);
		$scaleMax = ceil($max / $step) * $step;
		$body .= text(24, $y + 14, $title, 'font-weight="bold" font-size="14"');
		$y += 24;
		$top = $y;
		$bars = '';
		foreach ($kept as [$contender, $label, $role]) {
			$roles[$role] = true;
			$colour = ROLE_COLOURS[$role];
			$byRound = $rates[$contender];
			$slices = max($slices, count($byRound));
			$rate = median($byRound);
			$mid = $y + 15;
			$bars .= text(36, $mid + 4, $label);
			$w = $rate / $scaleMax * ($x1 - $x0);
			$bars .= sprintf('<rect x="%s" y="%s" width="%s" height="20" fill="%s" fill-opacity="0.85"/>',
				c($x0), c($mid - 10), c(max(1, $w)), $colour) . "\n";
			$points = [];
			$i = 0;
			foreach ($byRound as $r) {
				$points[] = [$x0 + $r / $scaleMax * ($x1 - $x0), $mid + 6 * jitter($i++)];
			}
			$bars .= dots($points, '#111827', 2.6, 0.55);
			$note = esc(number_format($rate) . '/s');
			if ($contender !== $ours) {
				/* The ratio pairs the two slices of each round, as report.php's does. */
				$paired = [];
				foreach ($rates[$ours] as $round => $r) {
					if (isset($byRound[$round]) && $byRound[$round] > 0) {
						$paired[] = $r / $byRound[$round];
					}
				}
				if ($paired !== []) {
					$note .= sprintf('<tspan dx="10" font-weight="bold">ours %.2fx</tspan>', median($paired));
				}
			}
			$bars .= sprintf('<text x="%s" y="%s" font-size="12">%s</text>',
				c($x0 + max($rate, max($byRound)) / $scaleMax * ($x1 - $x0) + 8), c($mid + 4), $note) . "\n";
			$y += 30;
		}
		for ($t = 0; $t <= $scaleMax + $step / 1000; $t += $step) {
			$gx = $x0 + $t / $scaleMax * ($x1 - $x0);
			$body .= sprintf('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e7eb"/>', c($gx), c($top), c($gx), c($y + 2)) . "\n";
			$body .= text($gx, $y + 16, short_number($t), 'font-size="11" text-anchor="middle" fill="#4b5563"');
		}
		$body .= $bars;
		$y += 30;
	}
	if ($body === '') {
		return null;
	}
	$entries = [];
	foreach (array_keys(ROLE_COLOURS) as $role) {
		if (isset($roles[$role])) {
			$entries[] = [ROLE_COLOURS[$role], ROLE_NAMES[$role]];
		}
	}
	$key = legend($entries, 24, 92);
	$body .= text(24, $y + 4, sprintf('acquire() + release() cycles per second, one process, no contention: bar, the median of %d slices; '
		. 'dots, each slice.', $slices), 'font-size="12"');
	$body .= text(24, $y + 22, 'ours Nx: our rate over that one, the median of the ratios of the two slices of each round.',
		'font-size="12"');
	return document($y + 40, 'Cycle rates per store, against the floor and Symfony', $header, $key . $body, [$header[4] ?? '']);
}

if ($argc !== 5) {
	fwrite(STDERR, "usage: chart.php <raw.tsv> <waits-dir> <header> <path prefix>\n");
	exit(2);
}
$rates = [];
/* contender => round => list of latencies (ns) */
$handoffs = [];
/* contender => round => [wall, held] (ns) */
$contention = [];
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
	$f = explode("\t", $line);
	if ($f[0] === 'rate') {
		$rates[$f[1]][(int) $f[2]] = (float) $f[3];
	} elseif ($f[0] === 'handoff') {
		$handoffs[$f[1]][(int) $f[2]] = array_map('intval', explode(' ', $f[3]));
	} elseif ($f[0] === 'contend') {
		$v = array_map('intval', explode(' ', $f[3]));
		$contention[$f[1]][(int) $f[2]] = [$v[0], $v[1]];
	}
}
$header = explode("\n", $argv[3]);
$charts = [
	'handoff' => handoff_chart($handoffs, $header),
	'contention' => contention_chart($contention, $argv[2], $header),
	'rates' => rates_chart($rates, $header),
];
foreach ($charts as $name => $svg) {
	if ($svg === null) {
		continue;
	}
	$path = $argv[4] . $name . '.svg';
	if (file_put_contents($path, $svg) === false) {
		fwrite(STDERR, "chart: cannot write $path\n");
		exit(1);
	}
	echo $path, "\n";
}
