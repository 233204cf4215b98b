<?php
/*
 * One contender of the benchmark, in a process of its own so that no other
 * contender's extension or autoloader state is present. bench/run.sh starts it:
 *
 *   php worker.php <contender> serve <warmup-seconds>
 *       sets up, warms up, prints "ready", then for each line "rate <seconds>" on
 *       stdin runs that long and prints "<cycles> <seconds>"; "quit" ends it
 *   php worker.php <contender> mem <cycles> <warmup-cycles>
 *       prints "<rss-before-kB> <rss-after-kB>" around the cycles
 *   php worker.php handoff.<store>.<who> serve <warmup-handoffs>
 *       forks a partner; for each line "handoff <n>" prints n handoff latencies (ns)
 *   php worker.php contend.<store>.<who> serve <warmup-seconds>
 *       forks 8 contenders; for each line "contend <seconds>" prints
 *       "<wall> <held> <longest-wait> <overlaps> <count> x 8" (ns, counts)
 *
 * The environment gives BENCH_RESOURCE (the resource name), BENCH_DIR (the flock
 * directory) and BENCH_REDIS_PORT (the loopback redis-server); the redlock group's
 * contenders, BENCH_REDLOCK_PORTS (five more redis-servers). A cycle is one
 * non-blocking acquire that must succeed plus one release; anything else aborts.
 * The waiting groups (handoff, contend) take <store> redis, flock or sem and
 * <who> ours, ours-unfair (redis only: fair => false) or symfony, or <store> redlock
 * and <who> ours-one, ours-three or ours-five; BENCH_HANDOFF_DELAY_MS
 * bounds the holder's random pause before it releases.
 */

declare(strict_types=1);

require_once __DIR__ . '/frameworks.php';
require_once __DIR__ . '/redlock.php';

use Symfony\Component\Lock\LockFactory as SfFactory;
use Symfony\Component\Lock\Store\FlockStore as SfFlockStore;
use Symfony\Component\Lock\Store\MemcachedStore as SfMemcachedStore;
use Symfony\Component\Lock\Store\PdoStore as SfPdoStore;
use Symfony\Component\Lock\Store\PostgreSqlStore as SfPostgreSqlStore;
use Symfony\Component\Lock\Store\RedisStore as SfRedisStore;
use Symfony\Component\Lock\Store\SemaphoreStore as SfSemaphoreStore;

/* Cycles between two clock reads, so reading the clock costs nothing measurable. */
const BATCH = 64;

/** Aborts the run with a message on stderr. */
function bench_fail(string $message): never
{
	fwrite(STDERR, "worker: $message\n");
	exit(1);
}

/** The environment variable $name, which the runner must have set. */
function bench_env(string $name): string
{
	$value = getenv($name);
	if ($value === false || $value === '') {
		bench_fail("$name is not set");
	}
	return $value;
}

/** Loads Symfony Lock 5.4 from the Debian package. */
function bench_symfony(): void
{
	require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
}

/** The uncontended cycle of a Symfony lock, and nothing to clean up: a contender's pair of closures. */
function bench_symfony_cycle(object $lock): array
{
	$run = static function (int $n) use ($lock): void {
		for ($i = 0; $i < $n; $i++) {
			if (!$lock->acquire()) {
				bench_fail('acquire failed');
			}
			$lock->release();
		}
	};
	return [$run, static fn () => null];
}

/** A phpredis connection to the benchmark's server; $tls: to the TLS server of the topology group, verified as ours is. */
function bench_phpredis(bool $tls = false): Redis
{
	$redis = new Redis();
	$ok = $tls
		? $redis->connect('tls://localhost', (int) bench_env('BENCH_TLS_PORT'), 2.0, null, 0, 0,
			['stream' => ['cafile' => bench_env('BENCH_TLS_CA'), 'verify_peer' => true, 'verify_peer_name' => true]])
		: $redis->connect('127.0.0.1', (int) bench_env('BENCH_REDIS_PORT'), 2.0);
	if (!$ok) {
		bench_fail('phpredis cannot connect');
	}
	return $redis;
}

/** Our acquire()+release() cycle on a lock made once from $store: the run and clean-up functions of a contender. */
function bench_ours_cycle(Lock\Store $store, string $resource): array
{
	$lock = (new Lock\Factory($store))->createLock($resource);
	$run = static function (int $n) use ($lock): void {
		for ($i = 0; $i < $n; $i++) {
			if (!$lock->acquire()) {
				bench_fail('acquire failed');
			}
			$lock->release();
		}
	};
	return [$run, static fn () => $store->forceRelease($resource)];
}

/** The port of the cluster master that serves $key's slot. */
function bench_cluster_master_port(string $key): int
{
	$redis = new Redis();
	if (!$redis->connect('127.0.0.1', (int) explode(',', bench_env('BENCH_CLUSTER_PORTS'))[0], 2.0)) {
		bench_fail('phpredis cannot connect to the cluster');
	}
	$slot = $redis->rawCommand('CLUSTER', 'KEYSLOT', $key);
	foreach ($redis->rawCommand('CLUSTER', 'SLOTS') as [$from, $to, $master]) {
		if ($slot >= $from && $slot <= $to) {
			return (int) $master[1];
		}
	}
	bench_fail("no master serves slot $slot");
}

/** Our store for a group; $fair picks the Redis store's waiting mode. */
function bench_our_store(string $group, bool $fair = true): Lock\Store
{
	return match ($group) {
		'redis' => new Lock\Store\RedisStore('redis://127.0.0.1:' . bench_env('BENCH_REDIS_PORT'), ['fair' => $fair]),
		'tls' => new Lock\Store\RedisStore('rediss://localhost:' . bench_env('BENCH_TLS_PORT'),
			['tls_ca_file' => bench_env('BENCH_TLS_CA'), 'fair' => $fair]),
		// The master of the Sentinel group (two replicas), by its address.
		'primary' => new Lock\Store\RedisStore('redis://127.0.0.1:' . bench_env('BENCH_PRIMARY_PORT'), ['fair' => $fair]),
		'sentinel' => new Lock\Store\RedisStore('redis+sentinel://' . implode(',', array_map(
			static fn (string $p): string => "127.0.0.1:$p", explode(',', bench_env('BENCH_SENTINELS'))))
			. '/' . bench_env('BENCH_SENTINEL_MASTER'), ['fair' => $fair]),
		'cluster' => new Lock\Store\RedisStore('redis+cluster://' . implode(',', array_map(
			static fn (string $p): string => "127.0.0.1:$p", explode(',', bench_env('BENCH_CLUSTER_PORTS')))), ['fair' => $fair]),
		'flock' => new Lock\Store\FlockStore(bench_env('BENCH_DIR')),
		'sem' => new Lock\Store\SemaphoreStore(),
		// --- MemcachedStore ---
		'memcached' => new Lock\Store\MemcachedStore('memcached://127.0.0.1:' . bench_env('BENCH_MEMCACHED_PORT')),
		// --- end MemcachedStore ---
		'pgsql' => new Lock\Store\PostgresStore(bench_env('BENCH_PGSQL_DSN')),
		'mysql' => new Lock\Store\MysqlStore(bench_env('BENCH_MYSQL_DSN')),
	};
}

/** The parts of the database DSN in $env (scheme://user:pass@host:port/db), for PHP's own clients. */
function bench_db_parts(string $env): array
{
	$parts = parse_url(bench_env($env));
	if (!isset($parts['host'], $parts['port'], $parts['user'], $parts['pass'], $parts['path'])) {
		bench_fail("$env is not scheme://user:pass@host:port/db");
	}
	return [$parts['host'], (int) $parts['port'], $parts['user'], $parts['pass'], ltrim($parts['path'], '/')];
}

/** A PDO connection to the benchmark's PostgreSQL ('pgsql') or MariaDB ('mysql'), as Symfony's stores take it. */
function bench_pdo(string $group): PDO
{
	[$host, $port, $user, $pass, $db] = bench_db_parts($group === 'pgsql' ? 'BENCH_PGSQL_DSN' : 'BENCH_MYSQL_DSN');
	return new PDO("$group:host=$host;port=$port;dbname=$db", $user, $pass, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
}

/**
 * The bare primitive on the benchmark's database, over PHP's own client (pgsql, mysqli) and
 * one connection: [take (blocking or not, true when had), give back, close].
 * PostgreSQL: pg_advisory_lock / pg_try_advisory_lock and pg_advisory_unlock on one key;
 * MariaDB: GET_LOCK(name, timeout) and RELEASE_LOCK(name).
 */
function bench_db_floor(string $group, string $resource): array
{
	if ($group === 'pgsql') {
		[$host, $port, $user, $pass, $db] = bench_db_parts('BENCH_PGSQL_DSN');
		$pg = pg_connect("host=$host port=$port user=$user password=$pass dbname=$db");
		if ($pg === false) {
			bench_fail('pg_connect failed');
		}
		$key = unpack('J', hash('sha256', $resource, true))[1];
		$take = static function (bool $block) use ($pg, $key): bool {
			$res = pg_query($pg, $block ? "SELECT pg_advisory_lock($key), true" : "SELECT true, pg_try_advisory_lock($key)");
			return $res !== false && pg_fetch_result($res, 0, 1) === 't';
		};
		$give = static function () use ($pg, $key): void {
			$res = pg_query($pg, "SELECT pg_advisory_unlock($key)");
			if ($res === false || pg_fetch_result($res, 0, 0) !== 't') {
				bench_fail('pg_advisory_unlock failed');
			}
		};
		return [$take, $give, static fn () => pg_close($pg)];
	}
	[$host, $port, $user, $pass, $db] = bench_db_parts('BENCH_MYSQL_DSN');
	mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
	$my = new mysqli($host, $user, $pass, $db, $port);
	$name = "'floor:" . substr(hash('sha256', $resource), 0, 58) . "'";
	$take = static function (bool $block) use ($my, $name): bool {
		return $my->query('SELECT GET_LOCK(' . $name . ', ' . ($block ? 3600 : 0) . ')')->fetch_row()[0] === '1';
	};
	$give = static function () use ($my, $name): void {
		if ($my->query("SELECT RELEASE_LOCK($name)")->fetch_row()[0] !== '1') {
			bench_fail('RELEASE_LOCK failed');
		}
	};
	return [$take, $give, static fn () => $my->close()];
}

/** Symfony's store for a group. */
function bench_symfony_store(string $group): object
{
	return match ($group) {
		'redis' => new SfRedisStore(bench_phpredis()),
		'flock' => new SfFlockStore(bench_env('BENCH_DIR')),
		'sem' => new SfSemaphoreStore(),
		// --- MemcachedStore: Symfony's store on php-memcached (libmemcached too), default options ---
		'memcached' => (static function (): SfMemcachedStore {
			$memcached = new Memcached();
			if (!$memcached->addServer('127.0.0.1', (int) bench_env('BENCH_MEMCACHED_PORT'))) {
				bench_fail('php-memcached cannot add the server');
			}
			return new SfMemcachedStore($memcached);
		})(),
		// --- end MemcachedStore ---
		// Symfony's advisory-lock store (session holds, as ours by default) and its table store on MariaDB.
		'pgsql' => new SfPostgreSqlStore(bench_pdo('pgsql')),
		'mysql' => new SfPdoStore(bench_pdo('mysql'), ['db_table' => 'sf_lock_keys']),
	};
}

/*
 * The contenders. Each builder sets up outside the measurement and returns a
 * function that runs $n cycles, plus a clean-up function.
 *
 *   <group>.ours      Lock\Factory::createLock() once, then acquire()+release() per cycle
 *   <group>.ours-new  createLock()+acquire()+release() per cycle (a lock object per request)
 *   <group>.symfony   Symfony's LockFactory::createLock() once, then acquire()+release()
 *   <group>.symfony-new  createLock()+acquire()+release() per cycle
 *   redis.phpredis    SET NX PX + EVALSHA of a compare-and-delete script, by hand
 *   tls.ours, tls.phpredis  the same over verified TLS (the topology group's TLS server)
 *   primary.ours      the master of the topology group's Sentinel group (two replicas), by address
 *   primary.ours-replicas  the same with replicas => 1: every acquire waits for WAIT 1
 *   sentinel.ours, cluster.ours  through the sentinels, and on a cluster
 *   cluster.ours-direct    the plain store on the master of the resource's slot, by address
 *   flock.floor       the bare primitive: PHP's flock($fp, LOCK_EX | LOCK_NB) + flock($fp, LOCK_UN)
 *                     on a file opened once
 *   sem.floor         the bare primitive: PHP's sem_acquire() + sem_release() on a set got once
 *   pgsql.floor       the bare primitive: pg_try_advisory_lock() + pg_advisory_unlock(), PHP's pgsql client
 *   mysql.floor       the bare primitive: GET_LOCK(name, 0) + RELEASE_LOCK(name), PHP's mysqli
 *   pgsql.symfony     Symfony's PostgreSqlStore (advisory locks over PDO); mysql.symfony: its PdoStore (a table)
 *   <pgsql|mysql>.ours-table  our store with holds => 'table'
 *   <group>.ours-read, <group>.symfony-read  as ours and symfony, with acquireRead()
 *                     (redis and flock: Symfony's semaphore store has no read holds)
 *   redlock.*         one lock over several Redis servers (bench/redlock.php)
 */
function bench_contender(string $name, string $resource): array
{
	[$group, $who] = explode('.', $name, 2) + [1 => ''];
	if ($group === 'redlock') {
		return bench_redlock_contender($who, $resource);
	}
	if (!in_array($group, ['redis', 'flock', 'sem', 'tls', 'primary', 'sentinel', 'cluster', 'memcached', 'pgsql', 'mysql'], true)) {
		bench_fail("unknown contender $name");
	}
	if ($group === 'redis' && bench_is_framework($who)) {
		return bench_framework_contender($who, $resource);
	}
	switch ($who) {
		case 'ours':
			return bench_ours_cycle(bench_our_store($group), $resource);

		case 'ours-new':
			$store = bench_our_store($group);
			$factory = new Lock\Factory($store);
			$run = static function (int $n) use ($factory, $resource): void {
				for ($i = 0; $i < $n; $i++) {
					$lock = $factory->createLock($resource);
					if (!$lock->acquire()) {
						bench_fail('acquire failed');
					}
					$lock->release();
				}
			};
			return [$run, static fn () => $store->forceRelease($resource)];

		case 'symfony':
			bench_symfony();
			return bench_symfony_cycle((new SfFactory(bench_symfony_store($group)))->createLock($resource));

		case 'ours-read':
		case 'symfony-read':
			if ($group === 'sem') {
				break;
			}
			if ($who === 'ours-read') {
				$store = bench_our_store($group);
				$lock = (new Lock\Factory($store))->createLock($resource);
				$cleanup = static fn () => $store->forceRelease($resource);
			} else {
				bench_symfony();
				$lock = (new SfFactory(bench_symfony_store($group)))->createLock($resource);
				$cleanup = static fn () => null;
			}
			$run = static function (int $n) use ($lock): void {
				for ($i = 0; $i < $n; $i++) {
					if (!$lock->acquireRead()) {
						bench_fail('acquireRead failed');
					}
					$lock->release();
				}
			};
			return [$run, $cleanup];

		case 'symfony-new':
			bench_symfony();
			$factory = new SfFactory(bench_symfony_store($group));
			$run = static function (int $n) use ($factory, $resource): void {
				for ($i = 0; $i < $n; $i++) {
					$lock = $factory->createLock($resource);
					if (!$lock->acquire()) {
						bench_fail('acquire failed');
					}
					$lock->release();
				}
			};
			return [$run, static fn () => null];

		case 'ours-direct':
			// The plain store on the master of the resource's slot, by address: a cluster without its topology layer.
			if ($group !== 'cluster') {
				break;
			}
			return bench_ours_cycle(
				new Lock\Store\RedisStore('redis://127.0.0.1:' . bench_cluster_master_port('{' . $resource . '}')), $resource);

		case 'ours-table':
			// holds => 'table': expiring rows of a table (the peer of Symfony's PdoStore).
			if ($group !== 'pgsql' && $group !== 'mysql') {
				break;
			}
			$class = $group === 'pgsql' ? Lock\Store\PostgresStore::class : Lock\Store\MysqlStore::class;
			return bench_ours_cycle(new $class(bench_env($group === 'pgsql' ? 'BENCH_PGSQL_DSN' : 'BENCH_MYSQL_DSN'),
				['holds' => 'table']), $resource);

		case 'ours-replicas':
			return bench_ours_cycle(
				new Lock\Store\RedisStore('redis://127.0.0.1:' . bench_env('BENCH_PRIMARY_PORT'), ['replicas' => 1]), $resource);

		case 'phpredis':
			if ($group !== 'redis' && $group !== 'tls') {
				break;
			}
			$redis = bench_phpredis($group === 'tls');
			$script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
			$sha = $redis->script('load', $script);
			if (!is_string($sha)) {
				bench_fail('SCRIPT LOAD failed');
			}
			$key = $resource;
			$token = bin2hex(random_bytes(16));
			$run = static function (int $n) use ($redis, $sha, $key, $token): void {
				for ($i = 0; $i < $n; $i++) {
					if (!$redis->set($key, $token, ['NX', 'PX' => 30000])) {
						bench_fail('SET NX failed');
					}
					$redis->evalSha($sha, [$key, $token], 1);
				}
			};
			return [$run, static fn () => $redis->del($key)];

		case 'floor':
			if ($group === 'flock') {
				$path = bench_env('BENCH_DIR') . '/floor-' . bin2hex(random_bytes(4));
				$fp = fopen($path, 'c');
				if ($fp === false) {
					bench_fail("cannot open $path");
				}
				$run = static function (int $n) use ($fp): void {
					for ($i = 0; $i < $n; $i++) {
						if (!flock($fp, LOCK_EX | LOCK_NB)) {
							bench_fail('flock failed');
						}
						flock($fp, LOCK_UN);
					}
				};
				return [$run, static function () use ($fp, $path): void {
					fclose($fp);
					unlink($path);
				}];
			}
			if ($group === 'pgsql' || $group === 'mysql') {
				[$take, $give, $close] = bench_db_floor($group, $resource);
				$run = static function (int $n) use ($take, $give): void {
					for ($i = 0; $i < $n; $i++) {
						if (!$take(false)) {
							bench_fail('the bare primitive did not take the lock');
						}
						$give();
					}
				};
				return [$run, $close];
			}
			if ($group === 'sem') {
				$sem = sem_get(random_int(0x10000000, 0x7fffffff), 1, 0600, false);
				if ($sem === false) {
					bench_fail('sem_get failed');
				}
				$run = static function (int $n) use ($sem): void {
					for ($i = 0; $i < $n; $i++) {
						if (!sem_acquire($sem, true)) {
							bench_fail('sem_acquire failed');
						}
						sem_release($sem);
					}
				};
				return [$run, static fn () => sem_remove($sem)];
			}
			break;
	}
	bench_fail("unknown contender $name");
}

/** The process's resident set size in kB. */
function bench_rss_kb(): int
{
	$status = file_get_contents('/proc/self/status');
	if ($status === false || !preg_match('/^VmRSS:\s+(\d+)\s+kB/m', $status, $m)) {
		bench_fail('cannot read VmRSS from /proc/self/status');
	}
	return (int) $m[1];
}

/** Runs batches of $run until $seconds have passed; returns [cycles, seconds]. */
function bench_for(callable $run, float $seconds): array
{
	$cycles = 0;
	$start = hrtime(true);
	$end = $start + (int) ($seconds * 1e9);
	do {
		$run(BATCH);
		$cycles += BATCH;
		$now = hrtime(true);
	} while ($now < $end);
	return [$cycles, ($now - $start) / 1e9];
}

if ($argc < 4) {
	bench_fail('usage: worker.php <contender> serve <warmup-seconds> | mem <cycles> <warmup-cycles>');
}
$name = $argv[1];
$mode = $argv[2];
$resource = bench_env('BENCH_RESOURCE') . ':' . $name;
if (str_starts_with($name, 'handoff.') || str_starts_with($name, 'contend.')) {
	if ($mode !== 'serve') {
		bench_fail("$name only serves");
	}
	require __DIR__ . '/waiting.php';
	bench_waiting_serve($name, $resource, (float) $argv[3]);
	exit(0);
}
[$run, $cleanup] = bench_contender($name, $resource);

if ($mode === 'serve') {
	bench_for($run, (float) $argv[3]);
	echo "ready\n";
	while (($line = fgets(STDIN)) !== false) {
		$command = explode(' ', trim($line));
		if ($command[0] === 'quit') {
			break;
		}
		if ($command[0] !== 'rate' || !isset($command[1])) {
			bench_fail('unknown command ' . trim($line));
		}
		/* One batch first: the process sat idle while the others ran. */
		$run(BATCH);
		[$cycles, $seconds] = bench_for($run, (float) $command[1]);
		printf("%d %.6f\n", $cycles, $seconds);
	}
} elseif ($mode === 'mem' && $argc === 5) {
	/* The first read compiles and JIT-compiles the pattern (about 200 kB): keep that out of the growth. */
	bench_rss_kb();
	$run((int) $argv[4]);
	$before = bench_rss_kb();
	for ($left = (int) $argv[3]; $left > 0; $left -= 1000) {
		$run(min(1000, $left));
	}
	printf("%d %d\n", $before, bench_rss_kb());
} else {
	bench_fail("unknown mode $mode");
}
$cleanup();
