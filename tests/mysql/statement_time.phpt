--TEST--
mysql: a user's statement time limit (MariaDB's max_statement_time, 0.5 s for lockother) does not cut a wait that acquire() or waitUntilFree() was asked to make
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/mysql.inc';

[$host, $port, , , $db] = lock_test_mysql_parts();
$prefix = lock_test_prefix();
$limited = new Lock\Store\MysqlStore("mysql://lockother:Lo-my-51c2@$host:$port/$db", ['prefix' => $prefix]);
$holder = new Lock\Lock('m', lock_test_mysql_store(['prefix' => $prefix]));
var_dump($holder->acquire());
$waiter = new Lock\Lock('m', $limited);
$t = hrtime(true);
var_dump($waiter->acquire(true, 1.0));
echo 'waited the whole second: ', var_export(hrtime(true) - $t >= 0.99e9, true), "\n";
$t = hrtime(true);
var_dump($limited->waitUntilFree('m', 1.0));
echo 'waited the whole second: ', var_export(hrtime(true) - $t >= 0.99e9, true), "\n";
$holder->release();
var_dump($waiter->acquire(true, 1.0));
$waiter->release();
?>
--EXPECT--
bool(true)
bool(false)
waited the whole second: true
bool(false)
waited the whole second: true
bool(true)
