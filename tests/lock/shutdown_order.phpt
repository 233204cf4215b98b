--TEST--
Locks that outlive the script (static property, static variable, reference cycle) end cleanly whatever the engine frees first
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// Each case ends its script with a lock still alive, so the engine frees the store and
// the lock at shutdown in an order of its own choosing. The store is made after the lock
// object (inside new's arguments): the engine frees newer objects first.
$cases = [
    'static property' => 'final class C { public static $l; } C::$l = new Lock\Lock($r, $mk(), 300.0, false); $held && C::$l->acquire();',
    'static property, store kept too' => 'final class C { public static $l; public static $s; } C::$l = new Lock\Lock($r, C::$s = $mk(), 300.0, false); $held && C::$l->acquire();',
    'static variable' => 'function keep($l) { static $kept; $kept = $l; } keep($l = new Lock\Lock($r, $mk(), 300.0, false)); $held && $l->acquire(); unset($l);',
    'reference cycle' => '$o = new stdClass; $o->self = $o; $o->l = new Lock\Lock($r, $mk(), 300.0, false); $held && $o->l->acquire(); unset($o);',
    'restored lock' => 'final class D { public static $l; public static $a; } D::$a = new Lock\Lock($r, $s = $mk(), 30.0, false); $held && D::$a->acquire(); D::$l = !$s->supports(Lock\Store::PROCESS_BOUND) ? (new Lock\Factory($s))->restoreLock($r, D::$a->getOwner()) : null; unset($s);',
    'autoRelease on' => 'final class E { public static $l; } E::$l = new Lock\Lock($r, $mk()); $held && E::$l->acquire();',
];
lock_test_each_kind(LOCK_TEST_KINDS, function (string $kind) use ($cases): void {
    foreach ($cases as $name => $code) {
        foreach ([false, true] as $held) {
            $r = lock_test_resource('order');
            [$exit, $out] = lock_test_run_php(
                '$mk = fn () => ' . lock_test_store_code($kind) . '; $r = ' . var_export($r, true) . '; $held = ' . var_export($held, true) . ";\n"
                . $code . "\necho \"end\\n\";\n");
            if ($exit !== 0 || trim($out) !== 'end') {
                echo "FAIL: $name, " . ($held ? 'held' : 'not held') . ": exit $exit, output: $out\n";
            }
        }
    }
    echo "done\n";
});
?>
--EXPECT--
-- flock, semaphore, redis, pgsql, pgsql-table, mysql, mysql-table, memcached
done
