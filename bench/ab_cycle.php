<?php
/*
 * One contender of bench/ab.sh: acquire+release cycles of one lock object, reused, for
 * SECONDS, on a store of KIND (flock, sem, redis: the Redis at REDIS_DSN, by default
 * redis://127.0.0.1:6379); prints cycles per second.
 *   php -d extension=BUILD/lock.so bench/ab_cycle.php KIND SECONDS
 */
[, $kind, $seconds] = $argv + [null, '', '0'];
$seconds = (float) $seconds;
$dir = sys_get_temp_dir() . '/lock-ab-' . getmyuid();
$store = match ($kind) {
    'flock' => new Lock\Store\FlockStore($dir),
    'sem' => new Lock\Store\SemaphoreStore(),
    'redis' => new Lock\Store\RedisStore(getenv('REDIS_DSN') ?: 'redis://127.0.0.1:6379'),
    default => null,
};
if ($store === null || $seconds <= 0) {
    fwrite(STDERR, "usage: php bench/ab_cycle.php flock|sem|redis SECONDS\n");
    exit(2);
}
$lock = new Lock\Lock('ab', $store, 30.0);
for ($i = 0; $i < 2000; $i++) {
    $lock->acquire() or exit(1);
    $lock->release();
}
$cycles = 0;
$end = hrtime(true) + (int) ($seconds * 1e9);
do {
    for ($i = 0; $i < 200; $i++) {
        $lock->acquire() or exit(1);
        $lock->release();
    }
    $cycles += 200;
} while (hrtime(true) < $end);
echo $cycles / $seconds, "\n";
