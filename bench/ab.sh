#!/usr/bin/env bash
# Two builds of the extension against each other, in the same run (run by hand):
#   bench/ab.sh OLD/lock.so NEW/lock.so [flock] [sem] [redis]
# alternates the two, AB_ROUNDS (12) rounds of AB_SECONDS (0.5) each per store, of
# acquire+release cycles on one lock (bench/ab_cycle.php), and prints each build's median
# rate and their ratio. Redis: the server at REDIS_DSN (redis://127.0.0.1:6379).
# Build the old one in a worktree: git worktree add /tmp/old REV && (cd /tmp/old && scripts/build.sh).
set -euo pipefail
bench="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 3 ] || { echo "usage: $0 OLD.so NEW.so flock|sem|redis..." >&2; exit 2; }
old="$1" new="$2"
shift 2
rounds="${AB_ROUNDS:-12}" seconds="${AB_SECONDS:-0.5}"
for so in "$old" "$new"; do
	[ -f "$so" ] || { echo "ab: no such build: $so" >&2; exit 2; }
done
for kind in "$@"; do
	a=() b=()
	for _ in $(seq "$rounds"); do
		a+=("$(php -d "extension=$old" "$bench/ab_cycle.php" "$kind" "$seconds")")
		b+=("$(php -d "extension=$new" "$bench/ab_cycle.php" "$kind" "$seconds")")
	done
	php -r '
		[, $kind, $a, $b] = $argv;
		$med = function (string $s): float { $v = array_map("floatval", explode(" ", $s)); sort($v); $n = count($v);
			return $n % 2 ? $v[intdiv($n, 2)] : ($v[$n / 2 - 1] + $v[$n / 2]) / 2; };
		printf("%-6s old %s/s, new %s/s, new/old %.3f\n", $kind, number_format($med($a)), number_format($med($b)), $med($b) / $med($a));
	' "$kind" "${a[*]}" "${b[*]}"
done
