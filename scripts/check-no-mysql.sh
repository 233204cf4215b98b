#!/usr/bin/env bash
# Builds the extension without the MySQL store (./configure --without-lock-mysql, as on a
# machine without libmariadb) in a temp copy, warnings as errors, and checks what that build
# promises: MysqlStore exists and throws Lock\LockException saying it was not built,
# Factory::fromDsn('mysql://...') too, and phpinfo() says the store was not built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$tmp"
cd "$tmp"
phpize >/dev/null
./configure --quiet --enable-lock-dev --without-lock-mysql >/dev/null
make -s -j"$(nproc)" >/dev/null
if ldd modules/lock.so | grep -q libmariadb; then
	echo "check-no-mysql: the build links libmariadb" >&2
	exit 1
fi
php -n -d extension="$tmp/modules/lock.so" -r '
$ok = class_exists(Lock\Store\MysqlStore::class);
foreach ([fn () => new Lock\Store\MysqlStore("mysql://u:secret@127.0.0.1/db"), fn () => Lock\Factory::fromDsn("mysql://u:secret@127.0.0.1/db")] as $f) {
    try {
        $f();
        $ok = false;
    } catch (Lock\LockException $e) {
        $ok = $ok && get_class($e) === Lock\LockException::class && str_contains($e->getMessage(), "not built")
            && !str_contains($e->getMessage(), "secret");
    }
}
ob_start();
phpinfo(INFO_MODULES);
$ok = $ok && preg_match("/^MySQL store => not built/m", ob_get_clean()) === 1;
echo $ok ? "check-no-mysql: ok\n" : "check-no-mysql: FAILED\n";
exit($ok ? 0 : 1);
'
