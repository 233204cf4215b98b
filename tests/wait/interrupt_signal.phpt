--TEST--
pcntl_async_signals: a handler that throws ends a blocked acquire()/run() on every store and leaves nothing behind; one that returns lets the wait go on
--EXTENSIONS--
lock
pcntl
posix
--FILE--
<?php
require __DIR__ . '/../inc/wait.inc';
lock_test_hang_guard(150);

$dir = lock_test_tmpdir();
foreach (LOCK_WAIT_KINDS as $kind) {
    foreach (['acquire', 'run'] as $via) {
        foreach ([true, false] as $throw) {
            echo "-- $kind, $via, the handler ", $throw ? 'throws' : 'returns', "\n";
            $prefix = lock_test_prefix();
            $resource = lock_test_resource('signal');
            $storeCode = lock_wait_store_code($kind, $dir, $prefix);
            $redis = lock_wait_is_redis($kind) ? new LockWaitRedis($prefix, $resource) : null;
            $store = lock_wait_store($kind, $dir, $prefix);
            $holder = new Lock\Lock($resource, $store);
            $holder->acquire();

            $wait = $via === 'run' ? '$lock->run(fn () => "callback ran")' : '$lock->acquire(true)';
            $waiter = new LockTestChild('$store = ' . $storeCode . ";\n"
                . '$lock = new Lock\Lock(' . var_export($resource, true) . ', $store);' . "\n"
                . '$throw = ' . var_export($throw, true) . ";\n"
                . <<<'PHP'
pcntl_async_signals(true);
pcntl_signal(SIGUSR1, function () use ($throw) {
    echo "handled\n";
    if ($throw) {
        throw new RuntimeException('stop waiting');
    }
});
echo "waiting\n";
try {
    $got = 
PHP
                . $wait . ";\n"
                . <<<'PHP'
    echo 'returned ', var_export($got, true), "\n";
} catch (RuntimeException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
echo 'holds it: ', var_export($lock->isAcquired(), true), "\n";
echo "done\n";
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === 'again') {
        echo 'acquires again: ', var_export($lock->acquire(), true), "\n";
    }
    $lock->release();
    echo "released\n";
}
PHP);
            $waiter->waitFor('waiting');
            if ($redis !== null) {
                $redis->awaitQueued(1);
            } else {
                lock_wait_await_blocked($waiter->pid);
                usleep(50000);
            }
            $waiter->signal(SIGUSR1);
            if ($throw) {
                echo trim($waiter->waitFor('done')), "\n";
                // Looked at while the waiter still lives: its wait cleaned up, not its exit.
                if ($redis !== null) {
                    echo 'Redis keys besides the lock: ', $redis->describeLeftovers(), "\n";
                }
                $holder->release();
                var_dump($store->isLocked($resource));
                // The store's connection is fit for use after the interrupted wait.
                $waiter->send('again');
                echo trim($waiter->waitFor('released')), "\n";
            } else {
                echo trim($waiter->waitFor('handled')), "\n";
                $r = [$waiter->stdout];
                $w = $e = null;
                echo 'still waiting: ', var_export(stream_select($r, $w, $e, 0, 200000) === 0, true), "\n";
                if ($redis !== null) {
                    echo 'still queued: ', var_export($redis->queueLength() === 1, true), "\n";
                }
                $holder->release();
                echo trim($waiter->waitFor('done')), "\n";
                $waiter->send('release');
                $waiter->waitFor('released');
            }
            $waiter->wait();
            var_dump($store->isLocked($resource));
            if ($redis !== null) {
                echo 'Redis keys that stay: ', $redis->describeKeys(), "\n";
            }
        }
    }
}
?>
--EXPECT--
-- flock, acquire, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
bool(false)
acquires again: true
released
bool(false)
-- flock, acquire, the handler returns
handled
still waiting: true
returned true
holds it: true
done
bool(false)
-- flock, run, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
bool(false)
acquires again: true
released
bool(false)
-- flock, run, the handler returns
handled
still waiting: true
returned 'callback ran'
holds it: false
done
bool(false)
-- semaphore, acquire, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
bool(false)
acquires again: true
released
bool(false)
-- semaphore, acquire, the handler returns
handled
still waiting: true
returned true
holds it: true
done
bool(false)
-- semaphore, run, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
bool(false)
acquires again: true
released
bool(false)
-- semaphore, run, the handler returns
handled
still waiting: true
returned 'callback ran'
holds it: false
done
bool(false)
-- redis, acquire, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
Redis keys besides the lock: none
bool(false)
acquires again: true
released
bool(false)
Redis keys that stay: none
-- redis, acquire, the handler returns
handled
still waiting: true
still queued: true
returned true
holds it: true
done
bool(false)
Redis keys that stay: none
-- redis, run, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
Redis keys besides the lock: none
bool(false)
acquires again: true
released
bool(false)
Redis keys that stay: none
-- redis, run, the handler returns
handled
still waiting: true
still queued: true
returned 'callback ran'
holds it: false
done
bool(false)
Redis keys that stay: none
-- redis-unfair, acquire, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
Redis keys besides the lock: none
bool(false)
acquires again: true
released
bool(false)
Redis keys that stay: none
-- redis-unfair, acquire, the handler returns
handled
still waiting: true
still queued: true
returned true
holds it: true
done
bool(false)
Redis keys that stay: none
-- redis-unfair, run, the handler throws
handled
RuntimeException: stop waiting
holds it: false
done
Redis keys besides the lock: none
bool(false)
acquires again: true
released
bool(false)
Redis keys that stay: none
-- redis-unfair, run, the handler returns
handled
still waiting: true
still queued: true
returned 'callback ran'
holds it: false
done
bool(false)
Redis keys that stay: none
