--TEST--
Exception classes exist with the hierarchy of the API
--EXTENSIONS--
lock
--FILE--
<?php
$classes = [
    'Lock\LockException' => 'RuntimeException',
    'Lock\TimeoutException' => 'Lock\LockException',
    'Lock\ExpiredException' => 'Lock\LockException',
    'Lock\LostException' => 'Lock\ExpiredException',
    'Lock\StorageException' => 'Lock\LockException',
];
foreach ($classes as $class => $parent) {
    $r = new ReflectionClass($class);
    printf("%s extends %s: %s\n", $class, $parent, var_export($r->getParentClass()->getName() === $parent, true));
}
// A LostException is an ExpiredException and a LockException, so one catch covers both.
var_dump(new Lock\LostException('x') instanceof Lock\ExpiredException);
var_dump(new Lock\TimeoutException('x') instanceof RuntimeException);
var_dump(new Lock\StorageException('x') instanceof Lock\ExpiredException);
?>
--EXPECT--
Lock\LockException extends RuntimeException: true
Lock\TimeoutException extends Lock\LockException: true
Lock\ExpiredException extends Lock\LockException: true
Lock\LostException extends Lock\ExpiredException: true
Lock\StorageException extends Lock\LockException: true
bool(true)
bool(true)
bool(false)
