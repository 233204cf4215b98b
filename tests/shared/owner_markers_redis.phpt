--TEST--
redis: waiters named "cooldown" and "shared" are handed their holds in order, as readers and writers like any other
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';
lock_test_hang_guard(120);

$redis = new LockTestResp(lock_test_redis_port());
$prefix = lock_test_prefix();
$store = lock_test_store('redis', null, $prefix);
$resource = lock_test_resource('marker');
$queue = $prefix . '{' . $resource . '}:q';
$b = fn (bool $v): string => var_export($v, true);

/** A child that waits for a hold under $owner when told "go", and releases it when told "release". */
function waiter(string $prefix, string $resource, string $owner, string $method): LockTestChild
{
    $child = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', '
        . lock_test_store_code('redis', null, $prefix) . ', 300.0, true, ' . var_export($owner, true) . ");\n"
        . "echo \"ready\\n\";\n"
        . "fgets(STDIN);\n"
        . 'echo var_export($lock->' . $method . "(true, 60.0), true), \"\\n\";\n"
        . "fgets(STDIN);\n"
        . "\$lock->release();\n"
        . "echo \"released\\n\";\n");
    $child->waitFor('ready');
    return $child;
}

/** Starts $child's wait and returns once it stands in the queue as its $n-th waiter. */
function queued(LockTestChild $child, LockTestResp $redis, string $queue, int $n): void
{
    $child->send('go');
    lock_test_wait_until(fn () => $redis->cmd('LLEN', $queue) >= $n, 30, "waiter $n to queue");
}

$factory = new Lock\Factory($store, 300.0);
$w = $factory->createLock($resource, owner: 'shared');
$r = $factory->createLock($resource);
echo 'writer "shared": ', $b($w->acquire()), "\n";
$c = waiter($prefix, $resource, 'cooldown', 'acquireRead');
queued($c, $redis, $queue, 1);
echo 'a reader while "shared" writes: ', $b($r->acquireRead()), "\n";
$w->release();
echo 'reader "cooldown" was handed its hold: ', trim($c->waitFor('true')), "\n";
echo 'another reads beside it: ', $b($r->acquireRead()), ', a writer: ', $b($w->acquire()), "\n";

$s = waiter($prefix, $resource, 'shared', 'acquire');
queued($s, $redis, $queue, 1);
$c->send('release');
$c->waitFor('released');
echo 'reader "cooldown" released, the writer still waits: ', $redis->cmd('LLEN', $queue), "\n";
$r->release();
echo 'writer "shared" was handed its hold: ', trim($s->waitFor('true')), "\n";
echo 'a reader while it writes: ', $b($r->acquireRead()), ', a writer: ', $b($factory->createLock($resource)->acquire()), "\n";
$s->send('release');
$s->waitFor('released');
echo 'locked: ', $b($store->isLocked($resource)), "\n";
$c->wait();
$s->wait();
?>
--EXPECT--
writer "shared": true
a reader while "shared" writes: false
reader "cooldown" was handed its hold: true
another reads beside it: true, a writer: false
reader "cooldown" released, the writer still waits: 1
writer "shared" was handed its hold: true
a reader while it writes: false, a writer: false
locked: false
