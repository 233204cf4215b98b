#!/usr/bin/env bash
# The benchmark against the peers, in one run: rates of uncontended acquire+release
# cycles (Redis, flock, semaphore), memory growth over many cycles, handoff latency
# of blocking waits and 8-process contention. Prints the table and writes it to
# bench/results/latest.txt, with SVG charts of the groups that ran beside it
# (latest-handoff.svg, latest-contention.svg, latest-rates.svg; bench/chart.php);
# exits 1 when a target is missed.
#
#   bench/run.sh                    every group
#   bench/run.sh redis flock        only these groups (redis, flock, sem, read, memory, handoff, contention, distinct, frameworks, topology, memcached, pgsql, mysql, redlock, autorefresh)
#
# The topology group starts the TLS, Sentinel and Cluster servers of scripts/redis-topology.sh;
# pgsql and mysql start a PostgreSQL and a MariaDB of their own (scripts/pg-test-server.sh,
# scripts/my-test-server.sh) and measure rates and handoffs there. The redlock group starts five
# redis-servers of its own and measures one lock over three and five of them (CombinedStore)
# against one RedisStore, Symfony's CombinedStore and the bare fan, one member behind a 50 ms
# proxy, and the handoff over three servers against one. The autorefresh group starts a
# redis-server of its own, on CPU 1 while its PHP processes run on CPU 0, and measures a
# CPU-bound PHP loop beside 100 holds that the extension's thread refreshes against the loop
# beside 100 not refreshed, then 1,000 holds of 1 s kept by the thread for BENCH_AUTOREFRESH_SECONDS (60) while
# a second process checks them (bench/autorefresh.php).
#
# BENCH_SECONDS (default 0.25) is the length of one measured slice, BENCH_ROUNDS
# (default 20) the number of alternating rounds; BENCH_MEM_FLOCK (1000000) and
# BENCH_MEM_REDIS (100000) are the cycles of the memory runs; BENCH_HANDOFFS (200)
# handoffs per contender in BENCH_HANDOFF_ROUNDS (10) rounds, the holder pausing up
# to BENCH_HANDOFF_DELAY_MS (110) before it releases; BENCH_CONTENTION_SECONDS (5)
# of contention per contender in BENCH_CONTENTION_ROUNDS (5) rounds; BENCH_DISTINCT
# (1000000) distinct names acquired and released once on each store, Redis keys given
# BENCH_DISTINCT_SETTLE (15) seconds to expire; PHP picks the php binary;
# BENCH_CHARTS_DIR, when set, is a directory that also gets the charts, as bench-*.svg;
# BENCH_AUTOREFRESH_SECONDS (60) is how long the autorefresh group keeps its 1,000 holds,
# BENCH_AUTOREFRESH_ROUNDS (30) its rounds of the CPU-bound loop beside holds not refreshed and refreshed ones.
# bench/README.md explains the method.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bench="$root/bench"
php="${PHP:-php}"
seconds="${BENCH_SECONDS:-0.25}"
rounds="${BENCH_ROUNDS:-20}"
mem_flock="${BENCH_MEM_FLOCK:-1000000}"
mem_redis="${BENCH_MEM_REDIS:-100000}"
handoffs="${BENCH_HANDOFFS:-200}"
handoff_rounds="${BENCH_HANDOFF_ROUNDS:-10}"
handoff_delay="${BENCH_HANDOFF_DELAY_MS:-110}"
contention_seconds="${BENCH_CONTENTION_SECONDS:-5}"
contention_rounds="${BENCH_CONTENTION_ROUNDS:-5}"
distinct="${BENCH_DISTINCT:-1000000}"
charts_dir="${BENCH_CHARTS_DIR:-}"
autorefresh_seconds="${BENCH_AUTOREFRESH_SECONDS:-60}"
autorefresh_rounds="${BENCH_AUTOREFRESH_ROUNDS:-30}"
ext="$root/modules/lock.so"

all_groups=(redis flock sem read memory handoff contention distinct frameworks topology memcached pgsql mysql redlock autorefresh)
groups=()
for arg in "$@"; do
	case "$arg" in
		redis | flock | read | memory | handoff | contention | distinct | frameworks | topology | memcached | pgsql | mysql | redlock | autorefresh) groups+=("$arg") ;;
		sem | semaphore) groups+=(sem) ;;
		-h | --help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench: unknown group '$arg' (redis, flock, sem, read, memory, handoff, contention, distinct, frameworks, topology, memcached, pgsql, mysql, redlock, autorefresh)" >&2; exit 2 ;;
	esac
done
[ ${#groups[@]} -eq 0 ] && groups=("${all_groups[@]}")
if ! [[ "$seconds" =~ ^[0-9]*[.]?[0-9]+$ ]] || ! awk -v s="$seconds" 'BEGIN { exit !(s > 0) }'; then
	echo "bench: BENCH_SECONDS must be a number of seconds above 0, not '$seconds'" >&2
	exit 2
fi
for count in "$rounds" "$mem_flock" "$mem_redis" "$handoffs" "$handoff_rounds" "$handoff_delay" \
	"$contention_seconds" "$contention_rounds" "$distinct" "$autorefresh_seconds" "$autorefresh_rounds"; do
	if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_ROUNDS, BENCH_MEM_*, BENCH_HANDOFF*, BENCH_CONTENTION_*, BENCH_DISTINCT and BENCH_AUTOREFRESH_* must be positive integers, not '$count'" >&2
		exit 2
	fi
done
if [ -n "$charts_dir" ] && ! mkdir -p "$charts_dir"; then
	echo "bench: BENCH_CHARTS_DIR '$charts_dir' is not a directory that can be made" >&2
	exit 2
fi
# Handoffs per round (the total is rounded up to whole rounds) and seconds of one contention slice.
handoff_slice=$(((handoffs + handoff_rounds - 1) / handoff_rounds))
contention_slice="$(awk -v s="$contention_seconds" -v r="$contention_rounds" 'BEGIN { printf "%.3f", s / r }')"

# Which groups run.
wants() {
	local g
	for g in "${groups[@]}"; do
		[ "$g" = "$1" ] && return 0
	done
	return 1
}

if [ ! -f "$ext" ]; then
	echo "bench: $ext is missing, building it" >&2
	"$root/scripts/build.sh" >&2 || exit 1
fi

work="$(mktemp -d /tmp/lock-bench.XXXXXX)"
# The database servers run as nobody when we are root: they must reach their directories in here.
chmod 711 "$work"
redis_pids=()
worker_pids=()
cleanup() {
	local pid
	for pid in "${worker_pids[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for pid in "${redis_pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		fi
	done
	[ -f "$work/topology/env" ] && "$root/scripts/redis-topology.sh" stop "$work/topology" >/dev/null 2>&1
	# --- MemcachedStore ---
	if [ -n "${memcached_pid:-}" ] && kill -0 "$memcached_pid" 2>/dev/null; then
		kill "$memcached_pid" 2>/dev/null
		wait "$memcached_pid" 2>/dev/null
	fi
	# --- end MemcachedStore ---
	[ -d "$work/pgsql" ] && "$root/scripts/pg-test-server.sh" stop "$work/pgsql" >/dev/null 2>&1
	[ -d "$work/mysql" ] && "$root/scripts/my-test-server.sh" stop "$work/mysql" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A worker that died shows as a failed write to its pipe, reported below, not as a SIGPIPE.
trap '' PIPE

# A loopback TCP port nobody listens on right now.
free_port() {
	"$php" -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);'
}

# Starts a private redis-server without persistence, logging to $work/<name>.log; sets
# redis_port, and the cleanup stops it.
start_redis() {
	local name=$1 try i pid
	for try in 1 2 3 4 5; do
		redis_port="$(free_port)"
		redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$work" --logfile "$work/$name.log" --daemonize no &
		pid=$!
		for i in $(seq 1 50); do
			if redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
				redis_pids+=("$pid")
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	echo "bench: cannot start redis-server (see its log below)" >&2
	cat "$work/$name.log" >&2 2>/dev/null
	return 1
}

if wants redis || wants read || wants memory || wants handoff || wants contention || wants distinct || wants frameworks || wants topology; then
	start_redis redis || exit 1
	export BENCH_REDIS_PORT="$redis_port"
fi
# The redlock group's five independent servers.
if wants redlock; then
	redlock_ports=()
	for i in 1 2 3 4 5; do
		start_redis "redlock-$i" || exit 1
		redlock_ports+=("$redis_port")
	done
	BENCH_REDLOCK_PORTS="$(IFS=,; echo "${redlock_ports[*]}")"
	export BENCH_REDLOCK_PORTS
fi
# The autorefresh group's server of its own, so that its counters and CPU are the group's alone;
# on a machine of two CPUs or more it gets CPU 1 and the group's PHP processes CPU 0.
autorefresh_pin=()
autorefresh_cpus="-"
if wants autorefresh; then
	start_redis autorefresh || exit 1
	autorefresh_port="$redis_port"
	if [ "$(nproc)" -ge 2 ] && taskset -apc 1 "${redis_pids[-1]}" >/dev/null; then
		autorefresh_pin=(taskset -c 0)
		autorefresh_cpus="0 1"
	fi
fi
# --- MemcachedStore: a private memcached (as nobody when we are root, which memcached refuses) ---
memcached_pid=""
if wants memcached; then
	memcached_port="$(free_port)"
	memcached_user=()
	[ "$(id -u)" = 0 ] && memcached_user=(-u nobody)
	memcached "${memcached_user[@]}" -l 127.0.0.1 -p "$memcached_port" -U 0 -m 64 >"$work/memcached.log" 2>&1 &
	memcached_pid=$!
	for _ in $(seq 1 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$memcached_port") 2>/dev/null && break
		sleep 0.1
	done
	export BENCH_MEMCACHED_PORT="$memcached_port"
fi
# --- end MemcachedStore ---
# A PostgreSQL and a MariaDB of our own, as the tests start them.
if wants pgsql; then
	if ! BENCH_PGSQL_DSN="$("$root/scripts/pg-test-server.sh" start "$work/pgsql" 2>"$work/pgsql.log")"; then
		echo "bench: cannot start PostgreSQL:" >&2
		tail -n 20 "$work/pgsql.log" >&2
		exit 1
	fi
	export BENCH_PGSQL_DSN
fi
if wants mysql; then
	if ! BENCH_MYSQL_DSN="$("$root/scripts/my-test-server.sh" start "$work/mysql" 2>"$work/mysql.log")"; then
		echo "bench: cannot start MariaDB:" >&2
		tail -n 20 "$work/mysql.log" >&2
		exit 1
	fi
	export BENCH_MYSQL_DSN
fi
# Every contender loads one private copy of the module: a rebuild of modules/lock.so in
# place during the run would otherwise crash the workers that have it mapped (SIGBUS).
cp "$ext" "$work/lock.so" || exit 1
module="modules/lock.so of $(date -u -r "$ext" '+%Y-%m-%d %H:%M:%S UTC'), md5 $(md5sum "$work/lock.so" | cut -c1-12)"
ext="$work/lock.so"
if ! "$php" -d "extension=$ext" -r 'exit(extension_loaded("lock") ? 0 : 1);'; then
	echo "bench: $ext does not load; is a build running? Try again when it is done" >&2
	exit 1
fi
mkdir -p "$work/flock"
export BENCH_DIR="$work/flock"
export BENCH_RESOURCE="lock-bench-$$"
export BENCH_HANDOFF_DELAY_MS="$handoff_delay"
# Each contention process's waits, for the chart.
mkdir -p "$work/waits"
export BENCH_WAITS_DIR="$work/waits"

# Sets cmd to the command of one contender, a PHP process of its own: ours with the
# extension, the peers without it.
worker_cmd() {
	local contender=$1
	shift
	cmd=("$php")
	case "$contender" in
		*.ours | *.ours-* | *-ours) cmd+=(-d "extension=$ext") ;;
	esac
	cmd+=("$bench/worker.php" "$contender" "$@")
}

raw="$work/raw.tsv"
: >"$raw"
started=$SECONDS
# Other work on the machine shows in the figures (the waiting groups most), so the results say how busy it was.
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
# Longest a worker may take to answer: its slice, plus set-up and slow-machine slack
# (a handoff takes at most the holder's pause plus Symfony's 110 ms poll, with room to spare).
answer_timeout="$(awk -v s="$seconds" -v c="$contention_slice" -v h="$handoff_slice" -v d="$handoff_delay" \
	'BEGIN { t = s; if (c > t) t = c; if (h * (d + 300) / 1000 > t) t = h * (d + 300) / 1000; printf "%d", t + 60 }')"

# Reads one line from a worker into $line, failing when it dies or hangs.
ask() {
	local fd=$1 contender=$2
	if ! IFS= read -r -t "$answer_timeout" line <&"$fd"; then
		echo "bench: contender $contender stopped answering (see its errors above)" >&2
		exit 1
	fi
}

# Sends one command line to a worker, failing when it has died.
tell() {
	local fd=$1 contender=$2 command=$3
	if ! echo "$command" >&"$fd" 2>/dev/null; then
		echo "bench: contender $contender has died (see its errors above)" >&2
		exit 1
	fi
}

# Starts every contender of a group as a serving worker (set up and warmed up once),
# then runs them in alternation for the given rounds, one slice each per round,
# rotating the order each round so that no contender always runs first; records
# each slice's answer as a line of raw.tsv: a rate for kind rate, the worker's own
# line (latencies, contention figures) for the others.
#   serve_group <kind> <rounds> <warm-up argument> <command> <contender>...
serve_group() {
	local kind=$1 group_rounds=$2 warmup=$3 command=$4
	shift 4
	local contenders=("$@") n=$# r i c line
	local wfd=() rfd=() pids=()
	for ((i = 0; i < n; i++)); do
		c="${contenders[$i]}"
		mkfifo "$work/$c.in" "$work/$c.out"
		(
			# The pipes of the contenders started before are not this one's business.
			for fd in "${wfd[@]}" "${rfd[@]}"; do
				exec {fd}>&-
			done
			worker_cmd "$c" serve "$warmup"
			exec "${cmd[@]}"
		) <"$work/$c.in" >"$work/$c.out" &
		pids[$i]=$!
		worker_pids+=("$!")
		exec {fd}>"$work/$c.in"
		wfd[$i]=$fd
		exec {fd}<"$work/$c.out"
		rfd[$i]=$fd
	done
	for ((i = 0; i < n; i++)); do
		ask "${rfd[$i]}" "${contenders[$i]}"
		[ "$line" = ready ] || { echo "bench: ${contenders[$i]} did not start: $line" >&2; exit 1; }
	done
	for ((r = 0; r < group_rounds; r++)); do
		for ((i = 0; i < n; i++)); do
			local k=$(((i + r) % n))
			c="${contenders[$k]}"
			tell "${wfd[$k]}" "$c" "$command"
			ask "${rfd[$k]}" "$c"
			if [ "$kind" = rate ]; then
				awk -v c="$c" -v r="$((r + 1))" '{ printf "rate\t%s\t%d\t%.1f\n", c, r, $1 / $2 }' <<<"$line" >>"$raw"
			else
				printf '%s\t%s\t%d\t%s\n' "$kind" "$c" "$((r + 1))" "$line" >>"$raw"
			fi
		done
	done
	for ((i = 0; i < n; i++)); do
		tell "${wfd[$i]}" "${contenders[$i]}" quit
		wait "${pids[$i]}" || { echo "bench: ${contenders[$i]} failed while ending" >&2; exit 1; }
		fd=${wfd[$i]}
		exec {fd}>&-
		fd=${rfd[$i]}
		exec {fd}<&-
		# A later group may run the same contender again.
		rm -f "$work/${contenders[$i]}.in" "$work/${contenders[$i]}.out"
	done
	worker_pids=()
}

# Rates of uncontended cycles, alternating slices of BENCH_SECONDS.
rate_group() {
	serve_group rate "$rounds" 0.2 "rate $seconds" "$@"
}

# Acquires and releases many distinct names once each on one of our stores; records the
# first and last rates and what the store left behind.
distinct_run() {
	local store=$1 out
	if ! out="$("$php" -d "extension=$ext" "$bench/distinct.php" "$store" "$distinct")"; then
		echo "bench: distinct run on $store failed" >&2
		exit 1
	fi
	printf 'distinct\t%s\t%s\n' "$store" "$out" >>"$raw"
}

# Measures the RSS growth of one contender over many cycles after a warm-up.
mem_run() {
	local contender=$1 cycles=$2 out
	worker_cmd "$contender" mem "$cycles" 5000
	if ! out="$("${cmd[@]}")"; then
		echo "bench: memory run of $contender failed" >&2
		exit 1
	fi
	awk -v c="$contender" -v n="$cycles" '{ printf "mem\t%s\t%d\t%d\t%d\n", c, n, $1, $2 }' <<<"$out" >>"$raw"
}

# The autorefresh group: the CPU-bound loop beside 100 holds of 1 s not refreshed and refreshed, then
# 1,000 holds of 1 s kept for the group's seconds while a second process checks them.
autorefresh_run() {
	local mode out
	printf 'autorefresh\tcpus\t%s\n' "$autorefresh_cpus" >>"$raw"
	for mode in "cpu $autorefresh_rounds 100 1" "keep 1000 1 $autorefresh_seconds"; do
		# shellcheck disable=SC2086 # the mode's words are its arguments
		if ! out="$(BENCH_REDIS_PORT="$autorefresh_port" "${autorefresh_pin[@]}" "$php" -d "extension=$ext" \
			"$bench/autorefresh.php" $mode)"; then
			echo "bench: autorefresh.php ${mode%% *} failed" >&2
			exit 1
		fi
		sed 's/^/autorefresh\t/' <<<"$out" >>"$raw"
	done
}

for g in "${groups[@]}"; do
	echo "bench: running $g ..." >&2
	case "$g" in
		redis) rate_group redis.ours redis.symfony redis.phpredis redis.ours-new redis.symfony-new ;;
		# --- MemcachedStore ---
		memcached) rate_group memcached.ours memcached.symfony memcached.ours-new memcached.symfony-new ;;
		# --- end MemcachedStore ---
		pgsql | mysql)
			# Session holds against the bare primitive and Symfony's store; the handoff of a blocking wait
			# against the bare primitive's own waiter.
			rate_group "$g.ours" "$g.floor" "$g.symfony" "$g.ours-new" "$g.symfony-new" "$g.ours-table"
			serve_group handoff "$handoff_rounds" 3 "handoff $handoff_slice" "handoff.$g.ours" "handoff.$g.floor" "handoff.$g.symfony"
			;;
		flock) rate_group flock.ours flock.floor flock.symfony flock.ours-new flock.symfony-new ;;
		sem) rate_group sem.ours sem.floor sem.symfony sem.ours-new sem.symfony-new ;;
		read) rate_group redis.ours-read redis.symfony-read flock.ours-read flock.symfony-read ;;
		memory)
			mem_run flock.ours "$mem_flock"
			mem_run redis.ours "$mem_redis"
			;;
		handoff)
			serve_group handoff "$handoff_rounds" 3 "handoff $handoff_slice" \
				handoff.redis.ours handoff.redis.floor handoff.redis.symfony handoff.redis.ours-unfair \
				handoff.flock.ours handoff.flock.floor handoff.flock.symfony \
				handoff.sem.ours handoff.sem.floor handoff.sem.symfony
			;;
		contention)
			serve_group contend "$contention_rounds" 0.2 "contend $contention_slice" \
				contend.redis.ours contend.redis.floor contend.redis.symfony contend.redis.ours-unfair \
				contend.flock.ours contend.flock.floor contend.flock.symfony \
				contend.sem.ours contend.sem.floor contend.sem.symfony
			;;
		topology)
			# TLS, Sentinel, Cluster and replica acknowledgement, beside one plain server in the same rounds.
			if ! "$root/scripts/redis-topology.sh" start "$work/topology" --owner $$ >"$work/topology.log" 2>&1; then
				echo "bench: scripts/redis-topology.sh could not start the servers:" >&2
				tail -n 20 "$work/topology.log" >&2
				exit 1
			fi
			. "$work/topology/env"
			export BENCH_TLS_PORT="$LOCK_TEST_REDIS_TLS_PORT" BENCH_TLS_CA="$LOCK_TEST_TLS_DIR/ca.crt" \
				BENCH_SENTINELS="$LOCK_TEST_SENTINEL_PORTS" BENCH_SENTINEL_MASTER="$LOCK_TEST_SENTINEL_MASTER_NAME" \
				BENCH_PRIMARY_PORT="$LOCK_TEST_SENTINEL_MASTER_PORT" BENCH_CLUSTER_PORTS="$LOCK_TEST_CLUSTER_PORTS"
			rate_group redis.ours tls.ours tls.phpredis primary.ours primary.ours-replicas sentinel.ours cluster.ours cluster.ours-direct
			;;
		frameworks)
			# The frameworks come from the installs of the adapters' test command.
			if ! "$root/adapters/test.sh" symfony laravel yii2 drupal >"$work/adapters.log" 2>&1; then
				echo "bench: adapters/test.sh failed (it installs the frameworks); see its output:" >&2
				tail -n 30 "$work/adapters.log" >&2
				exit 1
			fi
			rate_group redis.sf-ours redis.sf-own redis.lv-ours redis.lv-own
			serve_group handoff "$handoff_rounds" 3 "handoff $handoff_slice" \
				handoff.redis.ours handoff.redis.sf-ours handoff.redis.lv-ours handoff.redis.yii2-ours \
				handoff.redis.drupal-ours handoff.redis.lv-own
			;;
		redlock)
			# One lock over 3 and 5 servers against one server, Symfony's CombinedStore and the bare
			# fan; one of 3 servers 50 ms slower; then the handoff over 3 and 5 servers against one,
			# on loopback and over a 2 ms network.
			rate_group redlock.ours-one redlock.ours-three redlock.ours-five redlock.ours-slow \
				redlock.ours-one-net redlock.ours-three-net redlock.ours-five-net \
				redlock.symfony-one redlock.symfony-three redlock.floor-one redlock.floor-three redlock.floor-five
			serve_group handoff "$handoff_rounds" 3 "handoff $handoff_slice" \
				handoff.redlock.ours-one handoff.redlock.ours-three handoff.redlock.ours-five \
				handoff.redlock.ours-one-net handoff.redlock.ours-three-net
			;;
		autorefresh) autorefresh_run ;;
		distinct)
			distinct_run flock
			distinct_run sem
			distinct_run redis
			;;
	esac
done

mkdir -p "$bench/results"
versions="$("$php" -d "extension=$ext" -r 'printf("php %s, lock %s, phpredis %s", PHP_VERSION, phpversion("lock"), phpversion("redis"));')"
symfony="$(dpkg-query -W -f '${Version}' php-symfony-lock 2>/dev/null || echo unknown)"
server="$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
header="lock bench $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) CPUs
$versions, symfony/lock $symfony, redis-server $server
$module
load average (1, 5, 15 min) $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end
BENCH_SECONDS=$seconds BENCH_ROUNDS=$rounds; handoffs $((handoff_slice * handoff_rounds)) in $handoff_rounds rounds, pause <= $handoff_delay ms; contention $contention_seconds s in $contention_rounds rounds; autorefresh $autorefresh_seconds s, $autorefresh_rounds rounds; took $((SECONDS - started)) s"
"$php" -n "$bench/report.php" "$raw" "$header" | tee "$bench/results/latest.txt"
status=${PIPESTATUS[0]}
# The charts of this run; one of a group that did not run would be of an older run.
rm -f "$bench/results"/latest-*.svg
if "$php" -n "$bench/chart.php" "$raw" "$work/waits" "$header" "$bench/results/latest-" >"$work/charts"; then
	while IFS= read -r svg; do
		echo "bench: chart $svg" >&2
		if [ -n "$charts_dir" ]; then
			cp "$svg" "$charts_dir/bench-${svg##*/latest-}" && echo "bench: chart $charts_dir/bench-${svg##*/latest-}" >&2
		fi
	done <"$work/charts"
else
	echo "bench: bench/chart.php could not draw the charts (see above)" >&2
fi
exit "$status"
