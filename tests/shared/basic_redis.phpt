--TEST--
redis: shared holds in one process: many readers, no writer while one reads, no reader while one writes; promotion and demotion
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/shared.inc';
lock_shared_basic('redis');
?>
--EXPECT--
-- readers
isLocked before: false
r1 acquireRead: true
r2 acquireRead: true
r3 acquireRead(true, 1.0): true
isLocked: true
each isAcquired: true
writer acquire: false
writer acquire(true, 0.2): false
writer isAcquired: false
a reader acquireRead again: true
r3 release: NULL
r3 isAcquired: false
isLocked with two readers left: true
-- promotion refused while another reads
r2 acquire: false
r2 acquire(true, 0.2): false
r2 still reads: true
r1 still reads: true
a new reader gets in: true
-- promotion of the only reader
r2 acquire: true
isLocked: true
a reader acquireRead: false
a reader acquireRead(true, 0.2): false
a writer acquire: false
-- demotion
r2 acquireRead: true
r2 isAcquired: true
r2 getFencingToken: NULL
a reader acquireRead: true
a writer acquire: false
-- all readers gone
isLocked: false
writer acquire: true
reader acquireRead: false
reader acquireRead(true, 0.2): false
reader isAcquired: false
isLocked at the end: false
