--TEST--
phpinfo() has a "lock" section with the version, the hiredis version and the stores
--EXTENSIONS--
lock
--FILE--
<?php
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();

// The CLI prints the section as a title line followed by "name => value" rows.
$start = strpos($info, "\nlock\n");
var_dump($start !== false);
$section = substr($info, $start, 2000);
var_dump(preg_match('/^Version => (\S+)$/mi', $section, $m) === 1);
var_dump($m[1] === phpversion('lock'));
var_dump(preg_match('/^\d+\.\d+\.\d+/', phpversion('lock')) === 1);
var_dump(preg_match('/^hiredis version => \d+\.\d+\.\d+$/mi', $section) === 1);
var_dump(preg_match('/^Stores => (.*)$/mi', $section, $m) === 1);
var_dump(preg_match('/^Stores not built => (none|\w+Store \(no [^)]+\)(, \w+Store \(no [^)]+\))*)$/mi', $section) === 1);
foreach (['FlockStore', 'SemaphoreStore', 'RedisStore'] as $store) {
    echo $store, ': ', var_export(str_contains($m[1], $store), true), "\n";
}
// The INI entries are shown in the section too.
var_dump(str_contains($section, 'lock.redis_timeout'));
var_dump(str_contains($section, 'lock.default_ttl'));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
FlockStore: true
SemaphoreStore: true
RedisStore: true
bool(true)
bool(true)
