--TEST--
semaphore: sets are owner-only by default; the mode option sets their permissions
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

/** The semaphore sets of the system: "key:id" => permissions, from /proc/sysvipc/sem. */
function sem_sets(): array
{
    $sets = [];
    foreach (array_slice(file('/proc/sysvipc/sem', FILE_IGNORE_NEW_LINES), 1) as $row) {
        $cols = preg_split('/\s+/', trim($row));
        $sets[$cols[0] . ':' . $cols[1]] = octdec($cols[2]);
    }
    return $sets;
}

/**
 * The permissions of the set a new resource creates on $store. Other processes
 * of the machine may make sets meanwhile: a try that sees more than one new set
 * is repeated with another resource.
 */
function new_set_perms(Lock\Store $store): int
{
    for ($try = 0; $try < 20; $try++) {
        $before = sem_sets();
        $lock = new Lock\Lock(lock_test_resource(), $store);
        $lock->acquire();
        $new = array_diff_key(sem_sets(), $before);
        $lock->release();
        if (count($new) === 1) {
            return reset($new);
        }
    }
    echo "FAIL: no try saw exactly one new set\n";
    exit(1);
}

printf("default, group/other bits: %o\n", new_set_perms(new Lock\Store\SemaphoreStore()) & 0077);
printf("mode 0640: %o\n", new_set_perms(new Lock\Store\SemaphoreStore(['mode' => 0640])) & 0777);
printf("mode 0666: %o\n", new_set_perms(new Lock\Store\SemaphoreStore(['mode' => 0666])) & 0777);
?>
--EXPECT--
default, group/other bits: 0
mode 0640: 640
mode 0666: 666
