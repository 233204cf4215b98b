#!/usr/bin/env bash
# Builds the extension without the PostgreSQL store (./configure --without-lock-pgsql, as on
# a machine without libpq) in a temp copy, warnings as errors, and checks what that build
# promises: PostgresStore exists and throws Lock\LockException saying it was not built,
# Factory::fromDsn('pgsql://...') too, and phpinfo() lists the store as not built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$tmp"
cd "$tmp"
phpize >/dev/null
./configure --quiet --enable-lock-dev --without-lock-pgsql >/dev/null
make -s -j"$(nproc)" >/dev/null
if ldd modules/lock.so | grep -q libpq; then
	echo "check-no-pgsql: the build links libpq" >&2
	exit 1
fi
php -n -d extension="$tmp/modules/lock.so" -r '
$ok = class_exists(Lock\Store\PostgresStore::class);
foreach ([fn () => new Lock\Store\PostgresStore("pgsql://u:secret@127.0.0.1/db"), fn () => Lock\Factory::fromDsn("pgsql://u:secret@127.0.0.1/db")] as $f) {
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
$ok = $ok && preg_match("/^Stores not built => pgsql/m", ob_get_clean()) === 1;
echo $ok ? "check-no-pgsql: ok\n" : "check-no-pgsql: FAILED\n";
exit($ok ? 0 : 1);
'
