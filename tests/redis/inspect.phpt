--TEST--
redis: inspect() says who holds a resource (writer, readers, cooldown), for how long, the last fencing token, and who waits in serving order (the first of the queue is the one the release serves); a dead holder's expired hold reads free; bad input
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';
lock_test_hang_guard(60);

$prefix = lock_test_prefix();
$storeCode = lock_test_store_code('redis', null, $prefix);
$store = lock_test_store('redis', null, $prefix);
$redis = new LockTestResp(lock_test_redis_port());
$key = $prefix . '{r}';

/** The answer with ttl rounded up to whole seconds (it runs down while we look) and the fencing token named, not given (it is a clock reading). */
function seen(array $a): string
{
    if ($a['ttl'] !== null) {
        $a['ttl'] = 'up to ' . ceil($a['ttl']) . ' s';
    }
    if (is_int($a['fencing'])) {
        $a['fencing'] = 'a token';
    }
    return json_encode($a) . "\n";
}

echo "-- free\n", seen($store->inspect('r'));

echo "-- a writer\n";
$w = new Lock\Lock('r', $store, 30.0, owner: 'writer-1');
$w->acquire();
$token = $w->getFencingToken();
$a = $store->inspect('r');
echo seen($a);
var_dump($a['fencing'] === $token);
var_dump($a['ttl'] > 29.0 && $a['ttl'] <= 30.0);

echo "-- three waiters, in the order they came\n";
$waiters = [];
foreach (['first', 'second', 'third'] as $i => $name) {
    $waiters[$name] = new LockTestChild('$lock = new Lock\Lock("r", ' . $storeCode . ', 30.0, owner: ' . var_export($name, true) . ");\n" . <<<'PHP'
echo $lock->acquire(true, 30.0) ? "held\n" : "timed out\n";
fgets(STDIN);
PHP);
    lock_test_wait_until(fn () => $redis->ok('LLEN', $key . ':q') === $i + 1, 20, "waiter $name to queue");
}
$a = $store->inspect('r');
echo json_encode(['owners' => $a['owners'], 'waiters' => $a['waiters'], 'queue' => $a['queue']]), "\n";
echo "-- the release serves the first of the queue\n";
$w->release();
echo trim($waiters['first']->waitFor('held')), "\n";
$a = $store->inspect('r');
echo json_encode(['mode' => $a['mode'], 'owners' => $a['owners'], 'queue' => $a['queue'], 'newer token' => $a['fencing'] > $token]), "\n";
foreach ($waiters as $name => $child) {
    if ($name !== 'first') {
        $child->kill();
    }
}
$waiters['first']->send('go');
$waiters['first']->wait();
lock_test_wait_until(fn () => !$store->isLocked('r'), 20, 'the resource to be free');

echo "-- readers\n";
$r1 = new Lock\Lock('r', $store, 30.0, owner: 'reader-1');
$r2 = new Lock\Lock('r', $store, null, owner: 'reader-2');
$r1->acquireRead();
$r2->acquireRead();
$a = $store->inspect('r');
sort($a['owners']);
echo seen($a);
$r2->release();
$a = $store->inspect('r');
echo json_encode(['mode' => $a['mode'], 'owners' => $a['owners'], 'ttl' => $a['ttl'] !== null]), "\n";
$r1->release();

echo "-- a cooldown\n";
$w->acquire();
$w->release(2.0);
echo seen($store->inspect('r'));
$store->forceRelease('r');

echo "-- a holder that died: its hold expires\n";
$dead = new LockTestChild('$lock = new Lock\Lock("r", ' . $storeCode . ", 0.3, owner: 'dead');\n" . <<<'PHP'
$lock->acquire() or exit(1);
echo "held\n";
posix_kill(getmypid(), SIGKILL);
PHP);
$dead->waitFor('held');
$a = $store->inspect('r');
echo json_encode(['mode' => $a['mode'], 'owners' => $a['owners']]), "\n";
lock_test_wait_until(fn () => $store->inspect('r')['mode'] === null, 20, 'the dead hold to expire');
echo json_encode($store->inspect('r')['held']), "\n";

echo "-- bad input\n";
foreach (['' => fn () => $store->inspect(''), 'no server' => fn () => (new Lock\Store\RedisStore('redis://127.0.0.1:1?timeout=0.5'))->inspect('r')] as $what => $fn) {
    try {
        $fn();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), "\n";
    }
}
?>
--EXPECT--
-- free
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":0,"queue":[],"holders":null}
-- a writer
{"held":true,"mode":"write","owners":["writer-1"],"ttl":"up to 30 s","fencing":"a token","waiters":0,"queue":[],"holders":null}
bool(true)
bool(true)
-- three waiters, in the order they came
{"owners":["writer-1"],"waiters":3,"queue":["first","second","third"]}
-- the release serves the first of the queue
held
{"mode":"write","owners":["first"],"queue":["second","third"],"newer token":true}
-- readers
{"held":true,"mode":"read","owners":["reader-1","reader-2"],"ttl":null,"fencing":"a token","waiters":0,"queue":[],"holders":null}
{"mode":"read","owners":["reader-1"],"ttl":true}
-- a cooldown
{"held":true,"mode":"cooldown","owners":[],"ttl":"up to 2 s","fencing":"a token","waiters":0,"queue":[],"holders":null}
-- a holder that died: its hold expires
{"mode":"write","owners":["dead"]}
false
-- bad input
: ValueError
no server: Lock\StorageException
