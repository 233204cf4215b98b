#!/bin/sh
# Runs every adapter's PHPUnit suite against the real framework packages.
#
#   adapters/test.sh [adapter ...]      (default: every adapters/*/ with tests)
#
# For each adapter and each framework version listed in <adapter>/tests/versions (one a line,
# optionally followed by the PHPUnit groups of tests for what that version does not have, which
# are left out for it; none: one run; "php84": a version that needs a newer PHP than the host's,
# run on PHP 8.4 in scripts/php84.sh's root, built there first; "framework=V": the framework's
# other packages at version V), the test-only <adapter>/tests/composer.json, with @VERSION@ replaced, is
# installed with Composer into adapters/.vendor/<adapter>-<version>/ (gitignored, reused while
# the composer.json files are unchanged). An adapter with an executable tests/run.sh runs that
# instead (it installs what it needs itself), with the same environment and --log-junit FILE. The suites load the extension from modules/lock.so
# (built with scripts/build.sh) and talk to a redis-server of our own on a free loopback port,
# unless LOCK_TEST_REDIS_PORT names one already running, to three more for the combined store
# (LOCK_TEST_REDLOCK_DSN, redlock://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3, unless it names
# running ones), and to a PostgreSQL and a MariaDB of our own (scripts/pg-test-server.sh,
# scripts/my-test-server.sh) unless LOCK_TEST_PGSQL_DSN and LOCK_TEST_MYSQL_DSN name running ones.
#
#
# An adapter with an executable tests/app.sh also runs its README's install and configuration
# steps, as written, in a fresh application skeleton (see the hook below).
#
# Last line: "N passed, N failed" (", N skipped" when any); exit status 1 on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ext="$root/modules/lock.so"
work=$(mktemp -d "${TMPDIR:-/tmp}/lock-adapters.XXXXXX")
passed=0
failed=0
skipped=0

redis_pids=""
cleanup() {
	for pid in $redis_pids; do
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		fi
	done
	[ -d "$work/pgsql" ] && "$root/scripts/pg-test-server.sh" stop "$work/pgsql" >/dev/null 2>&1
	[ -d "$work/mysql" ] && "$root/scripts/my-test-server.sh" stop "$work/mysql" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

finish() {
	line="$passed passed, $failed failed"
	[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
	echo "$line"
	[ "$failed" -eq 0 ]
	exit $?
}

if [ ! -f "$ext" ]; then
	echo "test: $ext is missing: run scripts/build.sh first" >&2
	failed=1
	finish
fi
for tool in composer php; do
	command -v "$tool" >/dev/null || { echo "test: $tool is not installed" >&2; failed=1; finish; }
done

# Starts a redis-server of our own on a free loopback port, and sets $port to it.
start_redis() {
	command -v redis-server >/dev/null || { echo "test: redis-server is not installed" >&2; failed=1; finish; }
	port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
	redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
		--dir "$work" --logfile "$work/redis-$port.log" &
	redis_pids="$redis_pids $!"
	for _ in $(seq 1 100); do
		php -r '$s = @fsockopen("127.0.0.1", (int) $argv[1]); if (!$s) exit(1); fwrite($s, "PING\r\n"); exit(fgets($s) === "+PONG\r\n" ? 0 : 1);' "$port" && break
		sleep 0.05
	done
}

if [ -z "${LOCK_TEST_REDIS_PORT:-}" ]; then
	start_redis
	LOCK_TEST_REDIS_PORT=$port
fi
# Three independent servers, one combined store (Lock\Store\CombinedStore) over them.
if [ -z "${LOCK_TEST_REDLOCK_DSN:-}" ]; then
	hosts=""
	for _ in 1 2 3; do
		start_redis
		hosts="$hosts${hosts:+,}127.0.0.1:$port"
	done
	LOCK_TEST_REDLOCK_DSN="redlock://$hosts"
fi
export LOCK_TEST_REDIS_PORT LOCK_TEST_REDLOCK_DSN
export LOCK_TEST_EXT="$ext"

# A PostgreSQL and a MariaDB of our own for the suites' pgsql and mysql cases, unless
# LOCK_TEST_PGSQL_DSN and LOCK_TEST_MYSQL_DSN name running ones (scripts/test.sh does).
# The servers run as nobody when we are root: they must reach their directories in $work.
chmod 711 "$work"
if [ -z "${LOCK_TEST_PGSQL_DSN:-}" ]; then
	if ! LOCK_TEST_PGSQL_DSN=$("$root/scripts/pg-test-server.sh" start "$work/pgsql" 2>"$work/pgsql.log"); then
		echo "test: cannot start PostgreSQL:" >&2
		tail -n 20 "$work/pgsql.log" >&2
		failed=1
		finish
	fi
fi
if [ -z "${LOCK_TEST_MYSQL_DSN:-}" ]; then
	if ! LOCK_TEST_MYSQL_DSN=$("$root/scripts/my-test-server.sh" start "$work/mysql" 2>"$work/mysql.log"); then
		echo "test: cannot start MariaDB:" >&2
		tail -n 20 "$work/mysql.log" >&2
		failed=1
		finish
	fi
fi
export LOCK_TEST_PGSQL_DSN LOCK_TEST_MYSQL_DSN

if [ $# -gt 0 ]; then
	adapters="$*"
else
	adapters=$(cd "$here" && for d in */; do [ -d "$d/tests" ] && echo "${d%/}"; done)
fi

# Installs <adapter>/tests/composer.json for one version into $dir (for PHP 8.4 when $4 is
# php84: Composer runs on the host's PHP; @FRAMEWORK@, the version of the framework's other
# packages, is $5, or the version); echoes nothing, fails loudly.
install() {
	adapter=$1 version=$2 dir=$3 platform="" framework=${5:-$2}
	[ "${4:-}" = php84 ] && platform="--ignore-platform-req=php"
	mkdir -p "$dir"
	sed -e "s|@VERSION@|$version|g" -e "s|@FRAMEWORK@|$framework|g" -e "s|@ADAPTER@|../../$adapter|g" \
		"$here/$adapter/tests/composer.json" >"$work/composer.json"
	stamp=$(cat "$work/composer.json" "$here/$adapter/composer.json" | cksum)
	if [ -f "$dir/vendor/autoload.php" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	cp "$work/composer.json" "$dir/composer.json"
	rm -f "$dir/.stamp" "$dir/composer.lock"
	if ! (cd "$dir" && COMPOSER_NO_INTERACTION=1 composer update --no-progress --quiet \
		--ignore-platform-req=ext-lock $platform) >"$work/composer.log" 2>&1; then
		cat "$work/composer.log" >&2
		return 1
	fi
	echo "$stamp" >"$dir/.stamp"
}

# Adds one JUnit log's counts to the totals; a missing or empty log is one failure.
count() {
	set -- $(php -r '
		$x = @simplexml_load_file($argv[1]);
		if (!$x || !isset($x->testsuite)) { echo "0 0 0 0"; exit; }
		$s = $x->testsuite[0];
		printf("%d %d %d %d", $s["tests"], $s["failures"], $s["errors"], $s["skipped"]);' "$1")
	tests=$1 failures=$2 errors=$3 skips=$4
	if [ "$tests" -eq 0 ]; then
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + tests - failures - errors - skips))
	failed=$((failed + failures + errors))
	skipped=$((skipped + skips))
}

# The PHP 8.4 root, with this work tree built in it (scripts/php84.sh), once a run: 0 when ready.
php84_state=""
php84_ready() {
	if [ -z "$php84_state" ]; then
		echo "== PHP 8.4 build (scripts/php84.sh build)" >&2
		if "$root/scripts/php84.sh" build >"$work/php84-build.log" 2>&1; then
			php84_state=ready
		else
			php84_state=failed
			echo "test: the PHP 8.4 build failed ($work/php84-build.log):" >&2
			tail -n 40 "$work/php84-build.log" >&2
		fi
	fi
	[ "$php84_state" = ready ]
}

# Runs a command on the host's PHP, or ($1 php84) in the PHP 8.4 root, which sees the work
# tree's copy at its own path (modules/lock.so: the PHP 8.4 build) and adapters/.vendor as it is.
on_php() {
	where=$1
	shift
	if [ "$where" = php84 ]; then
		"$root/scripts/php84.sh" run "$@"
	else
		"$@"
	fi
}

for adapter in $adapters; do
	versions=default
	[ -f "$here/$adapter/tests/versions" ] && versions=$(grep -v '^\s*\(#\|$\)' "$here/$adapter/tests/versions" | tr ' ' '|')
	for line in $versions; do
		# "VERSION" or "VERSION|GROUP,...": PHPUnit groups of tests for what that version does not have.
		# "php84" among the groups: the version needs a newer PHP than the host's; its suite runs on
		# PHP 8.4 in scripts/php84.sh's root. "framework=V": the framework's other packages
		# (@FRAMEWORK@ in tests/composer.json) at V rather than at the version.
		version=${line%%|*}
		absent="" php="" framework=""
		groups=$(echo "$line" | tr '|' '\n' | sed 1d)
		if echo "$groups" | grep -qx php84; then
			php=php84
			groups=$(echo "$groups" | grep -vx php84)
		fi
		if echo "$groups" | grep -q '^framework='; then
			framework=$(echo "$groups" | sed -n 's/^framework=//p')
			groups=$(echo "$groups" | grep -v '^framework=')
		fi
		[ -n "$groups" ] && absent=$(echo "$groups" | sed 's/^/--exclude-group /' | tr '\n' ' ')
		name="$adapter-$version"
		[ "$version" = default ] && name=$adapter
		dir="$here/.vendor/$name"
		log="$work/$name.xml"
		echo "== $name" >&2
		if [ -x "$here/$adapter/tests/run.sh" ]; then
			# It installs what it needs itself; the arguments go to PHPUnit.
			"$here/$adapter/tests/run.sh" --log-junit "$log" >&2
		elif ! install "$adapter" "$version" "$dir" "$php" "$framework"; then
			echo "test: composer could not install $name" >&2
			failed=$((failed + 1))
			continue
		elif [ "$php" = php84 ] && ! php84_ready; then
			failed=$((failed + 1))
			continue
		else
			# The log goes beside the vendor directory: the PHP 8.4 root has a /tmp of its own.
			rm -f "$dir/.junit.xml"
			# shellcheck disable=SC2086
			on_php "$php" php -d extension="$ext" -d zend.assertions=1 "$dir/vendor/bin/phpunit" \
				-c "$here/$adapter/phpunit.xml.dist" --log-junit "$dir/.junit.xml" $absent >&2
			mv "$dir/.junit.xml" "$log" 2>/dev/null
		fi
		count "$log"
	done
	# The README's steps run as written in a fresh application of the framework: an executable
	# tests/app.sh prints one line per step or check, "ok - WHAT" or "not ok - WHAT", and
	# exits non-zero on a failure (every line counts; no line at all is one failure).
	if [ -x "$here/$adapter/tests/app.sh" ]; then
		echo "== $adapter (application)" >&2
		"$here/$adapter/tests/app.sh" >"$work/$adapter-app.log" 2>"$work/$adapter-app.err"
		app_status=$?
		cat "$work/$adapter-app.log" >&2
		app_ok=$(grep -c '^ok - ' "$work/$adapter-app.log")
		app_failed=$(grep -c '^not ok - ' "$work/$adapter-app.log")
		if [ "$app_status" -ne 0 ] && [ "$app_failed" -eq 0 ]; then
			app_failed=1
		fi
		if [ "$app_failed" -gt 0 ]; then
			echo "test: $adapter's application steps failed ($work/$adapter-app.err):" >&2
			tail -n 40 "$work/$adapter-app.err" >&2
		fi
		passed=$((passed + app_ok))
		failed=$((failed + app_failed))
	fi
done

finish
