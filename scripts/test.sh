#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, checks
# the generated and packaged files, runs the C core's unit tests under ASan/UBSan, a
# short fuzzing run, the phpt suite against a redis-server of its own, the hostile,
# security, fault, network and partition suites, the suites of the TLS, Sentinel and
# Cluster servers it starts (scripts/redis-topology.sh), the phpt suite again on PHP 8.4
# (built with warnings as errors in a Debian 13 root, scripts/php84.sh), the framework
# adapters' PHPUnit suites (adapters/test.sh), a short soak, and the phpt suite again under
# valgrind. It prints each group's counts and ends with "N passed, N failed".
#
#   scripts/test.sh                 everything (what CI runs)
#   scripts/test.sh --fast          without the valgrind pass
#   LOCK_SOAK_SECONDS=1800 scripts/test.sh   with the long soak (scripts/soak.sh --long alone)
#   scripts/test.sh tests/flock     only these phpt files or folders (no core tests, no checks)
#   scripts/test.sh --valgrind tests/flock   the same, then again under valgrind
#   scripts/test.sh --php84 tests/flock      the same, then again on PHP 8.4 (scripts/php84.sh)
#   scripts/test.sh --key-audit ... also audits, through MONITOR, that every script run on
#                                   the phpt suite's redis-server declares each key it
#                                   touches (tests/tools/key_audit.c); the server is slower
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

valgrind=1
key_audit=0
php84=0
only=()
for arg in "$@"; do
	case "$arg" in
		--fast) valgrind=0 ;;
		--valgrind) valgrind=2 ;;
		--key-audit) key_audit=1 ;;
		--php84) php84=1 ;;
		-*) echo "test: unknown flag $arg" >&2; exit 2 ;;
		*) only+=("$arg") ;;
	esac
done
# Given paths, the valgrind pass runs only when asked for (--valgrind), over those paths.
[ ${#only[@]} -gt 0 ] && [ "$valgrind" = 1 ] && valgrind=0
# Without paths (what CI runs), the PHP 8.4 pass always runs.
[ ${#only[@]} -eq 0 ] && php84=1

work="$root/.test-run"
# A PostgreSQL an earlier run left (killed before its clean-up) goes before its directory does.
"$root/scripts/pg-test-server.sh" stop "$work/pgsql" 2>/dev/null
"$root/scripts/my-test-server.sh" stop "$work/mysql" 2>/dev/null # MySQL store
rm -rf "$work"
mkdir -p "$work"

passed=0
failed=0
skipped=0
groups=()

# Records one group's counts for the summary, with the minute of the run at which it ended.
record() {
	local name=$1 p=$2 f=$3 s=$4
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	groups+=("$name: $p passed, $f failed$([ "$s" -gt 0 ] && echo ", $s skipped") $(stamp)")
}
stamp() { printf '[%d:%02d]' $((SECONDS / 60)) $((SECONDS % 60)); }

# Runs one named check; it passes when the command exits 0.
check() {
	local name=$1
	shift
	if "$@" >"$work/$name.log" 2>&1; then
		record "$name" 1 0 0
	else
		echo "test: $name failed:" >&2
		tail -n 40 "$work/$name.log" >&2
		record "$name" 0 1 0
	fi
}

redis_pids=()
php84_pid=""
adapters_pid=""
cleanup() {
	# A PHP 8.4 root or build, or the adapters' suites, still going (the command ends early):
	# its process group goes.
	local bg
	for bg in "$php84_pid" "$adapters_pid"; do
		if [ -n "$bg" ] && kill -0 "$bg" 2>/dev/null; then
			kill -- -"$bg" 2>/dev/null
			wait "$bg" 2>/dev/null
		fi
	done
	local rp
	for rp in ${redis_pids[@]+"${redis_pids[@]}"}; do
		if kill -0 "$rp" 2>/dev/null; then
			kill "$rp" 2>/dev/null
			wait "$rp" 2>/dev/null
		fi
	done
	"$root/scripts/redis-topology.sh" stop "$work/topology"
	"$root/scripts/pg-test-server.sh" stop "$work/pgsql" 2>/dev/null
	"$root/scripts/my-test-server.sh" stop "$work/mysql" 2>/dev/null # MySQL store
	# --- MemcachedStore ---
	local mc
	for mc in ${memcached_pids[@]+"${memcached_pids[@]}"}; do
		kill "$mc" 2>/dev/null && wait "$mc" 2>/dev/null
	done
	# --- end MemcachedStore ---
}
trap cleanup EXIT

"$root/scripts/install-deps.sh" || { echo "0 passed, 1 failed"; exit 1; }

# SemaphoreStore's sets (key prefix 0xa7) owned by this user, one key a line; compared at the end.
sem_sets() { ipcs -s 2>/dev/null | awk -v u="$(id -un)" '$3 == u && $5 == 6 && tolower($1) ~ /^0xa7/ { print $1 }' | sort; }
sem_before=$(sem_sets)
# The PHP 8.4 root and build (scripts/php84.sh) go on beside the groups before theirs, in a
# process group of their own: the first run on a machine makes the root then (about 9
# minutes, mostly downloading); later runs rebuild what changed, in seconds.
if [ "$php84" = 1 ]; then
	setsid "$root/scripts/php84.sh" build >"$work/php84-build.log" 2>&1 &
	php84_pid=$!
fi
if ! "$root/scripts/build.sh" --dev >"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# Redis servers of our own on free loopback ports for the phpt suite: the first for every
# Redis test, the other two with it for the combined store (LOCK_TEST_REDIS_PORT2, _PORT3).
redis_pids=()
redis_ports=()
for n in 1 2 3; do
	port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
	log="$work/redis.log"
	[ "$n" -gt 1 ] && log="$work/redis$n.log"
	mkdir -p "$work/redis$n"
	redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
		--dir "$work/redis$n" --logfile "$log" &
	redis_pids+=($!)
	redis_ports+=("$port")
	for _ in $(seq 1 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.05
	done
done
port=${redis_ports[0]}
export LOCK_TEST_REDIS_PORT=$port LOCK_TEST_REDIS_PORT2=${redis_ports[1]} LOCK_TEST_REDIS_PORT3=${redis_ports[2]}
audit_pid=""
if [ "$key_audit" = 1 ]; then
	make -s -j"$(nproc)" -C tests/core tools >"$work/key-audit-build.log" 2>&1 || { cat "$work/key-audit-build.log" >&2; exit 1; }
	tests/core/build/tools/key_audit 127.0.0.1 "$port" "$work/key-audit.log" &
	audit_pid=$!
	for _ in $(seq 1 100); do
		grep -q '^# key_audit: watching' "$work/key-audit.log" 2>/dev/null && break
		sleep 0.05
	done
fi

# --- MemcachedStore: two memcached servers of our own on free loopback ports (the second for the host-list tests) ---
memcached_pids=()
# Starts a memcached on a free port and prints the port; memcached refuses to run as root without -u.
start_memcached() {
	local mc_port user=()
	mc_port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
	[ "$(id -u)" = 0 ] && user=(-u nobody)
	memcached "${user[@]}" -l 127.0.0.1 -p "$mc_port" -U 0 -m 64 -c 4096 >>"$work/memcached.log" 2>&1 &
	memcached_pids+=($!)
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$mc_port") 2>/dev/null && break
		sleep 0.05
	done
	echo "$mc_port"
}
if command -v memcached >/dev/null 2>&1; then
	start_memcached >"$work/memcached.port1"
	start_memcached >"$work/memcached.port2"
	export LOCK_TEST_MEMCACHED_PORT LOCK_TEST_MEMCACHED_PORT2
	LOCK_TEST_MEMCACHED_PORT=$(cat "$work/memcached.port1")
	LOCK_TEST_MEMCACHED_PORT2=$(cat "$work/memcached.port2")
fi
# Under valgrind (run-tests.php -m traces children) the servers, clients and shell tools the
# tests start run bare, and so do PHP children started as php-unchecked (a link to the same
# PHP): tests/inc/common.inc starts them so unless the test checks its children
# (lock_test_check_children(): a child's request end, fatal error or shutdown is its subject).
mkdir -p "$work/bin"
ln -sf "$(readlink -f "$(command -v php)")" "$work/bin/php-unchecked"
export LOCK_TEST_PHP_UNCHECKED="$work/bin/php-unchecked"
export VALGRIND_OPTS="${VALGRIND_OPTS:-} --trace-children-skip=*memcached,*redis-cli,*redis-server,*psql,*pg_ctl,*postgres,*mariadb,*mysql,*openssl,*setpriv,*pgbouncer,*runuser,*initdb,*/php-unchecked,*.sh,*/bash,*/sh,*/dash,*/sed,*/grep,*/awk,*/mawk,*/cat,*/sort,*/timeout,*/sleep,*/env"
# --- end MemcachedStore ---
export LOCK_TEST_EXT="$root/modules/lock.so"

# The TLS, Sentinel and Cluster servers (scripts/redis-topology.sh), with their ports and
# certificates in LOCK_TEST_* variables; stopped at exit, or by their watcher should this
# command be killed. Tests that need them skip when the variables are missing.
topology_start=$SECONDS
if "$root/scripts/redis-topology.sh" start "$work/topology" --owner $$ >"$work/topology.log" 2>&1; then
	# shellcheck source=/dev/null
	. "$work/topology/env"
	record "redis topology (TLS, Sentinel, Cluster): ready in $((SECONDS - topology_start)) s" 1 0 0
else
	echo "test: the Redis topology did not start:" >&2
	tail -n 20 "$work/topology.log" >&2
	record "redis topology (TLS, Sentinel, Cluster)" 0 1 0
fi
# A PostgreSQL of our own (initdb in $work/pgsql, a free loopback port, run as nobody when
# we are root), for the PostgresStore tests; stopped by cleanup.
if pg_dsn=$("$root/scripts/pg-test-server.sh" start "$work/pgsql" 2>"$work/pgsql-start.log"); then
	export LOCK_TEST_PGSQL_DSN=$pg_dsn
	export LOCK_TEST_PGSQL_SOCKET_DIR="$work/pgsql/sock"
else
	echo "test: cannot start PostgreSQL for the PostgresStore tests:" >&2
	tail -n 20 "$work/pgsql-start.log" >&2
	record "PostgreSQL test server" 0 1 0
fi
# --- MySQL store ---
# A MariaDB of our own (mariadb-install-db in $work/mysql, a free loopback port and a socket,
# run as nobody when we are root), for the MysqlStore tests; stopped by cleanup.
if my_dsn=$("$root/scripts/my-test-server.sh" start "$work/mysql" 2>"$work/mysql-start.log"); then
	export LOCK_TEST_MYSQL_DSN=$my_dsn
	export LOCK_TEST_MYSQL_SOCKET="$work/mysql/sock"
else
	echo "test: cannot start MariaDB for the MysqlStore tests:" >&2
	tail -n 20 "$work/mysql-start.log" >&2
	record "MariaDB test server" 0 1 0
fi
# --- end MySQL store ---

# The checks, the C core's tests and the fuzzing run once the servers are up: the core's
# database and memcached cases use them (LOCK_TEST_PGSQL_DSN, _MYSQL_DSN, _MEMCACHED_PORT).
if [ ${#only[@]} -eq 0 ]; then
	check arginfo "$root/scripts/gen-arginfo.sh" --check
	check lua "$root/scripts/gen-lua.sh" --check
	check package "$root/scripts/check-package.sh"
	# The database and memcached stores are optional: a build without each one's client
	# library still compiles and says so.
	# The three builds go side by side: their configure steps mostly wait on one CPU each.
	without_pids=()
	for store in pgsql:libpq mysql:libmariadb memcached:libmemcached; do
		(
			"$root/scripts/check-without-store.sh" "${store%%:*}" >"$work/build-without-${store#*:}.log" 2>&1
			echo $? >"$work/build-without-${store#*:}.status"
		) &
		without_pids+=($!)
	done
	wait "${without_pids[@]}"
	for lib in libpq libmariadb libmemcached; do
		if [ "$(cat "$work/build-without-$lib.status" 2>/dev/null)" = 0 ]; then
			record "build-without-$lib" 1 0 0
		else
			echo "test: build-without-$lib failed:" >&2
			tail -n 40 "$work/build-without-$lib.log" >&2
			record "build-without-$lib" 0 1 0
		fi
	done

	# The C core's unit tests under ASan and UBSan: one PASS/FAIL line per case. test_security's
	# cases count towards the security group.
	make -s -j"$(nproc)" -C tests/core all >"$work/core-build.log" 2>&1 || cat "$work/core-build.log" >&2
	core_security_pass=0
	core_security_fail=0
	: >"$work/core.log"
	# Each test binary's run; the Sentinel and Cluster one, which mostly waits for its servers'
	# failovers, goes on beside the others.
	core_run() {
		(cd tests/core && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
			"./build/$1") >"$work/core-$1.log" 2>&1
		echo $? >"$work/core-$1.status"
	}
	topo_pid=""
	if [ -x tests/core/build/test_redis_topo ]; then
		core_run test_redis_topo &
		topo_pid=$!
	fi
	for t in tests/core/build/test_*; do
		[ "$(basename "$t")" = test_redis_topo ] || core_run "$(basename "$t")"
	done
	[ -n "$topo_pid" ] && wait "$topo_pid"
	for t in tests/core/build/test_*; do
		log="$work/core-$(basename "$t").log"
		status=$(cat "$work/core-$(basename "$t").status" 2>/dev/null || echo 1)
		p=$(grep -c '^PASS ' "$log")
		f=$(grep -c '^FAIL ' "$log")
		if [ "$status" -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" || [ "$p" -eq 0 ]; then
			f=$((f + 1))
			echo "test: $(basename "$t") failed:" >&2
			grep -v '^PASS ' "$log" | tail -n 60 >&2
		fi
		if [ "$(basename "$t")" = test_security ]; then
			core_security_pass=$p
			core_security_fail=$f
		else
			core_pass=$(( ${core_pass:-0} + p ))
			core_fail=$(( ${core_fail:-0} + f ))
		fi
		cat "$log" >>"$work/core.log"
	done
	[ -n "$(ls tests/core/build/test_* 2>/dev/null)" ] || core_fail=1
	record "core (ASan+UBSan)" "${core_pass:-0}" "${core_fail:-0}" 0

	# The auto-refresh thread's test again under ThreadSanitizer, the core built for it.
	tsan_fail=0
	if make -s -j"$(nproc)" -C tests/core tsan >"$work/core-tsan-build.log" 2>&1; then
		(cd tests/core && TSAN_OPTIONS=halt_on_error=0:exitcode=66 ./build/tsan/test_auto) >"$work/core-tsan.log" 2>&1 || tsan_fail=1
	else
		cp "$work/core-tsan-build.log" "$work/core-tsan.log"
		tsan_fail=1
	fi
	p=$(grep -c '^PASS ' "$work/core-tsan.log")
	f=$(grep -c '^FAIL ' "$work/core-tsan.log")
	if [ "$tsan_fail" -ne 0 ] || grep -q 'WARNING: ThreadSanitizer' "$work/core-tsan.log" || [ "$p" -eq 0 ]; then
		f=$((f + 1))
		echo "test: test_auto under ThreadSanitizer failed:" >&2
		grep -v '^PASS ' "$work/core-tsan.log" | tail -n 60 >&2
	fi
	record "core (ThreadSanitizer: test_auto)" "$p" "$f" 0



	# A short libFuzzer run of every harness of the core's parsers (longer: scripts/fuzz.sh).
	FUZZ_SECONDS="${FUZZ_SECONDS:-10}" "$root/scripts/fuzz.sh" >"$work/fuzz.log" 2>&1
	fuzz_pass=$(grep -c ': [0-9]* runs, ok$' "$work/fuzz.log")
	fuzz_fail=$(grep -c 'FAILED\|build failed\|not found' "$work/fuzz.log")
	[ "$fuzz_pass" -eq 0 ] && fuzz_fail=$((fuzz_fail + 1))
	[ "$fuzz_fail" -gt 0 ] && { echo "test: fuzzing failed:" >&2; tail -n 40 "$work/fuzz.log" >&2; }
	record fuzz "$fuzz_pass" "$fuzz_fail" 0
fi

# Copies run-tests.php ($1) to $2, changed twice; fails when either change did not apply.
# - It retries a failed test that calls sleep() or hrtime() and counts a pass on the second
#   attempt as a warning, with the first attempt's output gone. A test that passes only on
#   retry has failed: the copy never retries, so the first failure is the one kept.
# - It hands a worker up to 32 tests at a time, in file order, so that one worker could be
#   left with a folder of slow tests while the others had nothing to do: the copy hands them
#   out one or two at a time (as it does under valgrind).
patch_run_tests() {
	sed -e '/^function error_may_be_retried(/,/^}/{s/^{$/{ return false; \/\/ lock: never retried/}' \
		-e 's/^\( *\$maxBatchSize = \)\$valgrind ? 1 : (\$shuffle ? 4 : 32);$/\11; \/\/ lock: one at a time/' \
		"$1" >"$2"
	if ! grep -q '^{ return false; // lock: never retried$' "$2"; then
		echo "test: cannot turn off run-tests.php's retries in $2 (its error_may_be_retried() changed)" >&2
		return 1
	fi
	if ! grep -q '^ *$maxBatchSize = 1; // lock: one at a time$' "$2"; then
		echo "test: cannot make run-tests.php hand out one test at a time in $2 (its \$maxBatchSize changed)" >&2
		return 1
	fi
}
if ! patch_run_tests "$root/run-tests.php" "$work/run-tests.php"; then
	echo "0 passed, 1 failed"
	exit 1
fi

# Waits for the adapters' suites (started in the background, adapters_pid) and records their counts.
record_adapters() {
	local line p f s status
	wait "$adapters_pid"
	status=$?
	adapters_pid=""
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/adapters.log" | tail -n 1)
	p=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$line")
	f=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p' <<<"$line")
	s=$(sed -n 's/.*, \([0-9]*\) skipped.*/\1/p' <<<"$line")
	if [ -z "$line" ] || { [ "$status" -ne 0 ] && [ "${f:-0}" -eq 0 ]; }; then
		f=$(( ${f:-0} + 1 ))
	fi
	[ "${f:-0}" -gt 0 ] && { echo "test: adapters failed:" >&2; tail -n 60 "$work/adapters.log" >&2; }
	record adapters "${p:-0}" "${f:-0}" "${s:-0}"
}

# The PHP 8.4 pass: waits for the extension's build in the Debian 13 root (made on the
# first run, then reused; scripts/php84.sh) with warnings as errors, and makes that PHP's
# run-tests.php never retry. The root's copy of the work tree sits at the work tree's path
# with .test-run mounted in it, so the phpt run there reaches this command's servers by
# the same LOCK_TEST_*.
php84_ready=0
php84_prepare() {
	local start=$SECONDS status
	wait "$php84_pid"
	status=$?
	php84_pid=""
	if [ "$status" -ne 0 ]; then
		echo "test: the PHP 8.4 build failed ($work/php84-build.log):" >&2
		tail -n 40 "$work/php84-build.log" >&2
		record "build (PHP 8.4, Debian 13)" 0 1 0
		return
	fi
	local php84_root
	php84_root=$("$root/scripts/php84.sh" root 2>>"$work/php84-build.log")
	if ! patch_run_tests "$php84_root$root/run-tests.php" "$work/run-tests-php84.php"; then
		record "build (PHP 8.4, Debian 13)" 0 1 0
		return
	fi
	record "build (PHP 8.4, Debian 13, --enable-lock-dev): $(sed -n 's/^php84: root ready in \([0-9]*\) s$/root made in \1 s, /p' "$work/php84-build.log")waited $((SECONDS - start)) s" 1 0 0
	php84_ready=1
}

# Runs phpt files or folders and records their counts as group $1: run_phpt NAME [-m] [--jobs N] [--php84] TARGET...
run_phpt() {
	local name=$1
	shift
	local log="$work/$(echo "$name" | tr -c 'a-z0-9\n-' '_').log"
	local opts=() jobs runner=() run_tests="$work/run-tests.php"
	# Most tests wait (on servers, timers, their children) more than they compute: one worker
	# more than there are CPUs. Under valgrind they compute: one worker a CPU.
	jobs=$(( $(nproc) + 1 ))
	while [ $# -gt 0 ]; do
		case "$1" in
			# Under valgrind the log names each test slower than 20 s (SLOW TEST SUMMARY).
			-m) opts+=(-m --show-slow 20000); jobs="$(nproc)"; shift ;;
			--jobs) jobs=$2; shift 2 ;;
			# In the Debian 13 root, on its PHP 8.4: the same paths name the root's copy.
			--php84) runner=("$root/scripts/php84.sh" run); run_tests="$work/run-tests-php84.php"; shift ;;
			*) break ;;
		esac
	done
	TEST_PHP_EXECUTABLE="$(command -v php)" NO_INTERACTION=1 REPORT_EXIT_STATUS=1 \
		${runner[@]+"${runner[@]}"} php "$run_tests" -q -j"$jobs" --show-diff "${opts[@]}" \
		-d extension="$root/modules/lock.so" "$@" >"$log" 2>&1
	local p f s
	p=$(sed -n 's/^Tests passed *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	f=$(sed -n 's/^Tests failed *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	s=$(sed -n 's/^Tests skipped *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	local leaked borked warned
	leaked=$(sed -n 's/^Tests leaked *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	borked=$(sed -n 's/^Tests borked *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	warned=$(sed -n 's/^Tests warned *: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
	f=$(( ${f:-0} + ${leaked:-0} + ${borked:-0} + ${warned:-0} ))
	if [ -z "$p" ]; then
		echo "test: $name did not run:" >&2
		tail -n 40 "$log" >&2
		f=$((f + 1))
	elif [ "$f" -gt 0 ]; then
		# What each failed test printed against what it expected (run-tests.php --show-diff).
		sed -n '/^========DIFF========$/,/^========DONE========$/p' "$log" | head -n 200 >&2
		sed -n '/^FAILED TEST SUMMARY/,/^=====/p;/^LEAKED TEST SUMMARY/,/^=====/p;/^BORKED TEST SUMMARY/,/^=====/p' "$log" >&2
	fi
	group_p=${p:-0}
	group_f=$f
	group_s=${s:-0}
	record "$name" "${p:-0}" "$f" "${s:-0}"
}

# Whether a phpt path belongs to the suites that fail the shared Sentinel group or Cluster over.
is_serial() { [[ $1 =~ ^(\./)?tests/(topology|sentinel|cluster|redis_sentinel|redis_cluster)(/|$) ]]; }

if [ ${#only[@]} -gt 0 ]; then
	parallel=()
	serial=()
	for arg in "${only[@]}"; do
		if is_serial "$arg"; then serial+=("$arg"); else parallel+=("$arg"); fi
	done
	[ ${#parallel[@]} -gt 0 ] && run_phpt phpt "${parallel[@]}"
	[ ${#serial[@]} -gt 0 ] && run_phpt topology --jobs 1 "${serial[@]}"
	if [ "$valgrind" = 2 ] && [ ${#parallel[@]} -gt 0 ]; then
		LOCK_TEST_VALGRIND=1 USE_ZEND_ALLOC=0 VALGRIND_OPTS="$VALGRIND_OPTS --suppressions=$root/tests/valgrind.supp" run_phpt phpt-valgrind -m "${parallel[@]}"
	fi
	if [ "$php84" = 1 ]; then
		php84_prepare
		[ "$php84_ready" = 1 ] && [ ${#parallel[@]} -gt 0 ] && run_phpt "phpt (PHP 8.4)" --php84 "${parallel[@]}"
		[ "$php84_ready" = 1 ] && [ ${#serial[@]} -gt 0 ] && run_phpt "topology (PHP 8.4)" --php84 --jobs 1 "${serial[@]}"
	fi
else
	# The functional suite is every folder of tests/ that is not a group of its own below.
	special=(hostile security faults network partition topology sentinel cluster redis_sentinel redis_cluster)
	functional=()
	for d in tests/*/; do
		d=${d%/}
		name=$(basename "$d")
		[[ " ${special[*]} " == *" $name "* ]] && continue
		compgen -G "$d/*.phpt" >/dev/null && functional+=("$d")
	done
	run_phpt phpt "${functional[@]}"
	run_phpt hostile tests/hostile
	# The security group: the core's test_security and the phpt of tests/security.
	security_before=$((${#groups[@]}))
	run_phpt security tests/security
	if [ "${#groups[@]}" -gt "$security_before" ]; then
		passed=$((passed + core_security_pass))
		failed=$((failed + core_security_fail))
		last=$(( ${#groups[@]} - 1 ))
		groups[$last]="security (core and phpt): $((group_p + core_security_pass)) passed, $((group_f + core_security_fail)) failed$([ "$group_s" -gt 0 ] && echo ", $group_s skipped") $(stamp)"
	fi
	# The phpt, hostile and security suites again, on PHP 8.4 in the Debian 13 root.
	php84_prepare
	[ "$php84_ready" = 1 ] && run_phpt "phpt (PHP 8.4)" --php84 "${functional[@]}" tests/hostile tests/security
	# The fault suites measure calls against their timeouts: one test at a time.
	[ -d tests/faults ] && run_phpt faults --jobs 1 tests/faults
	[ -d tests/network ] && run_phpt network --jobs 1 tests/network
	if [ -d tests/partition ]; then
		run_phpt partition --jobs 1 tests/partition
		if [ "$group_s" -gt 0 ]; then
			# A partition needs network namespaces; the summary says why they were not there.
			reason=$(sed -n 's/^SKIP.* reason: //p' "$work/partition.log" | head -n 1)
			groups[$(( ${#groups[@]} - 1 ))]+=" (skipped: ${reason:-see $work/partition.log})"
		fi
	fi
	# Tests that fail the shared Sentinel group or Cluster over (and restore it) run one at a
	# time, and never beside the tests that check them.
	serial=()
	for d in tests/topology tests/sentinel tests/cluster tests/redis_sentinel tests/redis_cluster; do
		[ -d "$d" ] && serial+=("$d")
	done
	[ ${#serial[@]} -gt 0 ] && run_phpt "topology (${serial[*]#tests/})" --jobs 1 "${serial[@]}"
	if [ -x scripts/soak.sh ]; then
		soak_seconds="${LOCK_SOAK_SECONDS:-60}"
		LOCK_TEST_EXT="$root/modules/lock.so" scripts/soak.sh --seconds "$soak_seconds" >"$work/soak.log" 2>&1
		soak_status=$?
		p=$(grep -c '^PASS ' "$work/soak.log")
		f=$(grep -c '^FAIL ' "$work/soak.log")
		if [ "$soak_status" -ne 0 ] || [ "$p" -eq 0 ]; then
			[ "$f" -eq 0 ] && f=1
			echo "test: soak failed:" >&2
			tail -n 40 "$work/soak.log" >&2
		fi
		record "soak (${soak_seconds} s)" "$p" "$f" 0
	fi
	# The framework adapters' PHPUnit suites against the real framework packages (on our
	# redis-server; adapters/test.sh). They mostly wait (on children, servers, Composer's
	# downloads: a third of a CPU), so they run beside the valgrind pass, which computes.
	if [ -x adapters/test.sh ]; then
		setsid adapters/test.sh >"$work/adapters.log" 2>&1 &
		adapters_pid=$!
		[ "$valgrind" = 0 ] && record_adapters
	fi
	if [ "$valgrind" != 0 ]; then
		# Load tests scale themselves down under valgrind; every test still runs.
		# tests/valgrind.supp: what valgrind reports of glibc's loader, never of our code.
		LOCK_TEST_VALGRIND=1 USE_ZEND_ALLOC=0 VALGRIND_OPTS="$VALGRIND_OPTS --suppressions=$root/tests/valgrind.supp" run_phpt "phpt-valgrind (phpt, hostile, security)" -m \
			"${functional[@]}" tests/hostile tests/security
	fi
	[ -n "$adapters_pid" ] && record_adapters
fi

# The run leaves no semaphore set behind: a set that is new since the start and still there
# after 5 s (a concurrent user's sets come and go) is a leak of the tests or of the store.
sem_left=""
for _ in $(seq 1 50); do
	sem_left=$(comm -13 <(echo "$sem_before") <(sem_sets) | grep . | tr '\n' ' ')
	[ -z "$sem_left" ] && break
	sleep 0.1
done
if [ -n "$sem_left" ]; then
	echo "test: semaphore sets left behind (ipcs -s): $sem_left" >&2
	record "semaphore sets left behind" 0 1 0
else
	record "semaphore sets left behind: none" 1 0 0
fi

if [ -n "$audit_pid" ]; then
	kill -TERM "$audit_pid" 2>/dev/null
	wait "$audit_pid" 2>/dev/null
	if grep -q '^# key_audit: watching' "$work/key-audit.log" && ! grep -v '^#' "$work/key-audit.log" | grep -q .; then
		record "key audit: every key declared" 1 0 0
	else
		echo "test: key audit ($work/key-audit.log):" >&2
		cat "$work/key-audit.log" >&2
		record "key audit" 0 1 0
	fi
fi

for g in "${groups[@]}"; do
	echo "  $g"
done
summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
