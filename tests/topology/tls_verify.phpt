--TEST--
topology: the TLS servers of the test command: verified with the test CA, refused with another CA, an expired certificate, a wrong name or a plain port
--EXTENSIONS--
openssl
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_REDIS_TLS_PORT', 'LOCK_TEST_REDIS_TLS_EXPIRED_PORT', 'LOCK_TEST_REDIS_TLS_WRONGNAME_PORT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

$ca = lock_test_tls_file('ca.crt');

/** Connects with verification against $cafile and names the outcome: PONG, or why the handshake failed. */
function probe(string $what, int $port, string $cafile, string $name, float $timeout = 5.0): void
{
    $stream = lock_test_tls_connect($port, ['cafile' => $cafile, 'peer_name' => $name], $timeout);
    if (is_string($stream)) {
        $reason = match (true) {
            str_contains($stream, 'certificate verify failed') => 'certificate verify failed',
            str_contains($stream, 'did not match expected name') => 'name mismatch',
            default => 'handshake failed',
        };
        echo "$what: refused ($reason)\n";
        return;
    }
    echo "$what: ", lock_test_stream_cmd($stream, 'PING'), "\n";
}

/** The validity of the certificate a server presents, read without verifying it. */
function served(int $port): string
{
    $stream = lock_test_tls_connect($port, ['verify_peer' => false, 'verify_peer_name' => false, 'capture_peer_cert' => true]);
    $cert = openssl_x509_parse(stream_context_get_params($stream)['options']['ssl']['peer_certificate']);
    return $cert['subject']['CN'] . ($cert['validTo_time_t'] < time() ? ', expired' : ', valid')
        . ', ' . $cert['extensions']['subjectAltName'];
}

$tls = lock_test_topology_port('LOCK_TEST_REDIS_TLS_PORT');
$expired = lock_test_topology_port('LOCK_TEST_REDIS_TLS_EXPIRED_PORT');
$wrongname = lock_test_topology_port('LOCK_TEST_REDIS_TLS_WRONGNAME_PORT');

probe('test CA, name localhost', $tls, $ca, 'localhost');
probe('test CA, address 127.0.0.1', $tls, $ca, '127.0.0.1');
probe('unrelated CA', $tls, lock_test_tls_file('other-ca.crt'), 'localhost');
probe('test CA, name another.example', $tls, $ca, 'another.example');
echo 'expired server presents: ', served($expired), "\n";
probe('expired certificate', $expired, $ca, 'localhost');
echo 'wrong-name server presents: ', served($wrongname), "\n";
probe('wrong-name certificate as localhost', $wrongname, $ca, 'localhost');
probe('wrong-name certificate as wrong.example', $wrongname, $ca, 'wrong.example');
// A plain port does not answer a ClientHello at all: only a timeout ends the handshake.
probe('plain port', lock_test_topology_port('LOCK_TEST_REDIS_TLS_PLAIN_PORT'), $ca, 'localhost', 0.5);
echo 'plain port answers plain RESP: ', lock_test_topology_client(lock_test_topology_port('LOCK_TEST_REDIS_TLS_PLAIN_PORT'))->ok('PING'), "\n";
?>
--EXPECT--
test CA, name localhost: +PONG
test CA, address 127.0.0.1: +PONG
unrelated CA: refused (certificate verify failed)
test CA, name another.example: refused (name mismatch)
expired server presents: localhost, expired, DNS:localhost, IP Address:127.0.0.1
expired certificate: refused (certificate verify failed)
wrong-name server presents: wrong.example, valid, DNS:wrong.example
wrong-name certificate as localhost: refused (name mismatch)
wrong-name certificate as wrong.example: +PONG
plain port: refused (handshake failed)
plain port answers plain RESP: PONG
