--TEST--
mysql: a password (in the DSN, the query or the options) never shows in messages, traces, var_dump(), print_r() or phpinfo(), also after a refused connection
--EXTENSIONS--
lock
--INI--
zend.exception_ignore_args=0
zend.exception_string_param_max_len=1000000
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

[$host, $port, $user, $pass, $db] = lock_test_mysql_parts();
$wrong = 'Wr0ng-mysql-secret';
$secrets = [$pass, $wrong, rawurlencode($pass), rawurlencode($wrong)];
$shows = static function (string $text) use ($secrets): bool {
    foreach ($secrets as $s) {
        if (str_contains($text, $s)) {
            return true;
        }
    }
    return false;
};
$calls = [
    'constructor, bad DSN' => fn () => new Lock\Store\MysqlStore("mysql://$user:$pass@$host:notaport/$db"),
    'constructor, bad option' => fn () => new Lock\Store\MysqlStore("mysql://$host:$port/$db", ['password' => $pass, 'nope' => 1]),
    'constructor, bad query' => fn () => new Lock\Store\MysqlStore("mysql://$host:$port/$db?password=$pass&nope=1"),
    'fromDsn, bad DSN' => fn () => Lock\Factory::fromDsn("mysql://$user:$pass@$host:$port/$db/x"),
    'wrong password' => fn () => (new Lock\Lock('r', new Lock\Store\MysqlStore("mysql://$user:$wrong@$host:$port/$db")))->acquire(),
    'wrong password as an option' => fn () => (new Lock\Store\MysqlStore("mysql://$host:$port/$db", ['username' => $user, 'password' => $wrong]))->isLocked('r'),
    'wrong password in the query' => fn () => Lock\Factory::fromDsn("mysql://$user@$host:$port/$db?password=$wrong")->createLock('r')->acquire(true, 1.0),
];
foreach ($calls as $what => $call) {
    try {
        $call();
        echo "$what: no exception\n";
    } catch (Throwable $e) {
        echo "$what: ", get_class($e), ', shows a password: ',
            var_export($shows((string) $e) || $shows(json_encode($e->getTrace(), JSON_INVALID_UTF8_SUBSTITUTE)), true), "\n";
    }
}
$stores = [
    new Lock\Store\MysqlStore("mysql://$user:$pass@$host:$port/$db?persistent=1&prefix=" . rawurlencode(lock_test_prefix())),
    new Lock\Store\MysqlStore("mysql://$host:$port/$db", ['username' => $user, 'password' => $pass, 'prefix' => lock_test_prefix()]),
    Lock\Factory::fromDsn("mysql://$user@$host:$port/$db?password=$pass&prefix=" . rawurlencode(lock_test_prefix()))->getStore(),
];
$locks = [];
foreach ($stores as $i => $store) {
    $lock = new Lock\Lock('r', $store);
    var_dump($lock->acquire());
    $locks[] = $lock;
}
ob_start();
var_dump($stores, $locks);
print_r($stores);
var_export($stores);
// Not INFO_ENVIRONMENT or INFO_VARIABLES: the test command passes the DSN in the environment.
phpinfo(INFO_GENERAL | INFO_CONFIGURATION | INFO_MODULES);
$out = ob_get_clean();
echo 'dumps and phpinfo() show a password: ', var_export($shows($out), true), "\n";
?>
--EXPECT--
constructor, bad DSN: ValueError, shows a password: false
constructor, bad option: ValueError, shows a password: false
constructor, bad query: ValueError, shows a password: false
fromDsn, bad DSN: ValueError, shows a password: false
wrong password: Lock\StorageException, shows a password: false
wrong password as an option: Lock\StorageException, shows a password: false
wrong password in the query: Lock\StorageException, shows a password: false
bool(true)
bool(true)
bool(true)
dumps and phpinfo() show a password: false
