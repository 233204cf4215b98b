--TEST--
Cooldowns on every expiring store: no owner passes for one, whatever its bytes ("cooldown", "shared", the stores' own tag bytes, a bytea escape)
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// What a store writes where an owner would stand: Redis "" (once "shared", "cooldown"),
// memcached a tag byte before the owner ("o", a cooldown "c"), the table holds ''
// ("\x" and "\\x" are an empty bytea in PostgreSQL's text input), and a lone NUL.
const OWNERS = ['cooldown', 'shared', 'c', 'o', 'oc', "\\x", "\\\\x", "\0", ' '];
$kinds = array_values(array_filter(LOCK_TEST_KINDS, fn ($k) => lock_test_store($k)->supports(Lock\Store::EXPIRING)));

lock_test_each_kind($kinds, function (string $kind): void {
    $store = lock_test_store($kind);
    $factory = new Lock\Factory($store, 30.0);
    $b = fn (bool $v): string => var_export($v, true);
    $bad = [];
    foreach (OWNERS as $x) {
        $seen = [];
        // A real cooldown of a random owner: this owner neither takes it, nor adopts it, nor ends it.
        $resource = lock_test_resource('marker');
        $h = $factory->createLock($resource);
        $h->acquire();
        $h->release(300.0);
        $lock = $factory->createLock($resource, owner: $x);
        $seen[] = $lock->acquire();
        $seen[] = $factory->restoreLock($resource, $x)->isAcquired();
        try {
            $factory->restoreLock($resource, $x)->release();
            $seen[] = 'released';
        } catch (Lock\ExpiredException) {
        }
        $seen[] = !$store->isLocked($resource);
        $seen[] = $factory->createLock($resource)->acquire();
        $store->forceRelease($resource);

        // Its own hold and its own cooldown: held, adopted, then nobody's.
        $seen[] = !$lock->acquire();
        $seen[] = !$factory->restoreLock($resource, $x)->isAcquired();
        $seen[] = $factory->createLock($resource)->acquire();
        $lock->release(300.0);
        $seen[] = $lock->acquire();
        $seen[] = $factory->restoreLock($resource, $x)->isAcquired();
        $seen[] = !$store->isLocked($resource);
        $store->forceRelease($resource);
        $seen[] = !$lock->acquire();
        $lock->release();
        if ($seen !== array_fill(0, count($seen), false)) {
            $bad[] = bin2hex($x) . ': ' . implode(' ', array_map(fn ($v) => is_bool($v) ? $b($v) : $v, $seen));
        }
    }
    echo $bad === [] ? "no owner passes for a cooldown, nor loses its hold to one\n" : implode("\n", $bad) . "\n";
});
?>
--EXPECT--
-- redis, combined, pgsql-table, mysql-table, memcached
no owner passes for a cooldown, nor loses its hold to one
