# What the adapters' tests/app.sh share; sourced (". .../test-support/app.sh") after setting
# app_name (laravel, symfony, ...). It gives:
#   $work     a temporary directory, removed at exit; $app, the application's place in it
#   $pids     the processes to stop at exit (add the ones you start)
#   ok WHAT, not_ok WHAT   the lines adapters/test.sh counts; not_ok counts $failures
work=$(mktemp -d "${TMPDIR:-/tmp}/lock-$app_name-app.XXXXXX")
app="$work/app"
pids=""
failures=0

app_cleanup() {
	for pid in $pids; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$work"
}
trap app_cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	failures=$((failures + 1))
}
