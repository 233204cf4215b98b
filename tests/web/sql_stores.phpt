--TEST--
web: PostgresStore and MysqlStore holds of a request are released at its end, also after a fatal error, an uncaught exception or the time limit; without autoRelease a hold stays with the worker across requests
--EXTENSIONS--
lock
posix
--FILE--
<?php
require __DIR__ . '/../inc/web.inc';
require __DIR__ . '/../inc/pgsql.inc';
require __DIR__ . '/../inc/mysql.inc';

$web = new LockTestWebServer();
$pid = $web->workerPid();
foreach (['pgsql' => lock_test_pgsql_dsn(), 'mysql' => lock_test_mysql_dsn()] as $kind => $dsn) {
    echo "-- $kind\n";
    $params = ['store' => $kind, 'dsn' => $dsn, 'prefix' => lock_test_prefix(), 'resource' => 'r'];
    foreach (['hold', 'exit', 'exception', 'fatal', 'time_limit', 'run_fatal'] as $how) {
        $first = strtok(trim($web->get(['action' => $how] + $params)), "\n");
        echo "$how: $first, then ", trim($web->get(['action' => 'check'] + $params)), "\n";
    }
    echo 'without autoRelease: ', trim($web->get(['action' => 'hold', 'autoRelease' => '0'] + $params)), ', then ',
        trim($web->get(['action' => 'check'] + $params)), ', ', trim($web->get(['action' => 'try'] + $params)), "\n";
}
var_dump($web->workerPid() === $pid);
?>
--EXPECT--
-- pgsql
hold: acquired=true, then locked=false
exit: acquired=true, then locked=false
exception: acquired=true, then locked=false
fatal: acquired=true, then locked=false
time_limit: acquired=true, then locked=false
run_fatal: acquired=true, then locked=false
without autoRelease: acquired=true, then locked=true, acquired=false locked=true
-- mysql
hold: acquired=true, then locked=false
exit: acquired=true, then locked=false
exception: acquired=true, then locked=false
fatal: acquired=true, then locked=false
time_limit: acquired=true, then locked=false
run_fatal: acquired=true, then locked=false
without autoRelease: acquired=true, then locked=true, acquired=false locked=true
bool(true)
