#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the C core (tests/fuzz/fuzz_*.c) with clang-14 under
# AddressSanitizer and UndefinedBehaviorSanitizer and runs each for a bounded time,
# starting from its seed corpus in tests/fuzz/corpus/<harness>/. Prints
# "fuzz: <harness>: N runs, ok" per harness; exits non-zero on any crash, leak,
# broken property or timeout, and then keeps the failing input and the log.
#
#   scripts/fuzz.sh                 every harness, 20 s each
#   scripts/fuzz.sh dsn owner       only these harnesses
#   FUZZ_SECONDS=300 scripts/fuzz.sh   longer runs
#   FUZZ_RUNS=100000 scripts/fuzz.sh   at most this many inputs per harness
#   FUZZ_JOBS=4                     parallel fuzzing processes per harness (default 1)
#   scripts/fuzz.sh --repro dsn FILE   runs one input (a crash artifact) through a harness
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=${FUZZ_SECONDS:-20}
runs=${FUZZ_RUNS:--1}
jobs=${FUZZ_JOBS:-1}
cc=${FUZZ_CC:-clang-14}
for n in "$seconds" "$jobs"; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ]; then
		echo "fuzz: FUZZ_SECONDS and FUZZ_JOBS must be whole numbers of 1 or more" >&2
		exit 2
	fi
done
if ! [[ $runs =~ ^-?[0-9]+$ ]]; then
	echo "fuzz: FUZZ_RUNS must be a whole number" >&2
	exit 2
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: $cc not found; scripts/install-deps.sh installs clang-14 and libclang-rt-14-dev" >&2
	exit 2
fi

repro=""
if [ "${1:-}" = "--repro" ]; then
	if [ $# -ne 3 ]; then
		echo "usage: scripts/fuzz.sh --repro HARNESS FILE" >&2
		exit 2
	fi
	repro=$3
	set -- "$2"
fi

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		h=${f#tests/fuzz/fuzz_}
		harnesses+=("${h%.c}")
	done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lock-fuzz.XXXXXX")
keep=0
# The build and the inputs found go away, unless a failure needs them for its reproduction.
cleanup() {
	if [ "$keep" = 0 ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# Every core file but those a harness compiles in itself (their names, one a line); hiredis and OpenSSL
# for the Redis store, libpq for the PostgreSQL store (left out when libpq is missing, as ./configure does).
core_sources() {
	local skip=$1 f
	for f in ext/core/*.c; do
		[ "$(basename "$f")" = lkc_memcached.c ] && [ "$memcached_core" = 0 ] && continue
		grep -qxF "$(basename "$f")" <<<"$skip" && continue
		case "$(basename "$f")" in lkc_pgsql.c | lkc_pgsql_table.c) pkg-config --exists libpq || continue ;; esac
		[ "$(basename "$f")" = lkc_mysql.c ] && ! pkg-config --exists libmariadb && continue
		[ "$(basename "$f")" = lkc_mysql_table.c ] && ! pkg-config --exists libmariadb && continue
		printf '%s\n' "$f"
	done
}

cflags=(-std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -Wall -Wextra -Werror -D_GNU_SOURCE)
# OpenSSL for the Redis store's TLS (lkc_redis_conn.c).
read -r -a hiredis_cflags <<<"$(pkg-config --cflags hiredis openssl)"
read -r -a hiredis_libs <<<"$(pkg-config --libs hiredis openssl)"
if pkg-config --exists libpq; then
	read -r -a libpq_cflags <<<"$(pkg-config --cflags libpq)"
	read -r -a libpq_libs <<<"$(pkg-config --libs libpq)"
	hiredis_cflags+=("${libpq_cflags[@]}")
	hiredis_libs+=("${libpq_libs[@]}")
fi
# libmariadb for the MySQL store (left out when it is missing, as ./configure does).
if pkg-config --exists libmariadb; then
	read -r -a mariadb_cflags <<<"$(pkg-config --cflags libmariadb)"
	read -r -a mariadb_libs <<<"$(pkg-config --libs libmariadb)"
	hiredis_cflags+=("${mariadb_cflags[@]}" -DHAVE_LOCK_MYSQL)
	hiredis_libs+=("${mariadb_libs[@]}")
fi
# --- MemcachedStore: its core file links libmemcached, or stays out when there is none ---
memcached_core=1
if pkg-config --exists libmemcached; then
	read -r -a memcached_flags <<<"$(pkg-config --cflags --libs libmemcached)"
	hiredis_libs+=("${memcached_flags[@]}")
else
	memcached_core=0
fi
# --- end MemcachedStore ---

# The core is compiled once, each file to an object (side by side, as many at once as there
# are CPUs), instrumented for the fuzzer without its main; each harness then links them,
# but for the core files it includes itself to reach their static functions.
objcflags=()
for f in "${cflags[@]}"; do
	objcflags+=("${f/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}")
done
mkdir -p "$work/obj"
compile_core() {
	"$cc" "${objcflags[@]}" "${hiredis_cflags[@]}" -c -o "$work/obj/$(basename "$1" .c).o" "$1" \
		>"$work/obj/$(basename "$1" .c).log" 2>&1 || { cat "$work/obj/$(basename "$1" .c).log" >&2; return 1; }
}
core_built=1
for f in $(core_sources ""); do
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
		wait -n || core_built=0
	done
	compile_core "$f" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do
	wait -n || core_built=0
done

# Builds harness $1 into $work/fuzz_$1; the log is $work/$1.build.log.
build() {
	local h=$1 src="tests/fuzz/fuzz_$1.c" skip="" objects=() f
	[ "$core_built" = 1 ] || { echo "the core did not compile" >"$work/$h.build.log"; return 1; }
	# A harness that includes core files to reach their static functions must not link them again.
	skip=$(sed -n 's#^\#include "\.\./\.\./ext/core/\(lkc_[a-z0-9_]*\.c\)"#\1#p' "$src")
	for f in $(core_sources "$skip"); do
		objects+=("$work/obj/$(basename "$f" .c).o")
	done
	"$cc" "${cflags[@]}" "${hiredis_cflags[@]}" -o "$work/fuzz_$h" "$src" "${objects[@]}" \
		"${hiredis_libs[@]}" >"$work/$h.build.log" 2>&1
}

# The harnesses link side by side too.
for h in "${harnesses[@]}"; do
	[ -f "tests/fuzz/fuzz_$h.c" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
		wait -n
	done
	(build "$h"; echo $? >"$work/$h.build.status") &
done
wait

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Fuzzes harness $1 for the run's time; says how it went on stdout (ok) or stderr (failed),
# and exits 1 when it found something (then its work files stay: $work/$1.keep).
fuzz_one() {
	local h=$1 seeds found artifacts log args rc count crash
	seeds="$root/tests/fuzz/corpus/$h"
	found="$work/corpus-$h"
	artifacts="$work/artifacts-$h/"
	mkdir -p "$found" "$artifacts"
	log="$work/$h.log"
	# New inputs go to the first directory, a scratch copy: the committed seeds stay as they are.
	args=(-max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=4096 -max_len=8192
		-print_final_stats=1 -artifact_prefix="$artifacts" "$found")
	[ -d "$seeds" ] && args+=("$seeds")
	if [ "$jobs" -gt 1 ]; then
		args=(-jobs="$jobs" -workers="$jobs" "${args[@]}")
	fi
	# A directory of its own: with -jobs, libFuzzer writes its workers' logs (fuzz-N.log) where it runs.
	mkdir -p "$work/run-$h"
	(cd "$work/run-$h" && "$work/fuzz_$h" "${args[@]}") >"$log" 2>&1
	rc=$?
	count=$(grep -h 'stat::number_of_executed_units:' "$log" "$work/run-$h"/fuzz-*.log 2>/dev/null | awk '{s += $2} END {print s + 0}')
	crash=$(ls -A "$artifacts" 2>/dev/null | head -n1)
	if [ "$rc" -ne 0 ] || [ -n "$crash" ]; then
		touch "$work/$h.keep"
		echo "fuzz: $h: FAILED after $count runs (exit $rc)" >&2
		grep -hE 'ERROR: |runtime error:|property failed|SUMMARY:|written back' "$log" "$work/run-$h"/fuzz-*.log 2>/dev/null | head -n 20 >&2
		if [ -n "$crash" ]; then
			echo "fuzz: $h: input kept as $artifacts$crash; reproduce with: scripts/fuzz.sh --repro $h $artifacts$crash" >&2
		fi
		echo "fuzz: $h: full log: $log" >&2
		return 1
	fi
	echo "fuzz: $h: $count runs, ok"
}

failed=0
ready=()
for h in "${harnesses[@]}"; do
	if [ ! -f "tests/fuzz/fuzz_$h.c" ]; then
		echo "fuzz: $h: no such harness (tests/fuzz/fuzz_$h.c)" >&2
		failed=1
		continue
	fi
	if [ "$(cat "$work/$h.build.status" 2>/dev/null)" != 0 ]; then
		echo "fuzz: $h: build failed:" >&2
		cat "$work/$h.build.log" >&2
		failed=1
		continue
	fi
	if [ -n "$repro" ]; then
		"$work/fuzz_$h" "$repro"
		exit $?
	fi
	ready+=("$h")
done
# The harnesses fuzz side by side, as many at once as there are CPUs (each with its jobs);
# their reports come out in the harnesses' order.
for h in "${ready[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$(( ($(nproc) + jobs - 1) / jobs ))" ]; do
		wait -n
	done
	fuzz_one "$h" >"$work/$h.out" 2>"$work/$h.err" &
done
wait
for h in "${ready[@]}"; do
	cat "$work/$h.out"
	cat "$work/$h.err" >&2
	if [ -f "$work/$h.keep" ]; then
		keep=1
		failed=1
	fi
done
exit "$failed"
