--TEST--
inspect() on the PostgreSQL, MySQL (session and table holds) and memcached stores: free, a writer (its owner where the server keeps it, the server session holding it, the TTL left, the last fencing token), readers, waiters where the server counts them, a cooldown, a killed holder's hold gone, forceRelease(); what a store cannot tell is null
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/mysql.inc';
lock_test_hang_guard(120);

/** The answer with ttl as whole seconds at most, the fencing token and the holders named rather than given. */
function seen(array $a, array $sessions = []): string
{
    if ($a['ttl'] !== null) {
        $a['ttl'] = 'up to ' . ceil($a['ttl']) . ' s';
    }
    if (is_int($a['fencing'])) {
        $a['fencing'] = 'a token';
    }
    if (is_array($a['holders']) && $a['holders'] !== []) {
        $a['holders'] = $a['holders'] === $sessions ? 'the holding sessions' : $a['holders'];
    }
    return json_encode($a) . "\n";
}

lock_test_each_kind(['pgsql', 'pgsql-table', 'mysql', 'mysql-table', 'memcached'], function (string $kind): void {
    $prefix = lock_test_prefix();
    $store = lock_test_store($kind, null, $prefix);
    $code = lock_test_store_code($kind, null, $prefix);
    $resource = lock_test_resource('inspect');
    $expiring = $store->supports(Lock\Store::EXPIRING);
    /** The server sessions holding the resource, as the server's own views tell them. */
    $sessions = static fn (): array => match ($kind) {
        'pgsql' => lock_test_pgsql_holders($prefix, $resource),
        'mysql' => [lock_test_mysql_holder($prefix, $resource)],
        'mysql-table' => [lock_test_mysql_holder($prefix, $resource, null, true)],
        default => [],
    };

    echo "- free\n", seen($store->inspect($resource));

    echo "- a writer\n";
    $w = new Lock\Lock($resource, $store, $expiring ? 30.0 : null, owner: 'writer-1');
    $w->acquire();
    $a = $store->inspect($resource);
    echo seen($a, $sessions());
    if ($store->supports(Lock\Store::FENCING)) {
        $token = $w->getFencingToken();
        echo 'the last token: ', var_export($store->inspect($resource)['fencing'] === $token, true), "\n";
    }
    if ($expiring && $a['ttl'] !== null) {
        echo 'ttl within the hold: ', var_export($a['ttl'] > 25.0 && $a['ttl'] <= 30.0, true), "\n";
    }

    if ($kind === 'pgsql') {
        echo "- three waiters\n";
        $waiters = [];
        for ($i = 0; $i < 3; $i++) {
            $waiters[] = new LockTestChild('$lock = new Lock\Lock(' . var_export($resource, true) . ', ' . $code . ");\n" . <<<'PHP'
echo "waiting\n";
echo $lock->acquire(true, 60.0) ? "held\n" : "timed out\n";
$lock->release();
fgets(STDIN);
PHP);
            $waiters[$i]->waitFor('waiting');
        }
        lock_test_wait_until(fn () => $store->inspect($resource)['waiters'] === 3, 20, 'three waiters to show');
        echo "3 waiters\n";
        $w->release();
        foreach ($waiters as $child) {
            $child->waitFor('held');
            $child->kill();
        }
        lock_test_wait_until(fn () => $store->inspect($resource)['waiters'] === 0, 20, 'the waiters to go');
        echo "- readers\n";
        $r1 = new Lock\Lock($resource, $store);
        $r2 = new Lock\Lock($resource, $store);
        $r1->acquireRead();
        $r2->acquireRead();
        $a = $store->inspect($resource);
        echo seen($a, $sessions()), 'two sessions: ', count($a['holders']), "\n";
        $r1->release();
        $r2->release();
    } else {
        $w->release($expiring ? 20.0 : 0.0);
        if ($expiring) {
            echo "- a cooldown\n", seen($store->inspect($resource));
            $store->forceRelease($resource);
        }
    }
    echo "- after the release\n", seen($store->inspect($resource));

    echo "- a holder killed\n";
    $holder = lock_test_holder($code, $resource, $expiring ? 1.0 : null);
    echo json_encode($store->inspect($resource)['mode']), "\n";
    $holder->kill();
    lock_test_wait_until(fn () => $store->inspect($resource)['mode'] === null, 20, 'the hold to go');
    echo json_encode($store->inspect($resource)['held']), "\n";

    echo "- forceRelease()\n";
    $holder = lock_test_holder($code, $resource, $expiring ? 300.0 : null);
    echo json_encode($store->inspect($resource)['mode']), "\n";
    $store->forceRelease($resource);
    echo json_encode($store->inspect($resource)['mode']), "\n";
    $holder->kill();
});

echo "-- bad input\n";
$store = lock_test_store('pgsql');
foreach (['', str_repeat('x', 65537)] as $bad) {
    try {
        $store->inspect($bad);
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
?>
--EXPECT--
-- pgsql
- free
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":[]}
- a writer
{"held":true,"mode":"write","owners":null,"ttl":null,"fencing":null,"waiters":0,"queue":null,"holders":"the holding sessions"}
the last token: true
- three waiters
3 waiters
- readers
{"held":true,"mode":"read","owners":null,"ttl":null,"fencing":"a token","waiters":0,"queue":null,"holders":"the holding sessions"}
two sessions: 2
- after the release
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":"a token","waiters":0,"queue":null,"holders":[]}
- a holder killed
"write"
false
- forceRelease()
"write"
null
-- pgsql-table
- free
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- a writer
{"held":true,"mode":"write","owners":["writer-1"],"ttl":"up to 30 s","fencing":"a token","waiters":null,"queue":null,"holders":null}
the last token: true
ttl within the hold: true
- a cooldown
{"held":true,"mode":"cooldown","owners":[],"ttl":"up to 20 s","fencing":"a token","waiters":null,"queue":null,"holders":null}
- after the release
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- a holder killed
"write"
false
- forceRelease()
"write"
null
-- mysql
- free
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":[]}
- a writer
{"held":true,"mode":"write","owners":null,"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":"the holding sessions"}
the last token: true
- after the release
{"held":false,"mode":null,"owners":null,"ttl":null,"fencing":"a token","waiters":null,"queue":null,"holders":[]}
- a holder killed
"write"
false
- forceRelease()
"write"
null
-- mysql-table
- free
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":[]}
- a writer
{"held":true,"mode":"write","owners":["writer-1"],"ttl":"up to 30 s","fencing":"a token","waiters":null,"queue":null,"holders":"the holding sessions"}
the last token: true
ttl within the hold: true
- a cooldown
{"held":true,"mode":"cooldown","owners":[],"ttl":"up to 20 s","fencing":"a token","waiters":null,"queue":null,"holders":[]}
- after the release
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":"a token","waiters":null,"queue":null,"holders":[]}
- a holder killed
"write"
false
- forceRelease()
"write"
null
-- memcached
- free
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- a writer
{"held":true,"mode":"write","owners":["writer-1"],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- a cooldown
{"held":true,"mode":"cooldown","owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- after the release
{"held":false,"mode":null,"owners":[],"ttl":null,"fencing":null,"waiters":null,"queue":null,"holders":null}
- a holder killed
"write"
false
- forceRelease()
"write"
null
-- bad input
ValueError: Lock\Store\PostgresStore::inspect(): Argument #1 ($resource) must be between 1 and 65536 bytes long
ValueError: Lock\Store\PostgresStore::inspect(): Argument #1 ($resource) must be between 1 and 65536 bytes long