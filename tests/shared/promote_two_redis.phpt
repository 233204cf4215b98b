--TEST--
redis: two readers that both promote do not deadlock: at least one gives up, the store stays consistent, a writer gets in afterwards
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_test_hang_guard(120);
lock_shared_promote_two('redis');
?>
--EXPECT--
a read: true
b read: true
answers are booleans: true
at least one refused: true
both promoted: false
consistent afterwards: true
a release: released
b release: released
isLocked afterwards: false
a writer acquires: true
the agents can take it again: true released true released
