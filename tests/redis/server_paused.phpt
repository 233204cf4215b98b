--TEST--
redis: a server that stops answering (SIGSTOP) is a Lock\StorageException after the timeout, not a hang
--EXTENSIONS--
lock
pcntl
posix
--INI--
lock.redis_timeout=0.3
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
lock_test_hang_guard();

$server = new LockTestRedisServer();
$endpoint = $server->endpoint();

/** Runs $fn and reports the StorageException it must throw. */
function storage_error(string $what, callable $fn): void
{
    global $endpoint;
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Lock\StorageException $e) {
        echo "$what: StorageException, names the endpoint: ", var_export(str_contains($e->getMessage(), $endpoint), true), "\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), ': ', $e->getMessage(), "\n";
    }
}

// The timeout option, and lock.redis_timeout for a store without one.
$withOption = new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'p:', 'timeout' => 0.3]);
$withDsn = new Lock\Store\RedisStore($server->dsn('timeout=0.3&prefix=p:'));
$withIni = new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'p:']);
foreach ([$withOption, $withDsn, $withIni] as $store) {
    var_dump($store->isLocked('x'));
}
$held = new Lock\Lock('held', $withOption);
var_dump($held->acquire());

$server->pause();
storage_error('option: acquire', fn () => (new Lock\Lock('x', $withOption))->acquire());
storage_error('dsn: acquire', fn () => (new Lock\Lock('x', $withDsn))->acquire());
storage_error('ini: acquire', fn () => (new Lock\Lock('x', $withIni))->acquire());
storage_error('blocking acquire', fn () => (new Lock\Lock('x', $withOption))->acquire(true));
storage_error('isLocked', fn () => $withOption->isLocked('x'));
storage_error('release', fn () => $held->release());
// A new connection to a frozen server times out too.
storage_error('new store', function () use ($server) {
    $s = new Lock\Store\RedisStore($server->dsn(), ['timeout' => 0.3]);
    $s->isLocked('x');
});

$server->resume();
// After a timeout the connection may hold a late reply: the store must not read it as the next answer.
foreach ([$withOption, $withDsn, $withIni] as $store) {
    $lock = new Lock\Lock('after', $store);
    var_dump($lock->acquire());
    var_dump($store->isLocked('after'));
    $lock->release();
    var_dump($store->isLocked('after'));
}
?>
--EXPECT--
bool(false)
bool(false)
bool(false)
bool(true)
option: acquire: StorageException, names the endpoint: true
dsn: acquire: StorageException, names the endpoint: true
ini: acquire: StorageException, names the endpoint: true
blocking acquire: StorageException, names the endpoint: true
isLocked: StorageException, names the endpoint: true
release: StorageException, names the endpoint: true
new store: StorageException, names the endpoint: true
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
