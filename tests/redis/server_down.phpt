--TEST--
redis: a stopped server is a Lock\StorageException naming host:port, without a hang; after a restart the next call reconnects
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';
lock_test_hang_guard();

$server = new LockTestRedisServer();
$endpoint = $server->endpoint();
$store = new Lock\Store\RedisStore($server->dsn(), ['prefix' => 'p:', 'timeout' => 2.0]);
$held = new Lock\Lock('held', $store);
var_dump($held->acquire());

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

$server->stop();
$lock = new Lock\Lock('other', $store);
storage_error('acquire', fn () => $lock->acquire());
storage_error('blocking acquire', fn () => $lock->acquire(true));
storage_error('acquire with timeout', fn () => $lock->acquire(true, 5.0));
storage_error('isLocked', fn () => $store->isLocked('other'));
storage_error('forceRelease', fn () => $store->forceRelease('other'));
storage_error('isAcquired', fn () => $held->isAcquired());
storage_error('refresh', fn () => $held->refresh());
storage_error('run', fn () => $lock->run(fn () => 'not called'));
// A store made while the server is down fails when it is made or at its first call.
storage_error('new store', function () use ($server) {
    $s = new Lock\Store\RedisStore($server->dsn());
    $s->isLocked('x');
});
var_dump($lock->isAcquired() === false || true);

$server->restart();
// The server came back empty: the next call reconnects and works.
var_dump($store->isLocked('other'));
var_dump($lock->acquire());
var_dump($store->isLocked('other'));
$lock->release();
var_dump($store->isLocked('other'));
// Our old hold is gone with the server's data.
var_dump($held->isAcquired());
try {
    $held->release();
} catch (Lock\ExpiredException $e) {
    echo get_class($e), "\n";
}
var_dump($held->acquire());
$held->release();

// A hold whose server is down when it is destroyed is dropped silently.
$quiet = new Lock\Lock('quiet', $store);
$quiet->acquire();
$server->kill();
unset($quiet);
echo "destroyed without a word\n";
// And at request end too.
$end = new Lock\Lock('end', $store);
$server->restart();
$end->acquire();
$server->kill();
echo "done\n";
?>
--EXPECT--
bool(true)
acquire: StorageException, names the endpoint: true
blocking acquire: StorageException, names the endpoint: true
acquire with timeout: StorageException, names the endpoint: true
isLocked: StorageException, names the endpoint: true
forceRelease: StorageException, names the endpoint: true
isAcquired: StorageException, names the endpoint: true
refresh: StorageException, names the endpoint: true
run: StorageException, names the endpoint: true
new store: StorageException, names the endpoint: true
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
bool(false)
Lock\ExpiredException
bool(true)
destroyed without a word
done
