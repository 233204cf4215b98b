--TEST--
RedisStore: a TLS file outside open_basedir is a StorageException naming the option, whatever the file holds
--EXTENSIONS--
lock
--FILE--
<?php
require __DIR__ . '/../inc/common.inc';

$dir = lock_test_tmpdir('basedir');
mkdir("$dir/in");
mkdir("$dir/out");
foreach (['in', 'out'] as $where) {
    file_put_contents("$dir/$where/ca.pem", "x\n");
    mkdir("$dir/$where/certs");
}
// The child narrows open_basedir itself, after its helpers are loaded.
[$code, $out] = lock_test_run_php('
$dir = ' . var_export($dir, true) . ';
ini_set("open_basedir", "$dir/in");
foreach ([["tls_ca_file" => "$dir/out/ca.pem"], ["tls_ca_dir" => "$dir/out/certs"], ["tls_ca_file" => "$dir/in/../out/ca.pem"],
    ["tls_ca_file" => "$dir/in/ca.pem", "tls_ca_dir" => "$dir/in/certs"]] as $options) {
    try {
        new Lock\Store\RedisStore("rediss://127.0.0.1:6380", $options);
        echo "no exception\n";
    } catch (Throwable $e) {
        echo get_class($e), ": ", str_replace($dir, "DIR", $e->getMessage()), "\n";
    }
}
');
echo $out;
var_dump($code);
?>
--EXPECT--
Lock\StorageException: Redis: tls_ca_file "DIR/out/ca.pem" is outside open_basedir
Lock\StorageException: Redis: tls_ca_dir "DIR/out/certs" is outside open_basedir
Lock\StorageException: Redis: tls_ca_file "DIR/out/ca.pem" is outside open_basedir
Lock\StorageException: Redis: cannot load the CA of tls_ca_file 'DIR/in/ca.pem': no certificate or crl found
int(0)
