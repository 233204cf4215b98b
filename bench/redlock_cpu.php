<?php
/*
 * Where the time of a combined store's cycle goes (run by hand): acquire+release cycles over
 * our RedisStore on the first server and our CombinedStore of the first 3 and of all 5, each
 * with the wall time per cycle, this process's CPU per cycle (getrusage: user and system) and
 * the servers' CPU per cycle (INFO cpu, over phpredis), and its context switches.
 *
 *   php -d extension=modules/lock.so bench/redlock_cpu.php PORT1,PORT2,PORT3,PORT4,PORT5 [cycles]
 *
 * The servers' and the client's CPU over the machine's CPUs is the least wall time a cycle can
 * take when they share the machine, as the redlock group's servers do.
 */

declare(strict_types=1);

if ($argc < 2 || count($ports = array_map('intval', explode(',', $argv[1]))) !== 5) {
	fwrite(STDERR, "usage: redlock_cpu.php PORT1,PORT2,PORT3,PORT4,PORT5 [cycles]\n");
	exit(2);
}
$cycles = (int) ($argv[2] ?? 5000);

/** The CPU seconds the servers on $ports have used. */
function servers_cpu(array $ports): float
{
	$total = 0.0;
	foreach ($ports as $port) {
		$redis = new Redis();
		$redis->connect('127.0.0.1', $port, 2.0);
		$info = $redis->info('cpu');
		$total += $info['used_cpu_sys'] + $info['used_cpu_user'];
		$redis->close();
	}
	return $total;
}

/** Microseconds of a getrusage() time field pair, $b - $a. */
function usage_us(array $a, array $b, string $field): float
{
	return ($b["ru_$field.tv_sec"] - $a["ru_$field.tv_sec"]) * 1e6 + $b["ru_$field.tv_usec"] - $a["ru_$field.tv_usec"];
}

$redis = static fn (int $port): Lock\Store\RedisStore => new Lock\Store\RedisStore("redis://127.0.0.1:$port");
$stores = [
	'one server' => [$redis($ports[0]), [$ports[0]]],
	'3 servers' => [new Lock\Store\CombinedStore(array_map($redis, array_slice($ports, 0, 3))), array_slice($ports, 0, 3)],
	'5 servers' => [new Lock\Store\CombinedStore(array_map($redis, $ports)), $ports],
];
printf("%-10s  %9s  %11s  %11s  %12s  %s\n", '', 'wall', 'client user', 'client sys', 'servers', 'switches (voluntary, forced)');
foreach ($stores as $name => [$store, $used]) {
	$lock = (new Lock\Factory($store))->createLock('redlock-cpu:' . getmypid() . ":$name");
	for ($i = 0; $i < 500; $i++) {
		$lock->acquire() || exit("acquire failed\n");
		$lock->release();
	}
	$servers = servers_cpu($used);
	$before = getrusage();
	$start = hrtime(true);
	for ($i = 0; $i < $cycles; $i++) {
		$lock->acquire() || exit("acquire failed\n");
		$lock->release();
	}
	$wall = (hrtime(true) - $start) / 1e3 / $cycles;
	$after = getrusage();
	$servers = (servers_cpu($used) - $servers) * 1e6 / $cycles;
	printf("%-10s  %6.1f us  %8.1f us  %8.1f us  %9.1f us  %.2f, %.2f a cycle\n", $name, $wall,
		usage_us($before, $after, 'utime') / $cycles, usage_us($before, $after, 'stime') / $cycles, $servers,
		($after['ru_nvcsw'] - $before['ru_nvcsw']) / $cycles, ($after['ru_nivcsw'] - $before['ru_nivcsw']) / $cycles);
}
