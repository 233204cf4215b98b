#!/usr/bin/env bash
# Checks package.xml: it lists every shipped file, and `pecl package` builds an archive
# that holds all of them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
"$root/scripts/gen-package.sh" --check
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# pecl package reads package.xml and the files it names from the current directory.
(cd "$root" && pecl package -n "$root/package.xml" >"$tmp/pecl.log" 2>&1 && mv lock-*.tgz "$tmp/") || {
	cat "$tmp/pecl.log" >&2
	exit 1
}
tar -tzf "$tmp"/lock-*.tgz | sed -n 's#^lock-[^/]*/##p' | LC_ALL=C sort > "$tmp/archived"
grep -o 'name="[^"]*" role' package.xml | sed 's/name="//; s/" role//' | LC_ALL=C sort > "$tmp/listed"
missing="$(comm -23 "$tmp/listed" "$tmp/archived")"
if [ -n "$missing" ]; then
	echo "check-package: not in the archive:" >&2
	echo "$missing" >&2
	exit 1
fi
echo "check-package: $(wc -l < "$tmp/archived") files in $(basename "$tmp"/lock-*.tgz)"
