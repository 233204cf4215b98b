--TEST--
mysql: persistent stores reuse one idle connection across stores of the process (none is kept mid-call), a non-persistent store closes its own; a forked child opens its own and leaves its parent's sessions and holds alone
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

// User lockpool is used by this test alone: its sessions are ours to count.
[$host, $port, , , $db] = lock_test_mysql_parts();
$dsn = "mysql://lockpool:Lp-my-8b3d@$host:$port/$db";
$prefix = lock_test_prefix();
$sessions = static fn (): int => (int) lock_test_mysql_sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'lockpool'");
lock_test_wait_until(static fn () => $sessions() === 0, 30.0, 'no lockpool sessions');

echo "-- persistent\n";
$a = new Lock\Store\MysqlStore($dsn, ['persistent' => true, 'prefix' => $prefix]);
var_dump($a->isLocked('r'), $sessions());
unset($a);
$b = new Lock\Store\MysqlStore($dsn, ['persistent' => true, 'prefix' => $prefix]);
var_dump($b->isLocked('r'), $sessions());
$lock = new Lock\Lock('r', $b);
var_dump($lock->acquire(), $sessions());
$lock->release();
unset($b, $lock);
$c = new Lock\Store\MysqlStore($dsn . '?persistent=1', ['prefix' => $prefix]);
$held = new Lock\Lock('h', $c);
var_dump($held->acquire(), $sessions());

echo "-- a forked child\n";
$pid = lock_test_fork(static function () use ($c, $held, $dsn, $prefix): int {
    $mine = new Lock\Store\MysqlStore($dsn, ['persistent' => true, 'prefix' => $prefix]);
    $ok = $mine->isLocked('h') && !$held->isAcquired() && (new Lock\Lock('x', $c))->acquire();
    return $ok ? 0 : 1;
});
echo 'child exit: ', lock_test_wait_pid($pid), "\n";
var_dump($held->isAcquired(), lock_test_mysql_holder($prefix, 'h') !== null);
// The child's own sessions end with it; the parent's one (the hold's) stays.
lock_test_wait_until(static fn () => $sessions() === 1, 30.0, "the child's sessions to end");
var_dump($c->isLocked('x'), $sessions());
$held->release();

echo "-- not persistent\n";
unset($c, $held);
$d = new Lock\Store\MysqlStore($dsn, ['prefix' => $prefix]);
var_dump($d->isLocked('r'));
$before = $sessions();
unset($d);
lock_test_wait_until(static fn () => $sessions() === $before - 1, 30.0, 'the closed session to end');
echo "closed\n";
?>
--EXPECT--
-- persistent
bool(false)
int(1)
bool(false)
int(1)
bool(true)
int(1)
bool(true)
int(1)
-- a forked child
child exit: 0
bool(true)
bool(true)
bool(false)
int(2)
-- not persistent
bool(false)
closed
