--TEST--
redis: requirepass and ACL users: a wrong password is a StorageException that does not show it; the right one works
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/redis.inc';

$password = 'S3cret-pw';
$server = new LockTestRedisServer(['--requirepass', $password], $password);
$server->client()->ok('ACL', 'SETUSER', 'alice', 'on', '>Al1ce-pw', '~*', '&*', '+@all');
$server->client()->ok('ACL', 'SETUSER', 'odd', 'on', '>p@ss:w/rd%?&#', '~*', '&*', '+@all');
$port = $server->port;

/** Makes a store and uses it; reports what happened without ever printing a secret. */
function try_store(string $what, string $dsn, array $options = [], array $secrets = []): void
{
    try {
        $store = new Lock\Store\RedisStore($dsn, $options + ['prefix' => 'p:']);
        $lock = new Lock\Lock('r', $store);
        $ok = $lock->acquire();
        $lock->release();
        echo "$what: works ", var_export($ok, true), "\n";
    } catch (Lock\StorageException $e) {
        $leak = false;
        foreach ($secrets as $secret) {
            $leak = $leak || str_contains($e->getMessage(), $secret);
        }
        echo "$what: StorageException, names the endpoint: ",
            var_export(str_contains($e->getMessage(), '127.0.0.1:' . $GLOBALS['port']), true),
            ', shows the password: ', var_export($leak, true), "\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), "\n";
    }
}

$secrets = [$password, 'Al1ce-pw', 'wrong-pw', 'p@ss:w/rd%?&#', 'p%40ss'];
try_store('no password', "redis://127.0.0.1:$port", [], $secrets);
try_store('wrong password in the DSN', "redis://:wrong-pw@127.0.0.1:$port", [], $secrets);
try_store('wrong password as an option', "redis://127.0.0.1:$port", ['password' => 'wrong-pw'], $secrets);
try_store('right password in the DSN', "redis://:$password@127.0.0.1:$port", [], $secrets);
try_store('right password as an option', "redis://127.0.0.1:$port", ['password' => $password], $secrets);
try_store('right password in the query', "redis://127.0.0.1:$port?password=$password", [], $secrets);
try_store('ACL user, right password', "redis://alice:Al1ce-pw@127.0.0.1:$port", [], $secrets);
try_store('ACL user as options', "redis://127.0.0.1:$port", ['username' => 'alice', 'password' => 'Al1ce-pw'], $secrets);
try_store('ACL user, wrong password', "redis://alice:wrong-pw@127.0.0.1:$port", [], $secrets);
try_store('unknown ACL user', "redis://mallory:Al1ce-pw@127.0.0.1:$port", [], $secrets);
try_store('percent-encoded password', 'redis://odd:' . rawurlencode('p@ss:w/rd%?&#') . "@127.0.0.1:$port", [], $secrets);
try_store('Factory::fromDsn', "redis://alice:Al1ce-pw@127.0.0.1:$port", [], $secrets);
$lock = Lock\Factory::fromDsn("redis://alice:Al1ce-pw@127.0.0.1:$port?prefix=f:")->createLock('r');
var_dump($lock->acquire());
$lock->release();
try {
    Lock\Factory::fromDsn("redis://alice:wrong-pw@127.0.0.1:$port?prefix=f:")->createLock('r')->acquire();
    echo "no exception\n";
} catch (Lock\StorageException $e) {
    echo 'fromDsn wrong password: StorageException, shows the password: ', var_export(str_contains($e->getMessage(), 'wrong-pw'), true), "\n";
}
?>
--EXPECT--
no password: StorageException, names the endpoint: true, shows the password: false
wrong password in the DSN: StorageException, names the endpoint: true, shows the password: false
wrong password as an option: StorageException, names the endpoint: true, shows the password: false
right password in the DSN: works true
right password as an option: works true
right password in the query: works true
ACL user, right password: works true
ACL user as options: works true
ACL user, wrong password: StorageException, names the endpoint: true, shows the password: false
unknown ACL user: StorageException, names the endpoint: true, shows the password: false
percent-encoded password: works true
Factory::fromDsn: works true
bool(true)
fromDsn wrong password: StorageException, shows the password: false
