--TEST--
semaphore: sets are owner-only by default; the mode option sets their permissions
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

/** The semaphore sets of the system: "key" => permissions, from /proc/sysvipc/sem. */
function sem_sets(): array
{
    $sets = [];
    foreach (array_slice(file('/proc/sysvipc/sem', FILE_IGNORE_NEW_LINES), 1) as $row) {
        $cols = preg_split('/\s+/', trim($row));
        $sets[$cols[0] . ':' . $cols[1]] = octdec($cols[2]);
    }
    return $sets;
}

$before = sem_sets();
$default = new Lock\Lock(lock_test_resource(), new Lock\Store\SemaphoreStore());
$default->acquire();
$new = array_diff_key(sem_sets(), $before);
var_dump(count($new) >= 1);
// Other tests may make sets meanwhile, all owner-only too.
foreach ($new as $perms) {
    if (($perms & 0077) !== 0) {
        printf("a new set has group/other permissions: %o\n", $perms);
    }
}
$default->release();

$before = sem_sets();
$shared = new Lock\Lock(lock_test_resource(), new Lock\Store\SemaphoreStore(['mode' => 0640]));
$shared->acquire();
$new = array_diff_key(sem_sets(), $before);
var_dump(in_array(0640, $new, true));
$shared->release();
?>
--EXPECT--
bool(true)
bool(true)
