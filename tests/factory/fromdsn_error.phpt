--TEST--
Factory::fromDsn(): malformed DSNs and unknown schemes are a ValueError naming the argument
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$bad = [
    '',
    'nonsense',
    '://host',
    'mongodb://127.0.0.1:27017',
    'file:///tmp',
    'redis',
    'redis:',
    'redis://',
    'redis://127.0.0.1:notaport',
    'redis://127.0.0.1:0',
    'redis://127.0.0.1:65536',
    'redis://127.0.0.1:6379/notadb',
    'redis://127.0.0.1:6379/-1',
    'redis://127.0.0.1:6379?unknown=1',
    'redis://127.0.0.1:6379?timeout=abc',
    'redis://127.0.0.1:6379?timeout=-1',
    'redis://127.0.0.1:6379?timeout=0',
    'redis://127.0.0.1:6379?persistent=maybe',
    'redis://h1:6379,h2:6379',
    'flock://somehost/tmp',
    'flock:?mode=1',
    'semaphore://host',
    'semaphore:/some/path',
];
foreach ($bad as $dsn) {
    try {
        Lock\Factory::fromDsn($dsn);
        echo json_encode($dsn), ": no exception\n";
    } catch (ValueError $e) {
        $ok = str_starts_with($e->getMessage(), 'Lock\Factory::fromDsn(): Argument #1 ($dsn) ');
        echo json_encode($dsn), ': ', $ok ? 'ValueError' : 'ValueError with message ' . $e->getMessage(), "\n";
    } catch (Throwable $e) {
        echo json_encode($dsn), ': ', get_class($e), ': ', $e->getMessage(), "\n";
    }
}
// The message names the scheme that is unknown, and the query parameter that is wrong.
lock_test_expect_throw(fn () => Lock\Factory::fromDsn('mongodb://127.0.0.1:27017'));
lock_test_expect_throw(fn () => Lock\Factory::fromDsn('redis://127.0.0.1:6379?timeout=-1'));
lock_test_expect_throw(fn () => Lock\Factory::fromDsn('redis://127.0.0.1:6379?prefix=a&unknown=1'));
?>
--EXPECTF--
"": ValueError
"nonsense": ValueError
":\/\/host": ValueError
"mongodb:\/\/127.0.0.1:27017": ValueError
"file:\/\/\/tmp": ValueError
"redis": ValueError
"redis:": ValueError
"redis:\/\/": ValueError
"redis:\/\/127.0.0.1:notaport": ValueError
"redis:\/\/127.0.0.1:0": ValueError
"redis:\/\/127.0.0.1:65536": ValueError
"redis:\/\/127.0.0.1:6379\/notadb": ValueError
"redis:\/\/127.0.0.1:6379\/-1": ValueError
"redis:\/\/127.0.0.1:6379?unknown=1": ValueError
"redis:\/\/127.0.0.1:6379?timeout=abc": ValueError
"redis:\/\/127.0.0.1:6379?timeout=-1": ValueError
"redis:\/\/127.0.0.1:6379?timeout=0": ValueError
"redis:\/\/127.0.0.1:6379?persistent=maybe": ValueError
"redis:\/\/h1:6379,h2:6379": ValueError
"flock:\/\/somehost\/tmp": ValueError
"flock:?mode=1": ValueError
"semaphore:\/\/host": ValueError
"semaphore:\/some\/path": ValueError
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) %smongodb%s
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) %stimeout%s
ValueError: Lock\Factory::fromDsn(): Argument #1 ($dsn) %sunknown%s
