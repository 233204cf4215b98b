--TEST--
redis_tls: with persistent=1 the next request of a php -S worker reuses its TLS session, also after a fatal request; without it the session closes at request end
--EXTENSIONS--
lock
posix
--SKIPIF--
<?php
require_once __DIR__ . '/../inc/topology.inc';
lock_test_topology_skipif('LOCK_TEST_TLS_DIR');
?>
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';
require_once __DIR__ . '/../inc/topology.inc';

// A private TLS server (its plain port is ours for inspection), so that every other connection is the worker's.
$tlsPort = lock_test_free_port();
$redis = new LockTestRedisServer(['--tls-port', (string) $tlsPort, '--tls-cert-file', lock_test_tls_file('server.crt'),
    '--tls-key-file', lock_test_tls_file('server.key'), '--tls-ca-cert-file', lock_test_tls_file('ca.crt'),
    '--tls-auth-clients', 'no']);
$resp = $redis->client();
$web = new LockTestWebServer();
$pid = $web->workerPid();
$params = ['store' => 'redis-tls', 'port' => $tlsPort, 'ca' => lock_test_tls_file('ca.crt'), 'prefix' => 'p:', 'resource' => 'r'];

echo "-- persistent=1\n";
echo trim($web->get(['action' => 'use', 'persistent' => '1'] + $params)), "\n";
$ids = $resp->otherClientIds();
var_dump(count($ids));
$same = true;
for ($i = 0; $i < 5; $i++) {
    echo trim($web->get(['action' => 'use', 'persistent' => '1'] + $params)), "\n";
    $same = $same && $resp->otherClientIds() === $ids;
}
echo 'the same session across requests: ', var_export($same, true), "\n";
$web->get(['action' => 'fatal', 'persistent' => '1'] + $params);
echo 'after a fatal request: ', var_export($resp->otherClientIds() === $ids, true), "\n";
echo trim($web->get(['action' => 'use', 'persistent' => '1'] + $params)), "\n";

echo "-- persistent=0\n";
$resp->ok('CLIENT', 'KILL', 'ID', (string) $ids[0]);
lock_test_wait_until(fn () => $resp->otherClientIds() === [], 30, 'the persistent session to close');
// The worker finds its pooled session closed by the server and opens a new one.
for ($i = 0; $i < 3; $i++) {
    echo trim($web->get(['action' => 'use'] + $params)), "\n";
    lock_test_wait_until(fn () => $resp->otherClientIds() === [], 30, 'the session to close at request end');
    echo "closed at request end\n";
}
var_dump($web->workerPid() === $pid);
?>
--EXPECT--
-- persistent=1
acquired=true
int(1)
acquired=true
acquired=true
acquired=true
acquired=true
acquired=true
the same session across requests: true
after a fatal request: true
acquired=true
-- persistent=0
acquired=true
closed at request end
acquired=true
closed at request end
acquired=true
closed at request end
bool(true)
