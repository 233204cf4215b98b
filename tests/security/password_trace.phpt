--TEST--
redis: a DSN or options array with a password is not shown in exception traces either
--EXTENSIONS--
lock
--INI--
zend.exception_ignore_args=0
zend.exception_string_param_max_len=1000000
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

// Logged uncaught exceptions include the trace with its arguments, so the DSN must be redacted there too.
$password = 'Hunter2-secret';
$port = lock_test_redis_port();
$calls = [
    'constructor, bad DSN' => fn () => new Lock\Store\RedisStore("redis://:$password@127.0.0.1:notaport"),
    'constructor, bad option' => fn () => new Lock\Store\RedisStore("redis://127.0.0.1:$port", ['password' => $password, 'nope' => 1]),
    'fromDsn, bad DSN' => fn () => Lock\Factory::fromDsn("redis://:$password@127.0.0.1:$port/notadb"),
];
foreach ($calls as $what => $call) {
    try {
        $call();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), ', the trace shows the password: ',
            var_export(str_contains((string) $e, $password) || str_contains(json_encode($e->getTrace()), $password), true), "\n";
    }
}
?>
--EXPECT--
constructor, bad DSN: ValueError, the trace shows the password: false
constructor, bad option: ValueError, the trace shows the password: false
fromDsn, bad DSN: ValueError, the trace shows the password: false
