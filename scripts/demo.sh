#!/usr/bin/env bash
# The first README command: installs what is missing, builds, and runs the flock demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec php -d extension="$root/modules/lock.so" "$root/examples/demo.php"
