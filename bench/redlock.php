<?php
/*
 * The contenders of the redlock group, loaded by worker.php and waiting.php: one
 * lock over several independent Redis servers, ours (Lock\Store\CombinedStore) beside
 * one RedisStore, Symfony's CombinedStore and the bare fan over the same servers.
 * BENCH_REDLOCK_PORTS names the group's five loopback redis-servers (run.sh starts
 * them); the first is the one server of the single-server contenders.
 *
 *   redlock.ours-one     our RedisStore on the first server
 *   redlock.ours-three   our CombinedStore of the first three (consensus: a majority)
 *   redlock.ours-five    our CombinedStore of all five
 *   redlock.ours-slow    our CombinedStore of the first two and the third behind a TCP
 *                        proxy (tests/inc/proxy.php, started by this process) that
 *                        delays every byte by SLOW_MS / 2 each way: one member 50 ms slower
 *   redlock.ours-one-net, redlock.ours-three-net, redlock.ours-five-net
 *                        the same stores with every server behind a proxy of its own
 *                        that delays every byte by NET_MS / 2 each way: a network whose
 *                        round trip, not the machine's CPUs, is the cost, as between hosts
 *   redlock.symfony-one  Symfony 5.4's RedisStore on the first server, over phpredis
 *   redlock.symfony-three  Symfony 5.4's CombinedStore (ConsensusStrategy) of three of
 *                        its RedisStores, each over a phpredis connection of its own
 *   redlock.floor-one, redlock.floor-three, redlock.floor-five
 *                        the bare fan: SET NX PX to every server at once, then an
 *                        EVALSHA compare-and-delete to every server at once, over
 *                        non-blocking sockets and one stream_select(), each step done
 *                        when every server answered: what two round trips to that many
 *                        servers at once cost on the machine, with no lock around them
 * Waiting (handoff group): handoff.redlock.ours-one, -three, -five, the blocking
 * acquire of the same stores.
 */

declare(strict_types=1);

use Symfony\Component\Lock\LockFactory as SfFactory;
use Symfony\Component\Lock\Store\CombinedStore as SfCombinedStore;
use Symfony\Component\Lock\Store\RedisStore as SfRedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy as SfConsensusStrategy;

/* How much slower the slow member's round trip is (ms), half on the way there, half back. */
const SLOW_MS = 50;
/* The round trip of the -net contenders' network (ms). */
const NET_MS = 2;

/** The group's server ports, as BENCH_REDLOCK_PORTS lists them. */
function bench_redlock_ports(): array
{
	$ports = array_map('intval', explode(',', bench_env('BENCH_REDLOCK_PORTS')));
	if (count($ports) < 5) {
		bench_fail('BENCH_REDLOCK_PORTS must list five ports');
	}
	return $ports;
}

/**
 * The port of a proxy in front of $port that delays every byte by $ms / 2 each way.
 * The proxy ends with this process (its stdin closes).
 */
function bench_redlock_proxy_port(int $port, int $ms): int
{
	static $proxies = [];

	$script = dirname(__DIR__) . '/tests/inc/proxy.php';
	$proc = proc_open([PHP_BINARY, $script, '127.0.0.1', (string) $port], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => STDERR], $pipes);
	if ($proc === false) {
		bench_fail("cannot start $script");
	}
	$listening = fgets($pipes[1]);
	if ($listening === false || !preg_match('/^listening (\d+)$/', trim($listening), $m)) {
		bench_fail('the proxy did not start');
	}
	fwrite($pipes[0], sprintf("delay %d %d\n", intdiv($ms, 2), $ms - intdiv($ms, 2)));
	if (trim((string) fgets($pipes[1])) !== 'ok') {
		bench_fail('the proxy refused the delay');
	}
	/* Kept open for the life of this process: a proxy ends when its stdin closes. */
	$proxies[] = [$proc, $pipes];
	return (int) $m[1];
}

/** Our store of a redlock contender: 'one', 'three', 'five', 'slow', or one of the first three and '-net'. */
function bench_redlock_store(string $which): Lock\Store
{
	$ports = bench_redlock_ports();
	$redis = static fn (int $port): Lock\Store\RedisStore => new Lock\Store\RedisStore("redis://127.0.0.1:$port");
	return match ($which) {
		'one' => $redis($ports[0]),
		'three' => new Lock\Store\CombinedStore(array_map($redis, array_slice($ports, 0, 3))),
		'five' => new Lock\Store\CombinedStore(array_map($redis, array_slice($ports, 0, 5))),
		'slow' => new Lock\Store\CombinedStore([$redis($ports[0]), $redis($ports[1]), $redis(bench_redlock_proxy_port($ports[2], SLOW_MS))]),
		'one-net' => $redis(bench_redlock_proxy_port($ports[0], NET_MS)),
		'three-net', 'five-net' => new Lock\Store\CombinedStore(array_map(
			static fn (int $port) => $redis(bench_redlock_proxy_port($port, NET_MS)),
			array_slice($ports, 0, $which === 'three-net' ? 3 : 5))),
		default => bench_fail("unknown redlock store $which"),
	};
}

/** A phpredis connection to $port. */
function bench_redlock_phpredis(int $port): Redis
{
	$redis = new Redis();
	if (!$redis->connect('127.0.0.1', $port, 2.0)) {
		bench_fail("phpredis cannot connect to port $port");
	}
	return $redis;
}

/** One command in RESP. */
function bench_resp(string ...$args): string
{
	$out = '*' . count($args) . "\r\n";
	foreach ($args as $arg) {
		$out .= '$' . strlen($arg) . "\r\n$arg\r\n";
	}
	return $out;
}

/**
 * Sends $request to every socket at once and waits, in one stream_select() at a time,
 * until each answered with one line; returns the answers (one-line replies only).
 */
function bench_fan(array $socks, string $request): array
{
	foreach ($socks as $sock) {
		if (fwrite($sock, $request) !== strlen($request)) {
			bench_fail('the bare fan could not send');
		}
	}
	$answers = array_fill(0, count($socks), '');
	$left = $socks;
	while ($left !== []) {
		$read = $left;
		$write = $except = null;
		if (stream_select($read, $write, $except, 2) < 1) {
			bench_fail('a server of the bare fan did not answer within 2 s');
		}
		foreach ($read as $i => $sock) {
			$bytes = fread($sock, 512);
			if ($bytes === false || $bytes === '') {
				bench_fail('a server of the bare fan hung up');
			}
			$answers[$i] .= $bytes;
			if (str_ends_with($answers[$i], "\r\n")) {
				unset($left[$i]);
			}
		}
	}
	return $answers;
}

/** The bare fan over the first $n servers: the run and clean-up functions of a contender. */
function bench_redlock_floor(int $n, string $resource): array
{
	$script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
	$socks = [];
	foreach (array_slice(bench_redlock_ports(), 0, $n) as $port) {
		$sock = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 2.0);
		if ($sock === false) {
			bench_fail("the bare fan cannot connect to port $port: $errstr");
		}
		socket_set_option(socket_import_stream($sock), SOL_TCP, TCP_NODELAY, 1);
		stream_set_read_buffer($sock, 0);
		stream_set_write_buffer($sock, 0);
		stream_set_blocking($sock, false);
		$socks[] = $sock;
	}
	$sha = sha1($script);
	foreach (bench_fan($socks, bench_resp('SCRIPT', 'LOAD', $script)) as $answer) {
		if (!str_contains($answer, $sha)) {
			bench_fail('SCRIPT LOAD failed: ' . trim($answer));
		}
	}
	$token = bin2hex(random_bytes(16));
	$take = bench_resp('SET', $resource, $token, 'NX', 'PX', '30000');
	$give = bench_resp('EVALSHA', $sha, '1', $resource, $token);
	$run = static function (int $cycles) use ($socks, $take, $give): void {
		for ($i = 0; $i < $cycles; $i++) {
			foreach (bench_fan($socks, $take) as $answer) {
				if ($answer !== "+OK\r\n") {
					bench_fail('SET NX failed: ' . trim($answer));
				}
			}
			bench_fan($socks, $give);
		}
	};
	return [$run, static fn () => bench_fan($socks, bench_resp('DEL', $resource))];
}

/** Symfony 5.4's store of a redlock contender: 'one' (a RedisStore) or 'three' (a CombinedStore of three). */
function bench_redlock_symfony_store(string $which): object
{
	bench_symfony();
	$ports = bench_redlock_ports();
	return match ($which) {
		'one' => new SfRedisStore(bench_redlock_phpredis($ports[0])),
		'three' => new SfCombinedStore(array_map(static fn (int $port) => new SfRedisStore(bench_redlock_phpredis($port)),
			array_slice($ports, 0, 3)), new SfConsensusStrategy()),
		default => bench_fail("unknown Symfony redlock store $which"),
	};
}

/** A redlock contender of the rate group: the run and clean-up functions. */
function bench_redlock_contender(string $who, string $resource): array
{
	$counts = ['one' => 1, 'three' => 3, 'five' => 5];
	[$kind, $which] = explode('-', $who, 2) + [1 => ''];
	if ($kind === 'ours' && in_array($which, ['one', 'three', 'five', 'slow', 'one-net', 'three-net', 'five-net'], true)) {
		return bench_ours_cycle(bench_redlock_store($which), $resource);
	}
	if ($kind === 'floor' && isset($counts[$which])) {
		return bench_redlock_floor($counts[$which], $resource);
	}
	if ($kind === 'symfony' && ($which === 'one' || $which === 'three')) {
		bench_symfony();
		return bench_symfony_cycle((new SfFactory(bench_redlock_symfony_store($which)))->createLock($resource));
	}
	bench_fail("unknown contender redlock.$who");
}
