--TEST--
semaphore: idle sets are removed; a store keeps at most its cache of them (option cache), none once it is gone
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

/** The key SemaphoreStore uses: 0xa7, then the first three bytes of SHA-256("lock-ext-sem/2\0" . name). */
function sem_key(string $name): int
{
    return 0xa7000000 | (unpack('N', hash('sha256', "lock-ext-sem/2\0" . $name, true))[1] >> 8);
}

/** How many of the names have a set now (from /proc/sysvipc/sem). */
function sets_of(array $names): int
{
    $keys = [];
    foreach (array_slice(file('/proc/sysvipc/sem', FILE_IGNORE_NEW_LINES), 1) as $line) {
        $keys[(int) preg_split('/\s+/', trim($line))[0] & 0xffffffff] = true;
    }
    $n = 0;
    foreach ($names as $name) {
        $n += isset($keys[sem_key($name)]) ? 1 : 0;
    }
    return $n;
}

$base = lock_test_resource('idle');
$names = [];
for ($i = 0; $i < 1000; $i++) {
    $names[] = "$base-$i";
}

foreach ([null, 10, 0] as $cache) {
    $store = new Lock\Store\SemaphoreStore($cache === null ? [] : ['cache' => $cache]);
    $ok = 0;
    foreach ($names as $name) {
        $lock = new Lock\Lock($name, $store);
        $ok += $lock->acquire() ? 1 : 0;
        $lock->release();
    }
    $kept = sets_of($names);
    // A lock still held keeps its set whatever the cache.
    $held = new Lock\Lock($names[0], $store);
    $held->acquire();
    $keptHeld = sets_of([$names[0]]);
    $held->release();
    unset($lock, $held, $store);
    printf("cache %s: %d acquired, sets kept %d, held one kept %d, after the store %d\n",
        $cache ?? 'default', $ok, $kept, $keptHeld, sets_of($names));
}

foreach ([['cache' => -1], ['cache' => 65537], ['cache' => '64 sets'], ['cache' => 1.0]] as $options) {
    lock_test_expect_throw(fn () => new Lock\Store\SemaphoreStore($options));
}
var_dump(new Lock\Store\SemaphoreStore(['cache' => 65536, 'mode' => 0600]) instanceof Lock\Store);
?>
--EXPECT--
cache default: 1000 acquired, sets kept 64, held one kept 1, after the store 0
cache 10: 1000 acquired, sets kept 10, held one kept 1, after the store 0
cache 0: 1000 acquired, sets kept 0, held one kept 1, after the store 0
ValueError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) option "cache" must be between 0 and 65536
ValueError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) option "cache" must be between 0 and 65536
TypeError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) option "cache" must be of type int, string given
TypeError: Lock\Store\SemaphoreStore::__construct(): Argument #1 ($options) option "cache" must be of type int, float given
bool(true)
