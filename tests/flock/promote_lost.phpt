--TEST--
flock: a promotion that a writer got in during throws LostException and leaves the lock not held; an uninterrupted one returns true
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
lock_test_hang_guard();
$dir = lock_test_tmpdir();
$resource = lock_test_resource('promote');
$storeCode = lock_test_store_code('flock', $dir);
$store = lock_test_store('flock', $dir);

echo "-- uninterrupted\n";
$lock = new Lock\Lock($resource, $store);
var_dump($lock->acquireRead(), $lock->acquire(true, 5.0), $lock->isAcquired(), $lock->getFencingToken() > 0);
$lock->release();

echo "-- a writer gets in while the promotion waits\n";
// Another reader keeps the promotion waiting; it holds nothing meanwhile.
$reader = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $storeCode . ");\n"
    . '$lock->acquireRead(); echo "held\n"; fgets(STDIN); $lock->release(); echo "released\n"; fgets(STDIN);');
$reader->waitFor('held');
$promoter = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $storeCode . ");\n"
    . <<<'PHP'
var_dump($lock->acquireRead());
echo "promoting\n";
try {
    var_dump($lock->acquire(true, 30.0));
} catch (Lock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump($lock->isAcquired());
PHP);
echo trim($promoter->waitFor('promoting')), "\n";
// The promotion marks itself as waiting (an OFD lock on the file) just before it sleeps.
$file = glob("$dir/*.lock")[0];
$inode = fileinode($file);
lock_test_wait_until(function () use ($inode): bool {
    foreach (file('/proc/locks') as $line) {
        if (str_contains($line, 'OFDLCK') && preg_match('/:(\d+) \d+ /', $line, $m) && (int) $m[1] === $inode) {
            return true;
        }
    }
    return false;
}, 30.0, 'the promotion to wait');
// Frozen while it waits, it cannot take the lock when the reader goes: the writer does.
$promoter->signal(SIGSTOP);
$reader->send('release');
$reader->waitFor('released');
$writer = new Lock\Lock($resource, $store);
var_dump($writer->acquire(true, 10.0));
$writer->release();
$promoter->signal(SIGCONT);
echo trim($promoter->wait()), "\n";
echo 'free afterwards: ', var_export(!$store->isLocked($resource), true), "\n";
?>
--EXPECT--
-- uninterrupted
bool(true)
bool(true)
bool(true)
bool(true)
-- a writer gets in while the promotion waits
bool(true)
promoting
bool(true)
Lock\LostException
bool(false)
free afterwards: true
