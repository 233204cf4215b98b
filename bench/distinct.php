<?php
/*
 * Many distinct resource names, each acquired and released once, on one of our
 * stores: what an application that locks per entity (order:1234) does over a
 * server's life. bench/run.sh starts it:
 *
 *   php -d extension=lock.so distinct.php <store> <names>
 *
 * <store> is flock, sem or redis. It prints one line:
 *   "<names> <first-rate> <last-rate> <left> <allowed> <what-left>"
 * where the rates (cycles/s) are the medians over batches of 1,000 names of the
 * first and of the last 10,000 names, <left> is what the store left behind
 * (lock files, semaphore sets, Redis keys once the TTLs ran out) while it is
 * still open, and <allowed> what may stay: nothing is held at the end, so the
 * store's cache of idle files or sets (64) and nothing more (nothing on Redis).
 *
 * The environment gives BENCH_DIR (a directory of its own for flock),
 * BENCH_REDIS_PORT and BENCH_DISTINCT_SETTLE (seconds to wait for Redis keys to
 * expire, default 15: the fencing counters outlive a 1 s hold by 10 s).
 */

declare(strict_types=1);

const BATCH = 1000;
const EDGE = 10;
const CACHE = 64;
const REDIS_TTL = 1.0;

/** Aborts the run with a message on stderr. */
function distinct_fail(string $message): never
{
	fwrite(STDERR, "distinct: $message\n");
	exit(1);
}

/** The environment variable $name, which the runner must have set. */
function distinct_env(string $name): string
{
	$value = getenv($name);
	if ($value === false || $value === '') {
		distinct_fail("$name is not set");
	}
	return $value;
}

/** The semaphore sets of this user on the machine, from /proc/sysvipc/sem. */
function distinct_sem_sets(): int
{
	$uid = posix_getuid();
	$count = 0;
	foreach (file('/proc/sysvipc/sem', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $i => $line) {
		$f = preg_split('/\s+/', trim($line));
		/* key semid perms nsems uid gid cuid cgid otime ctime */
		if ($i > 0 && (int) $f[4] === $uid) {
			$count++;
		}
	}
	return $count;
}

/** The Redis keys under $prefix, counted with SCAN. */
function distinct_redis_keys(Redis $redis, string $prefix): int
{
	$count = 0;
	$cursor = null;
	do {
		$keys = $redis->scan($cursor, $prefix . '*', 1000);
		$count += is_array($keys) ? count($keys) : 0;
	} while ($cursor > 0);
	return $count;
}

/** The median of a non-empty list. */
function distinct_median(array $values): float
{
	sort($values);
	$n = count($values);
	return $n % 2 ? $values[intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2;
}

if ($argc !== 3 || !ctype_digit($argv[2]) || (int) $argv[2] < 2 * EDGE * BATCH) {
	distinct_fail('usage: distinct.php <flock|sem|redis> <names, at least ' . 2 * EDGE * BATCH . '>');
}
$kind = $argv[1];
$names = intdiv((int) $argv[2], BATCH) * BATCH;
$run = 'd' . getmypid() . '-' . bin2hex(random_bytes(3));
$prefix = "lock-bench-distinct-$run:";
$dir = null;
$redis = null;
switch ($kind) {
	case 'flock':
		$dir = distinct_env('BENCH_DIR') . "/$run";
		if (!mkdir($dir)) {
			distinct_fail("cannot create $dir");
		}
		$store = new Lock\Store\FlockStore($dir);
		$ttl = null;
		break;
	case 'sem':
		$setsBefore = distinct_sem_sets();
		$store = new Lock\Store\SemaphoreStore();
		$ttl = null;
		break;
	case 'redis':
		$port = (int) distinct_env('BENCH_REDIS_PORT');
		$store = new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['prefix' => $prefix]);
		$ttl = REDIS_TTL;
		$redis = new Redis();
		if (!$redis->connect('127.0.0.1', $port, 2.0)) {
			distinct_fail('phpredis cannot connect');
		}
		break;
	default:
		distinct_fail("unknown store $kind (flock, sem, redis)");
}
$factory = new Lock\Factory($store, $ttl);

/* Runs one batch of names; returns its rate in cycles/s. */
$batch = static function (int $from) use ($factory): float {
	$start = hrtime(true);
	for ($i = $from, $end = $from + BATCH; $i < $end; $i++) {
		$lock = $factory->createLock("order:$i");
		if (!$lock->acquire()) {
			distinct_fail("acquire of order:$i failed");
		}
		$lock->release();
	}
	return BATCH / ((hrtime(true) - $start) / 1e9);
};

/* A warm-up on names of their own, outside the measurement. */
$batch(-BATCH);
$rates = [];
for ($from = 0; $from < $names; $from += BATCH) {
	$rates[] = $batch($from);
}
$first = distinct_median(array_slice($rates, 0, EDGE));
$last = distinct_median(array_slice($rates, -EDGE));

switch ($kind) {
	case 'flock':
		$left = count(array_diff(scandir($dir), ['.', '..']));
		$what = 'lock files';
		break;
	case 'sem':
		$left = distinct_sem_sets() - $setsBefore;
		$what = 'semaphore sets';
		break;
	case 'redis':
		$settle = (float) (getenv('BENCH_DISTINCT_SETTLE') ?: 15);
		$until = microtime(true) + $settle;
		while (($left = distinct_redis_keys($redis, $prefix)) > 0 && microtime(true) < $until) {
			usleep(250000);
		}
		$what = 'redis keys';
		break;
}
/* Redis keeps no cache: every key must be gone once the TTLs ran out. */
printf("%d %.1f %.1f %d %d %s\n", $names, $first, $last, $left, $kind === 'redis' ? 0 : CACHE, $what);
if ($dir !== null) {
	unset($factory, $store);
	array_map('unlink', glob("$dir/*") ?: []);
	rmdir($dir);
}
