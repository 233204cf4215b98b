--TEST--
Lock, Factory and the stores are final classes; the stores implement Lock\Store
--EXTENSIONS--
lock
--FILE--
<?php
foreach (['Lock\Lock', 'Lock\Factory', 'Lock\Store\FlockStore', 'Lock\Store\SemaphoreStore', 'Lock\Store\RedisStore', 'Lock\Store\PostgresStore', 'Lock\Store\MysqlStore'] as $class) {
    $r = new ReflectionClass($class);
    printf("%s: final=%s store=%s\n", $class, var_export($r->isFinal(), true),
        var_export($r->implementsInterface('Lock\Store'), true));
}
var_dump(interface_exists('Lock\Store'));
$m = new ReflectionMethod('Lock\Store', 'isLocked');
echo $m->getName(), ' ', $m->getParameters()[0]->getName(), ' ', $m->getReturnType(), "\n";
$m = new ReflectionMethod('Lock\Store', 'forceRelease');
echo $m->getName(), ' ', $m->getParameters()[0]->getName(), ' ', $m->getReturnType(), "\n";
?>
--EXPECT--
Lock\Lock: final=true store=false
Lock\Factory: final=true store=false
Lock\Store\FlockStore: final=true store=true
Lock\Store\SemaphoreStore: final=true store=true
Lock\Store\RedisStore: final=true store=true
Lock\Store\PostgresStore: final=true store=true
Lock\Store\MysqlStore: final=true store=true
bool(true)
isLocked resource bool
forceRelease resource void
