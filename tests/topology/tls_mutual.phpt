--TEST--
topology: the mutual-TLS server of the test command serves only clients with a certificate of the test CA; the other TLS server asks for none
--EXTENSIONS--
openssl
--SKIPIF--
<?php
require __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_REDIS_MTLS_PORT', 'LOCK_TEST_REDIS_TLS_PORT');
?>
--FILE--
<?php
require __DIR__ . '/../inc/topology.inc';

/** Connects (verifying the server) with the given client certificate, if any, and sends PING. */
function probe(string $what, int $port, ?string $cert): void
{
    $ssl = ['cafile' => lock_test_tls_file('ca.crt'), 'peer_name' => 'localhost'];
    if ($cert !== null) {
        $ssl['local_cert'] = lock_test_tls_file("$cert.crt");
        $ssl['local_pk'] = lock_test_tls_file("$cert.key");
    }
    $stream = lock_test_tls_connect($port, $ssl);
    // With TLS 1.3 the server judges the client's certificate after the client's handshake
    // is done: a refusal shows as a connection with no reply, or as a failed handshake.
    $reply = is_string($stream) ? 'handshake failed' : lock_test_stream_cmd($stream, 'PING');
    echo "$what: ", $reply === '+PONG' ? 'served' : 'refused', "\n";
}

$mtls = lock_test_topology_port('LOCK_TEST_REDIS_MTLS_PORT');
$tls = lock_test_topology_port('LOCK_TEST_REDIS_TLS_PORT');
probe('mutual TLS, client certificate of the test CA', $mtls, 'client');
probe('mutual TLS, no client certificate', $mtls, null);
probe('mutual TLS, client certificate of another CA', $mtls, 'other-client');
probe('TLS, no client certificate', $tls, null);
probe('TLS, client certificate of the test CA', $tls, 'client');
?>
--EXPECT--
mutual TLS, client certificate of the test CA: served
mutual TLS, no client certificate: refused
mutual TLS, client certificate of another CA: refused
TLS, no client certificate: served
TLS, client certificate of the test CA: served
