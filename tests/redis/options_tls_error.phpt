--TEST--
RedisStore: the TLS, Sentinel and replicas options (array and DSN query) are checked: unknown or misplaced keys and bad values a ValueError, wrong types a TypeError, unreadable TLS files a StorageException naming the option and path
--EXTENSIONS--
lock
posix
--INI--
zend.exception_ignore_args=0
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$dir = lock_test_tmpdir('tls');
$cert = "$dir/client.crt";
$key = "$dir/client.key";
$ca = "$dir/ca.pem";
file_put_contents($cert, "not checked yet\n");
file_put_contents($key, "not checked yet\n");
file_put_contents($ca, "not checked yet\n");
mkdir("$dir/certs");
$tls = 'rediss://127.0.0.1:6380';
$new = fn (string $dsn, array $options = []) => fn () => new Lock\Store\RedisStore($dsn, $options);

echo "-- types\n";
foreach (['tls_ca_file' => 1, 'tls_ca_dir' => null, 'tls_cert' => false, 'tls_key' => [], 'tls_server_name' => 1.5,
    'tls_verify' => 1, 'sentinel_username' => 1, 'sentinel_password' => false, 'replicas' => 'one', 'replicas_timeout' => 'soon',
    'replicas ' => 1] as $name => $value) {
    lock_test_expect_throw($new($tls, [$name => $value]));
}

echo "-- values\n";
foreach (['tls_ca_file' => '', 'tls_ca_dir' => '', 'tls_cert' => "a\0b", 'tls_server_name' => '',
    'replicas' => -1, 'replicas_timeout' => 0, 'timeout' => NAN] as $name => $value) {
    lock_test_expect_throw($new($tls, [$name => $value]));
}
lock_test_expect_throw($new($tls, ['replicas_timeout' => -1.0]));
lock_test_expect_throw($new($tls, ['replicas_timeout' => INF]));
lock_test_expect_throw($new('redis+sentinel://h1/m', ['sentinel_password' => "pw\0"]));
lock_test_expect_throw($new("$tls?tls_verify=maybe"));
lock_test_expect_throw($new("$tls?replicas=-1"));
lock_test_expect_throw($new("$tls?replicas=two"));
lock_test_expect_throw($new("$tls?replicas_timeout=0"));
lock_test_expect_throw($new("$tls?tls_ca_file="));

echo "-- TLS options need a rediss DSN\n";
foreach (['tls_ca_file' => $ca, 'tls_ca_dir' => "$dir/certs", 'tls_cert' => $cert, 'tls_key' => $key,
    'tls_server_name' => 'redis.example', 'tls_verify' => true] as $name => $value) {
    lock_test_expect_throw($new('redis://127.0.0.1:6379', [$name => $value]));
}
lock_test_expect_throw($new('redis+sentinel://h1/m?tls_verify=0'));
lock_test_expect_throw($new('redis+cluster://h1,h2', ['tls_server_name' => 'x']));
lock_test_expect_throw($new('redis:///run/redis.sock?tls_ca_file=' . rawurlencode($ca)));

echo "-- Sentinel options need a sentinel DSN\n";
lock_test_expect_throw($new('redis://127.0.0.1:6379', ['sentinel_username' => 'u']));
lock_test_expect_throw($new('rediss://127.0.0.1:6379', ['sentinel_password' => 'hunter2']));
lock_test_expect_throw($new('redis+cluster://h1?sentinel_password=hunter2'));

echo "-- Cluster has database 0 only\n";
lock_test_expect_throw($new('redis+cluster://h1,h2', ['database' => 1]));
lock_test_expect_throw($new('redis+cluster://h1,h2?database=1'));

echo "-- mutual TLS takes both a certificate and its key\n";
lock_test_expect_throw($new($tls, ['tls_cert' => $cert]));
lock_test_expect_throw($new($tls, ['tls_key' => $key]));
lock_test_expect_throw($new("$tls?tls_key=" . rawurlencode($key)));
lock_test_expect_throw($new("$tls?tls_key=" . rawurlencode($key), ['tls_cert' => $cert, 'tls_key' => $key, 'tls_ca_file' => $ca]));

echo "-- TLS files that cannot be read\n";
$show = function (Closure $make) use ($dir) {
    try {
        $make();
        echo "no exception\n";
    } catch (Throwable $e) {
        echo get_class($e), ': ', str_replace($dir, 'DIR', $e->getMessage()), "\n";
    }
};
$show($new($tls, ['tls_ca_file' => "$dir/missing.pem"]));
$show($new($tls, ['tls_ca_file' => "$dir/certs"]));
$show($new($tls, ['tls_ca_dir' => $ca]));
$show($new($tls, ['tls_ca_dir' => "$dir/missing"]));
$show($new($tls, ['tls_cert' => $cert, 'tls_key' => "$dir/missing.key"]));
$show($new("$tls?tls_cert=" . rawurlencode("$dir/missing.crt") . '&tls_key=' . rawurlencode($key)));
// A FIFO is no key file, and checking it must not wait for a writer.
posix_mkfifo("$dir/fifo.key", 0600);
$show($new($tls, ['tls_cert' => $cert, 'tls_key' => "$dir/fifo.key"]));
// A relative path is read from the current directory, and the files that can be read pass to the (missing) TLS layer.
chdir($dir);
$show($new($tls, ['tls_cert' => 'client.crt', 'tls_key' => 'nope.key']));
$show($new($tls, ['tls_cert' => 'client.crt', 'tls_key' => 'client.key', 'tls_ca_file' => 'ca.pem', 'tls_ca_dir' => 'certs']));

echo "-- the sentinels' password shows nowhere\n";
$secret = 'Hunter2-sentinel';
foreach ([
    fn () => new Lock\Store\RedisStore('redis+sentinel://h1/m', ['sentinel_password' => $secret]),
    fn () => new Lock\Store\RedisStore('redis+sentinel://h1/m?sentinel_password=' . $secret),
    fn () => Lock\Factory::fromDsn('rediss+sentinel://:' . $secret . '@h1/m?sentinel_password=' . $secret),
    fn () => new Lock\Store\RedisStore('redis+sentinel://h1/m', ['sentinel_password' => $secret, 'tls_cert' => 'x']),
    fn () => new Lock\Store\RedisStore('redis+sentinel://h1/m?sentinel_password=' . $secret . '&nope=1'),
] as $make) {
    try {
        $make();
        echo "no exception\n";
    } catch (Throwable $e) {
        $seen = str_contains($e->getMessage(), $secret) || str_contains($e->getTraceAsString(), $secret)
            || str_contains(print_r($e, true), $secret) || str_contains(var_export($e, true), $secret);
        echo get_class($e), ', shows the password: ', var_export($seen, true), "\n";
    }
}
?>
--EXPECTF--
-- types
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_file" must be of type string, int given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_dir" must be of type string, null given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_cert" must be of type string, bool given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_key" must be of type string, array given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_server_name" must be of type string, float given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_verify" must be of type bool, int given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "sentinel_username" must be of type ?string, int given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "sentinel_password" must be of type ?string, bool given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas" must be of type int, string given
TypeError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas_timeout" must be of type float, string given
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) contains unknown option "replicas "
-- values
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_file" must not be empty
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_dir" must not be empty
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_cert" must not contain NUL bytes
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_server_name" must not be empty
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas" must be a non-negative integer
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas_timeout" must be greater than 0
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "timeout" must be a finite number
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas_timeout" must be greater than 0
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "replicas_timeout" must be a finite number
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "sentinel_password" must not contain NUL bytes
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "tls_verify" must be 0, 1, true or false
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "replicas" must be a non-negative integer
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "replicas" must be a non-negative integer
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "replicas_timeout" must be greater than 0
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "tls_ca_file" must not be empty
-- TLS options need a rediss DSN
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_file" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_ca_dir" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_cert" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_key" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_server_name" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_verify" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "tls_verify" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_server_name" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "tls_ca_file" needs a rediss:, rediss+sentinel: or rediss+cluster: DSN (TLS)
-- Sentinel options need a sentinel DSN
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "sentinel_username" needs a redis+sentinel: or rediss+sentinel: DSN
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "sentinel_password" needs a redis+sentinel: or rediss+sentinel: DSN
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "sentinel_password" needs a redis+sentinel: or rediss+sentinel: DSN
-- Cluster has database 0 only
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "database" must be 0: Redis Cluster has database 0 only
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "database" must be 0: Redis Cluster has database 0 only
-- mutual TLS takes both a certificate and its key
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_cert" needs "tls_key" too: mutual TLS takes a certificate and its key
ValueError: Lock\Store\RedisStore::__construct(): Argument #2 ($options) option "tls_key" needs "tls_cert" too: mutual TLS takes a certificate and its key
ValueError: Lock\Store\RedisStore::__construct(): Argument #1 ($dsn) query parameter "tls_key" needs "tls_cert" too: mutual TLS takes a certificate and its key
Lock\StorageException: Redis: cannot load the CA of tls_ca_file '%s/ca.pem': no certificate or crl found
-- TLS files that cannot be read
Lock\StorageException: Redis: tls_ca_file "DIR/missing.pem" cannot be read: No such file or directory
Lock\StorageException: Redis: tls_ca_file "DIR/certs" is not a regular file
Lock\StorageException: Redis: tls_ca_dir "DIR/ca.pem" cannot be read: Not a directory
Lock\StorageException: Redis: tls_ca_dir "DIR/missing" cannot be read: No such file or directory
Lock\StorageException: Redis: tls_key "DIR/missing.key" cannot be read: No such file or directory
Lock\StorageException: Redis: tls_cert "DIR/missing.crt" cannot be read: No such file or directory
Lock\StorageException: Redis: tls_key "DIR/fifo.key" is not a regular file
Lock\StorageException: Redis: tls_key "DIR/nope.key" cannot be read: No such file or directory
Lock\StorageException: Redis: cannot load the CA of tls_ca_file 'DIR/ca.pem': no certificate or crl found
-- the sentinels' password shows nowhere
no exception
no exception
no exception
ValueError, shows the password: false
ValueError, shows the password: false
