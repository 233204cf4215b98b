#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, checks
# the generated and packaged files, runs the C core's unit tests under ASan/UBSan and
# the phpt suite against a redis-server of its own, and ends with "N passed, N failed".
#
#   scripts/test.sh                 everything (what CI runs), phpt also under valgrind
#   scripts/test.sh --fast          without the valgrind pass
#   scripts/test.sh tests/flock     only these phpt files or folders (no core tests, no checks)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

valgrind=1
only=()
for arg in "$@"; do
	case "$arg" in
		--fast) valgrind=0 ;;
		--valgrind) valgrind=1 ;;
		-*) echo "test: unknown flag $arg" >&2; exit 2 ;;
		*) only+=("$arg") ;;
	esac
done
[ ${#only[@]} -gt 0 ] && valgrind=0

work="$root/.test-run"
rm -rf "$work"
mkdir -p "$work"

passed=0
failed=0
skipped=0
groups=()

# Records one group's counts for the summary.
record() {
	local name=$1 p=$2 f=$3 s=$4
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	groups+=("$name: $p passed, $f failed$([ "$s" -gt 0 ] && echo ", $s skipped")")
}

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

redis_pid=""
cleanup() {
	if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2>/dev/null; then
		kill "$redis_pid" 2>/dev/null
		wait "$redis_pid" 2>/dev/null
	fi
}
trap cleanup EXIT

"$root/scripts/install-deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
if ! "$root/scripts/build.sh" --dev >"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

if [ ${#only[@]} -eq 0 ]; then
	check arginfo "$root/scripts/gen-arginfo.sh" --check
	check package "$root/scripts/check-package.sh"

	# The C core's unit tests: one PASS/FAIL line per case.
	make -s -C tests/core all >"$work/core-build.log" 2>&1 || cat "$work/core-build.log" >&2
	make -s -C tests/core check >"$work/core.log" 2>&1
	core_pass=$(grep -c '^PASS ' "$work/core.log")
	core_fail=$(grep -c '^FAIL ' "$work/core.log")
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$work/core.log" || ! grep -q '^PASS ' "$work/core.log"; then
		core_fail=$((core_fail + 1))
	fi
	[ "$core_fail" -gt 0 ] && { echo "test: core unit tests failed:" >&2; grep -v '^PASS ' "$work/core.log" | tail -n 60 >&2; }
	record core "$core_pass" "$core_fail" 0

	# A short libFuzzer run of every harness of the core's parsers (longer: scripts/fuzz.sh).
	FUZZ_SECONDS="${FUZZ_SECONDS:-10}" "$root/scripts/fuzz.sh" >"$work/fuzz.log" 2>&1
	fuzz_pass=$(grep -c ': [0-9]* runs, ok$' "$work/fuzz.log")
	fuzz_fail=$(grep -c 'FAILED\|build failed\|not found' "$work/fuzz.log")
	[ "$fuzz_pass" -eq 0 ] && fuzz_fail=$((fuzz_fail + 1))
	[ "$fuzz_fail" -gt 0 ] && { echo "test: fuzzing failed:" >&2; tail -n 40 "$work/fuzz.log" >&2; }
	record fuzz "$fuzz_pass" "$fuzz_fail" 0
fi

# A redis-server of our own on a free loopback port, for the phpt suite.
port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
	--dir "$work" --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 1 100); do
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.05
done
export LOCK_TEST_REDIS_PORT=$port
export LOCK_TEST_EXT="$root/modules/lock.so"

# Runs the phpt suite (optionally under valgrind) and records its counts as group $1.
run_phpt() {
	local name=$1
	shift
	local log="$work/$name.log"
	local targets=("${only[@]}")
	[ ${#targets[@]} -eq 0 ] && targets=(tests)
	TEST_PHP_EXECUTABLE="$(command -v php)" NO_INTERACTION=1 REPORT_EXIT_STATUS=1 \
		php "$root/run-tests.php" -q -j"$(nproc)" --show-diff "$@" \
		-d extension="$root/modules/lock.so" "${targets[@]}" >"$log" 2>&1
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
		sed -n '/^FAILED TEST SUMMARY/,/^=====/p;/^LEAKED TEST SUMMARY/,/^=====/p;/^BORKED TEST SUMMARY/,/^=====/p' "$log" >&2
	fi
	record "$name" "${p:-0}" "$f" "${s:-0}"
}

run_phpt phpt
if [ "$valgrind" = 1 ]; then
	# Load tests scale themselves down under valgrind; every test still runs.
	LOCK_TEST_VALGRIND=1 USE_ZEND_ALLOC=0 run_phpt phpt-valgrind -m
fi

for g in "${groups[@]}"; do
	echo "  $g"
done
summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
