--TEST--
INI lock.redis_timeout and lock.default_ttl exist, with their defaults, and refuse bad values
--EXTENSIONS--
lock
--FILE--
<?php
var_dump((float) ini_get('lock.redis_timeout') > 0);
var_dump((float) ini_get('lock.default_ttl'));

var_dump(ini_set('lock.default_ttl', '12.5') !== false);
var_dump(ini_get('lock.default_ttl'));
var_dump(ini_set('lock.redis_timeout', '0.25') !== false);
var_dump(ini_get('lock.redis_timeout'));

// Zero, negative and non-finite durations are refused; the old value stays.
foreach (['0', '-1', 'INF', 'NAN', 'abc'] as $bad) {
    echo $bad, ': ', var_export(@ini_set('lock.default_ttl', $bad), true), ' ', ini_get('lock.default_ttl'), "\n";
}
?>
--EXPECT--
bool(true)
float(300)
bool(true)
string(4) "12.5"
bool(true)
string(4) "0.25"
0: false 12.5
-1: false 12.5
INF: false 12.5
NAN: false 12.5
abc: false 12.5
