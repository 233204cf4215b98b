#!/usr/bin/env bash
# Regenerates stubs/*_arginfo.h from stubs/*.stub.php with PHP's gen_stub.php, offline.
# With --check, regenerates into a temp copy and fails when the committed arginfo differs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gen_stub="$(dirname "$(php-config --php-binary)")/../lib/php/$(basename "$(php-config --extension-dir)")/build/gen_stub.php"
[ -f "$gen_stub" ] || gen_stub="/usr/lib/php/$(basename "$(php-config --extension-dir)")/build/gen_stub.php"
[ -f "$gen_stub" ] || { echo "gen-arginfo: gen_stub.php not found (install php8.2-dev)" >&2; exit 1; }
[ -d /usr/share/php/PhpParser ] || { echo "gen-arginfo: PHP-Parser not found (install php-parser)" >&2; exit 1; }

# gen_stub.php downloads PHP-Parser beside itself unless it finds it there: give it Debian's.
tool="$(mktemp -d)"
trap 'rm -rf "$tool"' EXIT
cp "$gen_stub" "$tool/gen_stub.php"
mkdir -p "$tool/PHP-Parser-4.15.1"
ln -s /usr/share/php "$tool/PHP-Parser-4.15.1/lib"

if [ "${1:-}" = "--check" ]; then
	mkdir -p "$tool/stubs"
	cp "$root"/stubs/*.stub.php "$tool/stubs/"
	php "$tool/gen_stub.php" -f "$tool/stubs" >/dev/null
	status=0
	for f in "$tool"/stubs/*_arginfo.h; do
		if ! cmp -s "$f" "$root/stubs/$(basename "$f")"; then
			echo "gen-arginfo: stubs/$(basename "$f") is stale: run scripts/gen-arginfo.sh" >&2
			status=1
		fi
	done
	exit $status
fi
php "$tool/gen_stub.php" -f "$root/stubs"
