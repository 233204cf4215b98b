#!/usr/bin/env bash
# Builds the extension in place (modules/lock.so). With --dev, warnings are errors.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
flags=()
[ "${1:-}" = "--dev" ] && flags+=(--enable-lock-dev)
stamp=".build-flags"
# Reconfigure only when the flags or config.m4 changed, so rebuilds are quick.
want="${flags[*]:-} $(md5sum config.m4 | cut -c1-32)"
if [ ! -f Makefile ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	phpize >/dev/null
	./configure --quiet "${flags[@]}" >/dev/null
	echo "$want" > "$stamp"
fi
make -s -j"$(nproc)" >/dev/null
echo "build: $root/modules/lock.so"
