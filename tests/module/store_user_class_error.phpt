--TEST--
A user class cannot implement Lock\Store
--EXTENSIONS--
lock
--FILE--
<?php
class MyStore implements Lock\Store
{
    public function isLocked(string $resource): bool { return false; }
    public function forceRelease(string $resource): void {}
}
echo "not reached\n";
?>
--EXPECTF--
Fatal error: MyStore cannot implement Lock\Store: %s
