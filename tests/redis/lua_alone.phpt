--TEST--
redis: each script that scripts/gen-lua.sh --print gives runs alone with redis-cli --eval, on the keys the store uses
--EXTENSIONS--
lock
--SKIPIF--
<?php
// The generator is part of the source tree, not of the PECL package.
if (!is_file(__DIR__ . '/../../scripts/gen-lua.sh')) {
    echo 'skip scripts/gen-lua.sh is not shipped';
}
?>
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';
require __DIR__ . '/../inc/resp.inc';

/** Runs a command without a shell; returns its stdout, and fails the test on a non-zero exit. */
function run(array $cmd): string
{
    $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    $status = proc_close($proc);
    if ($status !== 0 || $err !== '') {
        echo "FAIL: ", implode(' ', $cmd), " exited $status: $err\n";
        exit(1);
    }
    return $out;
}

$dir = lock_test_tmpdir('lua');
$port = lock_test_redis_port();

/** The suffixes of the lock key that script $name takes after it (gen-lua.sh --keys, for the lock key ""). */
$suffixes = [];

/**
 * Runs the script $name as gen-lua.sh prints it, with the keys it declares for the lock
 * key $key and the wake lists of $tickets; redis-cli's raw reply, one line per value: a
 * script that takes wake lists answers {result, guess, guess, hints...}.
 */
function script(string $name, string $key, array $tickets, string ...$args): array
{
    global $dir, $port, $suffixes;
    $keys = [$key];
    foreach ($suffixes[$name] as $suffix) {
        $keys[] = $key . $suffix;
    }
    foreach ($tickets as $ticket) {
        $keys[] = "$key:w:$ticket";
    }
    return explode("\n", rtrim(run(['redis-cli', '-p', (string) $port, '--eval', "$dir/$name.lua", ...$keys, ',', ...$args]), "\n"));
}

// Every script and its keys first: under valgrind the generator's processes are slow, and
// the steps below measure what a hold has left.
foreach (['acquire', 'release', 'refresh', 'check', 'fence', 'force', 'watch', 'deliver'] as $name) {
    file_put_contents("$dir/$name.lua", run([__DIR__ . '/../../scripts/gen-lua.sh', '--print', $name]));
    $suffixes[$name] = array_slice(explode("\n", run([__DIR__ . '/../../scripts/gen-lua.sh', '--keys', $name, ''])), 1, -1);
}

$redis = new LockTestResp($port);
$prefix = lock_test_prefix();
$store = new Lock\Store\RedisStore(lock_test_redis_dsn(), ['prefix' => $prefix]);
$key = $prefix . '{job}';

// acquire: A takes the free write hold (a fencing token, a counter jumped to the clock in µs), B is refused.
[$token] = script('acquire', $key, [], 'A', '30000', 'wt1n', '10000', '');
var_dump((int) $token > 1e12);
var_dump($redis->ok('GET', $key), $redis->ok('PTTL', $key) > 29000);
var_dump(script('acquire', $key, [], 'B', '30000', 'wt1n', '10000', ''));
// The extension sees the script's hold as a hold of the resource "job".
var_dump($store->isLocked('job'));
var_dump((new Lock\Lock('job', $store))->acquire(false));

// check, fence and refresh answer for A's hold.
var_dump(script('check', $key, [], 'A', '1')[0], script('check', $key, [], 'B', '1')[0]);
// (fence makes a new token: the counter's next value.)
var_dump(script('fence', $key, [], 'A') === [$redis->ok('GET', "$key:f")], $redis->ok('GET', "$key:f") > $token);
var_dump(script('refresh', $key, [], 'A', '60000')[0], $redis->ok('PTTL', $key) > 59000);

// A watcher of the resource and a waiter: B queues, told how long to sleep (the hold's
// PTTL), the server's time and its ticket, which names its wake list.
var_dump(script('watch', $key, [], 'W', '60000', 'w')[1]);
[$queued, $sleep, $now, $ticket] = script('acquire', $key, [], 'B', '30000', 'wq1n', '10000', '');
var_dump($queued, $sleep > 59000 && $sleep <= 60000, $now > 1e12, $ticket > 1e12);

// release: A gives the hold up, fair, declaring B's list, so B is handed it with the next
// token on its wake list, with the guess of the next tickets (nobody queued: the next two).
var_dump(script('release', $key, [$ticket], 'A', '0', '1'));
var_dump($redis->ok('GET', $key));
$next = sprintf('%.0f:%.0f', $ticket + 1, $ticket + 2);
var_dump($redis->ok('LRANGE', "$key:w:$ticket", 0, -1) === ['y' . $redis->ok('GET', "$key:f") . '@' . $redis->ok('ZSCORE', "$key:h", 'B') . "#$next"]);

// force: it must read B's list, so it first asks for it and writes nothing; then the hold
// handed to B goes, its "y" with it, and the watcher W is woken ("f", on the watchers' list).
var_dump(script('force', $key, [], '1') === ['need', $ticket], $redis->ok('GET', $key));
var_dump(script('force', $key, [$ticket], '1')[0]);
var_dump($redis->ok('EXISTS', $key, "$key:w:$ticket"), $redis->ok('LRANGE', "$key:fl", 0, -1), $redis->ok('EXISTS', "$key:fw"));
var_dump(script('watch', $key, [], 'W', '5000', 'w'), script('watch', $key, [], 'W', '5000', 'l'));

// A hand-off to a list the release did not declare waits in the mailbox; deliver pushes it, once.
script('acquire', $key, [], 'A', '30000', 'wt1n', '10000', '');
[, , , $ticket] = script('acquire', $key, [], 'B', '30000', 'wq1n', '10000', '');
var_dump(script('release', $key, [], 'A', '0', '1') === ['1', '0', '0', "y$ticket"]);
var_dump($redis->ok('GET', $key), $redis->ok('EXISTS', "$key:w:$ticket"));
var_dump(script('deliver', $key, [$ticket], "y$ticket"), script('deliver', $key, [$ticket], "y$ticket"));
var_dump(str_starts_with($redis->ok('LINDEX', "$key:w:$ticket", 0), 'y'));
var_dump(script('release', $key, [], 'B', '0', '1')[0]);

// A read hold, taken and given back; then the resource is free for the extension.
var_dump(script('acquire', $key, [], 'R', '', 'rt1n', '10000', '')[0], $redis->ok('GET', $key));
var_dump(script('release', $key, [], 'R', '0', '1')[0]);
$lock = new Lock\Lock('job', $store);
var_dump($lock->acquire(false));
var_dump(script('check', $key, [], $lock->getOwner(), '1')[0], (int) script('fence', $key, [], $lock->getOwner())[0] < $lock->getFencingToken());
$lock->release();
foreach ($redis->keys($prefix) as $k) {
    $redis->ok('DEL', $k);
}
?>
--EXPECT--
bool(true)
string(1) "A"
bool(true)
array(1) {
  [0]=>
  string(2) "-1"
}
bool(true)
bool(false)
string(1) "1"
string(2) "-1"
bool(true)
bool(true)
string(1) "1"
bool(true)
string(1) "0"
string(2) "-3"
bool(true)
bool(true)
bool(true)
array(1) {
  [0]=>
  string(1) "1"
}
string(1) "B"
bool(true)
bool(true)
string(1) "B"
string(1) "1"
int(0)
array(1) {
  [0]=>
  string(1) "f"
}
int(0)
array(1) {
  [0]=>
  string(2) "-1"
}
array(1) {
  [0]=>
  string(1) "0"
}
bool(true)
string(1) "B"
int(0)
array(1) {
  [0]=>
  string(1) "1"
}
array(1) {
  [0]=>
  string(1) "0"
}
bool(true)
string(1) "1"
string(1) "0"
string(0) ""
string(1) "2"
bool(true)
string(1) "1"
bool(true)
