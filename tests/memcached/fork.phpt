--TEST--
memcached: a pcntl_fork() child never touches its parent's hold nor its parent's connection: it opens its own, and the parent's keeps working after the child used the store and exited
--EXTENSIONS--
lock
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/../inc/memcached.inc';
if (!lock_test_memcached_built()) die('skip MemcachedStore not built');
?>
--FILE--
<?php
require __DIR__ . '/../inc/memcached.inc';

$server = new LockTestMemcachedServer();

/** The server's count of connections ever accepted. */
function accepted(LockTestMemcachedServer $server): int
{
    static $asked = 0;
    $out = lock_test_memcached_cmd($server->port, 'stats');
    preg_match('/^STAT total_connections (\d+)/m', $out, $m);
    // Minus the connections that asked, this one included.
    return (int) $m[1] - ++$asked;
}

foreach ([false, true] as $persistent) {
    echo '-- ', $persistent ? 'persistent' : 'not persistent', "\n";
    $store = new Lock\Store\MemcachedStore($server->dsn('prefix=' . urlencode(lock_test_prefix())), ['persistent' => $persistent]);
    $lock = new Lock\Lock('parent', $store, 30.0);
    var_dump($lock->acquire());
    $before = accepted($server);
    $pid = lock_test_fork(static function () use ($store, $lock): int {
        $fds = count(scandir('/proc/self/fd'));
        $seen = [$store->isLocked('parent'), $lock->isAcquired()];
        // The inherited socket was closed, its replacement opened: no descriptor more.
        $seen[] = count(scandir('/proc/self/fd')) === $fds;
        try {
            $lock->release();
            $seen[] = 'no-op';
        } catch (Lock\LockException) {
            $seen[] = 'refused';
        }
        $mine = new Lock\Lock('child', $store, 30.0);
        $seen[] = $mine->acquire();
        $seen[] = (new Lock\Lock('parent', $store, 30.0))->acquire();
        $mine->release();
        if ($seen !== [true, false, true, 'no-op', true, false]) {
            fwrite(STDERR, json_encode($seen) . "\n");
            return 1;
        }
        return 0;
    });
    echo 'child exit code: ', lock_test_wait_pid($pid), "\n";
    echo 'the child opened a connection of its own: ', var_export(accepted($server) === $before + 1, true), "\n";
    // The parent's connection survived the child's use of the store and its exit: no new connection.
    $now = accepted($server);
    var_dump($lock->isAcquired(), $store->isLocked('child'));
    $lock->release();
    echo 'the parent reused its connection: ', var_export(accepted($server) === $now, true), "\n";
    unset($lock, $store);
}
?>
--EXPECT--
-- not persistent
bool(true)
child exit code: 0
the child opened a connection of its own: true
bool(true)
bool(false)
the parent reused its connection: true
-- persistent
bool(true)
child exit code: 0
the child opened a connection of its own: true
bool(true)
bool(false)
the parent reused its connection: true
