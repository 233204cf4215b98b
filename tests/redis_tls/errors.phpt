--TEST--
redis_tls: a wrong CA, an expired certificate, a wrong name, a missing or foreign client certificate and a plain server behind rediss:// are a StorageException naming the cause within the timeout; tls_verify=false and tls_server_name change what is checked
--EXTENSIONS--
lock
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_REDIS_TLS_PORT', 'LOCK_TEST_REDIS_MTLS_PORT', 'LOCK_TEST_REDIS_TLS_EXPIRED_PORT',
    'LOCK_TEST_REDIS_TLS_WRONGNAME_PORT', 'LOCK_TEST_REDIS_TLS_PLAIN_PORT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/topology.inc';

// A TLS handshake under valgrind takes seconds.
$timeout = lock_test_valgrind() ? 30.0 : 0.5;
/** Tries one acquire+release over TLS to $port with $options; prints the outcome and whether it kept to the timeout. */
function attempt(string $what, string $host, string $port, array $options, bool $causeVaries = false): void
{
    global $timeout;
    $store = new Lock\Store\RedisStore("rediss://$host:" . lock_test_topology_port($port),
        $options + ['prefix' => lock_test_prefix(), 'timeout' => $timeout]);
    $lock = new Lock\Lock('r', $store);
    $start = hrtime(true);
    try {
        $got = $lock->acquire();
        $lock->release();
        $outcome = 'acquired: ' . var_export($got, true);
    } catch (Lock\LockException $e) {
        // The message names the server and the cause; the port is the test's own.
        $outcome = get_class($e) . ': ' . str_replace([':' . lock_test_topology_port($port) . ':', 'after ' . (int) ($timeout * 1000) . ' ms'],
            [':PORT:', 'after TIMEOUT ms'], $e->getMessage());
        if ($causeVaries) {
            // A server that refuses our certificate after the handshake (TLS 1.3) ends the
            // session; we see its alert or the reset, whichever comes first.
            $outcome = get_class($e) . ', names the server: ' . var_export(str_contains($outcome, 'Redis at localhost:PORT: '), true);
        }
    }
    $ms = (hrtime(true) - $start) / 1e6;
    echo "$what: $outcome", $ms <= $timeout * 1000 + 500 ? '' : " (took $ms ms)", "\n";
}

$ca = ['tls_ca_file' => lock_test_tls_file('ca.crt')];
attempt('verified by name', 'localhost', 'LOCK_TEST_REDIS_TLS_PORT', $ca);
attempt('verified by address', '127.0.0.1', 'LOCK_TEST_REDIS_TLS_PORT', $ca);
attempt('another CA', 'localhost', 'LOCK_TEST_REDIS_TLS_PORT', ['tls_ca_file' => lock_test_tls_file('other-ca.crt')]);
attempt('expired', 'localhost', 'LOCK_TEST_REDIS_TLS_EXPIRED_PORT', $ca);
attempt('wrong name', 'localhost', 'LOCK_TEST_REDIS_TLS_WRONGNAME_PORT', $ca);
attempt('wrong name, named', 'localhost', 'LOCK_TEST_REDIS_TLS_WRONGNAME_PORT', $ca + ['tls_server_name' => 'wrong.example']);
attempt('a name we ask for that it lacks', 'localhost', 'LOCK_TEST_REDIS_TLS_PORT', $ca + ['tls_server_name' => 'db.example']);
attempt('expired, unverified', 'localhost', 'LOCK_TEST_REDIS_TLS_EXPIRED_PORT', ['tls_verify' => false]);
attempt('plain server', '127.0.0.1', 'LOCK_TEST_REDIS_TLS_PLAIN_PORT', $ca);
echo "-- mutual TLS\n";
attempt('with our certificate', 'localhost', 'LOCK_TEST_REDIS_MTLS_PORT',
    $ca + ['tls_cert' => lock_test_tls_file('client.crt'), 'tls_key' => lock_test_tls_file('client.key')]);
attempt('without one', 'localhost', 'LOCK_TEST_REDIS_MTLS_PORT', $ca, true);
attempt('with one of another CA', 'localhost', 'LOCK_TEST_REDIS_MTLS_PORT',
    $ca + ['tls_cert' => lock_test_tls_file('other-client.crt'), 'tls_key' => lock_test_tls_file('other-client.key')], true);
echo "-- files OpenSSL cannot load\n";
$dir = lock_test_tmpdir('tls');
file_put_contents("$dir/junk.pem", "not a certificate\n");
foreach ([
    'a CA that is not one' => ['tls_ca_file' => "$dir/junk.pem"],
    'a key of another certificate' => ['tls_cert' => lock_test_tls_file('client.crt'), 'tls_key' => lock_test_tls_file('other-client.key')],
] as $what => $options) {
    try {
        new Lock\Store\RedisStore('rediss://localhost:1', $options);
        echo "$what: no exception\n";
    } catch (Lock\LockException $e) {
        echo "$what: ", get_class($e), ': ',
            str_replace([$dir, getenv('LOCK_TEST_TLS_DIR')], ['DIR', 'TLS'], $e->getMessage()), "\n";
    }
}
?>
--EXPECT--
verified by name: acquired: true
verified by address: acquired: true
another CA: Lock\StorageException: Lock "r": Redis at localhost:PORT: cannot connect: certificate verification failed: self-signed certificate in certificate chain
expired: Lock\StorageException: Lock "r": Redis at localhost:PORT: cannot connect: certificate verification failed: certificate has expired
wrong name: Lock\StorageException: Lock "r": Redis at localhost:PORT: cannot connect: certificate verification failed: hostname mismatch
wrong name, named: acquired: true
a name we ask for that it lacks: Lock\StorageException: Lock "r": Redis at localhost:PORT: cannot connect: certificate verification failed: hostname mismatch
expired, unverified: acquired: true
plain server: Lock\StorageException: Lock "r": Redis at 127.0.0.1:PORT: cannot connect: timed out after TIMEOUT ms in the TLS handshake (does the server speak TLS on this port?)
-- mutual TLS
with our certificate: acquired: true
without one: Lock\StorageException, names the server: true
with one of another CA: Lock\StorageException, names the server: true
-- files OpenSSL cannot load
a CA that is not one: Lock\StorageException: Redis: cannot load the CA of tls_ca_file 'DIR/junk.pem': no certificate or crl found
a key of another certificate: Lock\StorageException: Redis: cannot load tls_key 'TLS/other-client.key': key values mismatch
