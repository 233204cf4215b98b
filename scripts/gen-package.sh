#!/usr/bin/env bash
# Rewrites the <contents> of package.xml from the files git tracks that ship to PECL.
# With --check, fails when package.xml lists a different set of files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# What a PECL user builds and tests: the extension's sources, stubs, tests and docs.
shipped() {
	git ls-files -- config.m4 config.w32 README.md LICENSE docs ext stubs tests \
		| grep -v '^tests/core/build/' | LC_ALL=C sort
}

role() {
	case "$1" in
		README.md|LICENSE|docs/*) echo doc ;;
		tests/*) echo test ;;
		*) echo src ;;
	esac
}

contents() {
	echo "  <contents>"
	echo "    <dir name=\"/\">"
	while IFS= read -r f; do
		echo "      <file name=\"$f\" role=\"$(role "$f")\"/>"
	done < <(shipped)
	echo "    </dir>"
	echo "  </contents>"
}

new="$(mktemp)"
trap 'rm -f "$new"' EXIT
awk -v block="$(contents)" '
	/^  <contents>/ { print block; skip = 1; next }
	/^  <\/contents>/ { skip = 0; next }
	!skip { print }
' package.xml > "$new"

if [ "${1:-}" = "--check" ]; then
	if ! cmp -s "$new" package.xml; then
		echo "gen-package: package.xml does not list the shipped files; run scripts/gen-package.sh" >&2
		diff package.xml "$new" >&2 || true
		exit 1
	fi
	exit 0
fi
cp "$new" package.xml
