#!/usr/bin/env bash
# The soak: mixed load over every store (flock, semaphore, Redis fair and unfair,
# persistent and not) from several worker processes, with Redis restarts, checking
# lost updates, exclusion, fencing, RSS, file descriptors, semaphore sets, Redis
# keys, crashes and hangs. One PASS/FAIL line per check, then "soak: N passed, N failed".
#
#   scripts/soak.sh                  60 s, what CI runs
#   scripts/soak.sh --seconds N      N seconds
#   scripts/soak.sh --long           30 minutes
#   options: --workers N (default 6), --seed N
#
# It uses the extension at $LOCK_TEST_EXT (default modules/lock.so: run scripts/build.sh
# first), starts its own redis-server on a free loopback port, and removes everything
# it made (processes, semaphore sets, the run directory) on every exit path.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

seconds=60
workers=6
seed=""
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) seconds=${2:-}; shift ;;
		--seconds=*) seconds=${1#*=} ;;
		--long) seconds=1800 ;;
		--workers) workers=${2:-}; shift ;;
		--workers=*) workers=${1#*=} ;;
		--seed) seed=${2:-}; shift ;;
		--seed=*) seed=${1#*=} ;;
		*) echo "soak: unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
	esac
	shift
done
for n in "$seconds" "$workers" ${seed:+"$seed"}; do
	case "$n" in ''|*[!0-9]*) echo "soak: not a whole number: '$n'" >&2; exit 2 ;; esac
done
if [ "$seconds" -lt 8 ]; then
	echo "soak: --seconds must be at least 8" >&2
	exit 2
fi

ext="${LOCK_TEST_EXT:-$root/modules/lock.so}"
if [ ! -f "$ext" ]; then
	echo "FAIL soak: $ext not found; build it first (scripts/build.sh)"
	echo "soak: 0 passed, 1 failed"
	exit 1
fi
export LOCK_TEST_EXT="$ext"
for tool in php redis-server; do
	if ! command -v "$tool" >/dev/null; then
		echo "FAIL soak: $tool not found (scripts/install-deps.sh installs it)"
		echo "soak: 0 passed, 1 failed"
		exit 1
	fi
done

run="$(mktemp -d "${TMPDIR:-/tmp}/lock-soak.XXXXXX")"
driver_pid=""

# Every exit path: stop the driver (it ends its workers and server itself), then kill
# whatever of this run is left, remove its semaphore sets and its directory.
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$driver_pid" ] && kill -0 "$driver_pid" 2>/dev/null; then
		kill -TERM "$driver_pid" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$driver_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$driver_pid" 2>/dev/null
		wait "$driver_pid" 2>/dev/null
	fi
	# Workers name the run directory on their command line; redis-server rewrites its
	# own, so it is found by the pid the driver wrote (and checked to be redis-server).
	local p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case "$cmd" in *"$run/"*|*"$run "*) kill -KILL "${p#/proc/}" 2>/dev/null ;; esac
	done
	if [ -f "$run/redis.pid" ]; then
		p=$(cat "$run/redis.pid")
		if grep -q '^redis-server' "/proc/$p/comm" 2>/dev/null; then
			kill -KILL "$p" 2>/dev/null
		fi
	fi
	# In a private IPC namespace the sets went with it; in the shared one remove ours.
	if [ -f "$run/semkeys" ]; then
		while read -r key; do
			ipcrm -S "$key" 2>/dev/null
		done <"$run/semkeys"
	fi
	rm -rf "$run"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# A private IPC namespace makes the semaphore count exact (nobody else's sets in it);
# SOAK_IPC=shared runs in the shared one, as where unshare is not allowed.
ipc=shared
ns=()
if [ "${SOAK_IPC:-}" != shared ] && unshare --ipc true 2>/dev/null; then
	ipc=private
	ns=(unshare --ipc --)
fi

# A hard limit on the whole run on top of the driver's own watchdog of its workers.
limit=$((seconds + 300))
timeout --kill-after=30 "$limit" "${ns[@]}" php -d extension="$ext" -d error_reporting=-1 \
	-d display_errors=1 -d memory_limit=1G "$root/tests/soak/soak.php" \
	--dir "$run" --seconds "$seconds" --workers "$workers" --ipc "$ipc" ${seed:+--seed "$seed"} &
driver_pid=$!
wait "$driver_pid"
rc=$?
driver_pid=""
case "$rc" in
	0|1) ;;
	124) echo "FAIL soak: the run did not finish within $limit s"; echo "soak: 0 passed, 1 failed"; rc=1 ;;
	*) echo "FAIL soak: the driver ended with exit code $rc"; echo "soak: 0 passed, 1 failed"; rc=1 ;;
esac
exit "$rc"
