#!/usr/bin/env bash
# Measures the Sentinel failover write window with redis-cli only, on the Sentinel group
# of scripts/redis-topology.sh (a master, two replicas, three sentinels, quorum 2,
# down-after-milliseconds 1000): freezes the master with SIGSTOP, waits until a replica
# accepts writes, wakes the old master with SIGCONT and measures for how long it still
# accepts writes (a client's SET sent while it was frozen runs when it wakes, and more
# follow) until it answers READONLY. Prints one line per run and the medians.
#
#   bench/failover-window.sh              3 runs, the sentinels' own timings (INFO every 10 s,
#                                         hello every 2 s: a returning old master is demoted
#                                         after 4 hello periods)
#   bench/failover-window.sh --runs 5     more runs
#   bench/failover-window.sh --tuned      the test command's timings (INFO every 1 s, hello
#                                         every 0.5 s; see scripts/redis-topology.sh)
#   bench/failover-window.sh --min-replicas   every data node with min-replicas-to-write 1 and
#                                         min-replicas-max-lag 1: a master cut off from its
#                                         replicas refuses writes (NOREPLICAS)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
tuned=0
min_replicas=0
while [ $# -gt 0 ]; do
	case "$1" in
		--runs) runs=$2; shift 2 ;;
		--tuned) tuned=1; shift ;;
		--min-replicas) min_replicas=1; shift ;;
		*) echo "usage: $0 [--runs N] [--tuned] [--min-replicas]" >&2; exit 2 ;;
	esac
done

dir=$(mktemp -d /tmp/lock-failover-window.XXXXXX)
cleanup() {
	"$root/scripts/redis-topology.sh" stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
"$root/scripts/redis-topology.sh" start "$dir" --owner $$ >/dev/null
# shellcheck source=/dev/null
. "$dir/env"
master=$LOCK_TEST_SENTINEL_MASTER_PORT
replicas=(${LOCK_TEST_SENTINEL_REPLICA_PORTS//,/ })
sentinels=(${LOCK_TEST_SENTINEL_PORTS//,/ })
name=$LOCK_TEST_SENTINEL_MASTER_NAME
if [ "$min_replicas" = 1 ]; then
	for p in "$master" "${replicas[@]}"; do
		redis-cli -p "$p" config set min-replicas-to-write 1 min-replicas-max-lag 1 >/dev/null
	done
fi

# The sentinels' built-in timings, undoing what the topology sets up for the tests.
stock_timings() {
	local s
	for s in "${sentinels[@]}"; do
		redis-cli -p "$s" sentinel debug info-period 10000 publish-period 2000 tilt-period 30000 >/dev/null
	done
}

# Milliseconds between two $EPOCHREALTIME stamps.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

# Writes to each replica until one takes the write; prints the time and the port.
first_writable_replica() {
	local p
	while :; do
		for p in "${replicas[@]}"; do
			if [ "$(redis-cli -p "$p" set lock:failover-window:probe 1 2>/dev/null)" = OK ]; then
				echo "$EPOCHREALTIME $p"
				return
			fi
		done
	done
}

# Asks the first sentinel until it names another master; prints the time.
sentinel_switch() {
	while [ "$(redis-cli -p "${sentinels[0]}" sentinel get-master-addr-by-name "$name" 2>/dev/null | sed -n 2p)" = "$master" ]; do
		sleep 0.005
	done
	echo "$EPOCHREALTIME"
}

# SETs on the old master, one client a command, until it answers READONLY (or
# NOREPLICAS, with --min-replicas, once its replicas are gone): each line
# "sent-at answered-at reply". The first one is sent while the master is frozen.
old_master_writes() {
	local sent reply i=0
	while :; do
		sent=$EPOCHREALTIME
		reply=$(redis-cli -p "$master" set "lock:failover-window:$i" 1 2>&1 | head -n 1)
		echo "$sent $EPOCHREALTIME $reply"
		i=$((i + 1))
		case "$reply" in
			READONLY* | NOREPLICAS*) return ;;
		esac
	done
}

results=()
for run in $(seq 1 "$runs"); do
	[ "$tuned" = 1 ] || stock_timings
	pid=$(cat "$dir/run/$master.pid")
	t_stop=$EPOCHREALTIME
	kill -STOP "$pid"
	first_writable_replica >"$dir/promoted" &
	promoted_pid=$!
	sentinel_switch >"$dir/switched" &
	switched_pid=$!
	old_master_writes >"$dir/writes" &
	writes_pid=$!
	wait "$promoted_pid"
	read -r t_promoted new_master <"$dir/promoted"
	t_cont=$EPOCHREALTIME
	kill -CONT "$pid"
	wait "$switched_pid"
	t_switched=$(cat "$dir/switched")
	if ! timeout 120 tail --pid="$writes_pid" -f /dev/null; then
		echo "failover-window: the old master still takes writes 120 s after it woke" >&2
		exit 1
	fi
	# The last write it acknowledged, and the first refusal.
	t_last_ok=$(awk '$3 == "OK" { t = $2 } END { print t }' "$dir/writes")
	t_readonly=$(awk '$3 ~ /^(READONLY|NOREPLICAS)/ { print $2; exit }' "$dir/writes")
	acked=$(awk -v c="$t_cont" '$3 == "OK" && $2 > c { n++ } END { print n + 0 }' "$dir/writes")
	# Those writes exist only on the old master, which drops them when it syncs with the new one.
	kept=$(redis-cli -p "$new_master" --scan --pattern 'lock:failover-window:[0-9]*' | grep -c . || true)
	line=$(printf 'run %d: promoted %s ms after SIGSTOP (sentinel named it at %s ms); old master woken %s ms after SIGSTOP, took writes for %s ms after it woke (%s acknowledged, %s of them on the new master), refused writes at %s ms' \
		"$run" "$(ms "$t_stop" "$t_promoted")" "$(ms "$t_stop" "$t_switched")" "$(ms "$t_stop" "$t_cont")" \
		"$(ms "$t_cont" "${t_last_ok:-$t_cont}")" "$acked" "$kept" "$(ms "$t_cont" "$t_readonly")")
	echo "$line"
	results+=("$(ms "$t_stop" "$t_promoted") $(ms "$t_cont" "${t_last_ok:-$t_cont}") $(ms "$t_cont" "$t_readonly")")
	"$root/scripts/redis-topology.sh" restore "$dir"
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf '%s\n' "${results[@]}" >"$dir/results"
echo "medians of $runs runs ($([ "$tuned" = 1 ] && echo "tuned" || echo "stock") sentinel timings, down-after-milliseconds ${LOCK_TEST_SENTINEL_DOWN_AFTER_MS}$([ "$min_replicas" = 1 ] && echo ", min-replicas-to-write 1")):" \
	"no writable master for $(awk '{ print $1 }' "$dir/results" | median) ms;" \
	"the old master took writes for $(awk '{ print $2 }' "$dir/results" | median) ms after it woke" \
	"(refused writes after $(awk '{ print $3 }' "$dir/results" | median) ms)"
