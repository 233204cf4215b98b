#!/usr/bin/env bash
# Builds the extension without one optional store (as on a machine without its client
# library) in a temp copy, warnings as errors, and checks what that build promises: the
# store's class exists and throws Lock\LockException saying it was not built (without the
# DSN's password), Factory::fromDsn() too, and phpinfo() says so.
#
#   scripts/check-without-store.sh pgsql|mysql|memcached
set -euo pipefail
case "${1:-}" in
	pgsql) flag=--without-lock-pgsql lib=libpq class=PostgresStore dsn='pgsql://u:secret@127.0.0.1/db' info='^Stores not built => .*PostgresStore [(]no libpq' ;;
	mysql) flag=--without-lock-mysql lib=libmariadb class=MysqlStore dsn='mysql://u:secret@127.0.0.1/db' info='^Stores not built => .*MysqlStore [(]no libmariadb' ;;
	memcached) flag=--without-libmemcached lib=libmemcached class=MemcachedStore dsn='memcached://127.0.0.1:11211?prefix=secret' info='^Stores not built => .*MemcachedStore [(]no libmemcached' ;;
	*) echo "usage: $0 pgsql|mysql|memcached" >&2; exit 2 ;;
esac
name="check-without-store $1"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$tmp"
cd "$tmp"
phpize >/dev/null
# Unoptimised: what is checked is that it compiles, warnings as errors, and what it says.
CFLAGS=-O0 ./configure --quiet --enable-lock-dev "$flag" >/dev/null
make -s -j"$(nproc)" >/dev/null
if ldd modules/lock.so | grep -q "$lib"; then
	echo "$name: the build links $lib" >&2
	exit 1
fi
LOCK_CLASS="Lock\\Store\\$class" LOCK_DSN="$dsn" LOCK_INFO="$info" LOCK_NAME="$name" \
	php -n -d extension="$tmp/modules/lock.so" -r '
$class = getenv("LOCK_CLASS");
$dsn = getenv("LOCK_DSN");
$ok = class_exists($class);
foreach ([fn () => new $class($dsn), fn () => Lock\Factory::fromDsn($dsn)] as $f) {
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
$ok = $ok && preg_match("/" . getenv("LOCK_INFO") . "/m", ob_get_clean()) === 1;
echo getenv("LOCK_NAME"), $ok ? ": ok\n" : ": FAILED\n";
exit($ok ? 0 : 1);
'
