--TEST--
network: the test proxy relays, delays, stalls replies, black-holes, drops and cuts (seen by a plain RESP client), so the other network tests cannot pass with a fault that is not there
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/proxy.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$direct = new LockTestResp(lock_test_redis_port());
$proxy = new LockTestProxy(lock_test_redis_port());

/** Reads one reply, or names why there is none (the client's read timeout is 1 s). */
function reply(LockTestResp $c): string
{
    try {
        // A reset connection makes fread() raise a notice; the exception that follows says it.
        return json_encode(@$c->read());
    } catch (RuntimeException $e) {
        return $e->getMessage();
    }
}

$c = new LockTestResp($proxy->port, 1.0);
echo 'pass: ', json_encode($c->cmd('SET', $prefix . 'a', '1')), "\n";

// A delay holds each direction back by at least its amount (a lower bound: the fault is there).
$proxy->delay(150, 100);
[$what, $seconds] = lock_net_timed(fn () => $c->cmd('GET', $prefix . 'a'));
echo "delay: $what, slowed by the delays: ", var_export($seconds >= 0.25, true), "\n";
$proxy->delay(0, 0);

// A stall passes the request on and holds the reply back until pass().
$proxy->stall();
$c->send(['SET', $prefix . 'b', '2']);
$proxy->awaitHeld();
echo 'stall: the server ran it: ', json_encode($direct->cmd('GET', $prefix . 'b')), ', the client got: ', reply($c), "\n";
$proxy->pass();
echo 'after pass: the held reply arrives: ', reply($c), "\n";

// A black hole forwards nothing either way; the connection it broke is reset at pass().
$proxy->blackhole();
$c->send(['SET', $prefix . 'c', '3']);
echo 'blackhole: the client got: ', reply($c), "\n";
echo 'blackhole: the server got: ', json_encode($direct->cmd('GET', $prefix . 'c')), "\n";
$late = new LockTestResp($proxy->port, 1.0);
$late->send(['SET', $prefix . 'c', '3']);
echo 'blackhole: a new connection is accepted, the client got: ', reply($late), "\n";
$proxy->pass();
echo 'after pass: the broken connection: ', reply($c), "\n";
echo 'after pass: the server still has: ', json_encode($direct->cmd('GET', $prefix . 'c')), "\n";

// A cut resets the open connections; new ones are relayed.
$c = new LockTestResp($proxy->port, 1.0);
echo 'new connection: ', json_encode($c->cmd('PING')), "\n";
$proxy->cut();
echo 'cut: ', reply($c), "\n";
$c = new LockTestResp($proxy->port, 1.0);
echo 'after cut: ', json_encode($c->cmd('PING')), "\n";

// A drop closes the open connections and every new one.
$proxy->drop();
echo 'drop: ', reply($c), "\n";
$d = new LockTestResp($proxy->port, 1.0);
try {
    @$d->send(['PING']);
} catch (RuntimeException) {
    // The proxy may have closed it before the write.
}
echo 'drop, new connection: ', reply($d), "\n";
$proxy->pass();
$c = new LockTestResp($proxy->port, 1.0);
echo 'after pass: ', json_encode($c->cmd('PING')), "\n";
$stats = $proxy->stats();
echo 'relayed now: ', $stats['open'], ', held back: ', $stats['held'], "\n";
$direct->cmd('DEL', $prefix . 'a', $prefix . 'b');
?>
--EXPECT--
pass: "OK"
delay: returned '1', slowed by the delays: true
stall: the server ran it: "2", the client got: resp: read timed out
after pass: the held reply arrives: "OK"
blackhole: the client got: resp: read timed out
blackhole: the server got: null
blackhole: a new connection is accepted, the client got: resp: read timed out
after pass: the broken connection: resp: connection closed
after pass: the server still has: null
new connection: "PONG"
cut: resp: connection closed
after cut: "PONG"
drop: resp: connection closed
drop, new connection: resp: connection closed
after pass: "PONG"
relayed now: 1, held back: 0
