#!/bin/sh
# The Laravel README's install and configuration steps, as written, in a fresh laravel/laravel 12
# application, then what the README promises checked there. Run by adapters/test.sh, which
# exports LOCK_TEST_EXT (lock.so), LOCK_TEST_REDIS_PORT and LOCK_TEST_PGSQL_DSN, and counts the
# "ok - WHAT" / "not ok - WHAT" lines this prints; the details of a failure go to stderr.
#
# The pristine skeleton (composer create-project, less laravel/pint, which needs PHP 8.3) is
# made once into the gitignored adapters/.vendor/laravel-app/ and copied afresh for each run.
set -u

here=$(cd "$(dirname "$0")" && pwd)
adapter=$(cd "$here/.." && pwd)
adapters=$(cd "$adapter/.." && pwd)
ext=${LOCK_TEST_EXT:?LOCK_TEST_EXT is not set: run through adapters/test.sh}
redis_port=${LOCK_TEST_REDIS_PORT:?LOCK_TEST_REDIS_PORT is not set: run through adapters/test.sh}
pgsql_dsn=${LOCK_TEST_PGSQL_DSN:?LOCK_TEST_PGSQL_DSN is not set: run through adapters/test.sh}
skeleton="$adapters/.vendor/laravel-app"
# What the cached skeleton is made of: a change here makes it anew.
recipe="laravel/laravel 12.* less laravel/pint (PHP 8.3), composer install, create-project's scripts"
export COMPOSER_NO_INTERACTION=1

app_name=laravel
# shellcheck source=../../test-support/app.sh
. "$adapters/test-support/app.sh"

# check WHAT EXPECTED ACTUAL: ok when ACTUAL contains EXPECTED (a fixed string).
check() {
	case "$3" in
	*"$2"*) ok "$1" ;;
	*)
		not_ok "$1"
		printf '%s: expected "%s" in:\n%s\n' "$1" "$2" "$3" >&2
		;;
	esac
}
# Stops at a step the rest depends on.
fatal() {
	not_ok "$1"
	exit 1
}

artisan() { (cd "$app" && php -d extension="$ext" artisan "$@" 2>&1); }

# --- The skeleton, made once -------------------------------------------------------------
if [ ! -f "$skeleton/vendor/autoload.php" ] || [ "$(cat "$skeleton/.lock-app-recipe" 2>/dev/null)" != "$recipe" ]; then
	rm -rf "$skeleton" "$skeleton.new"
	mkdir -p "$adapters/.vendor"
	if ! (
		composer create-project --no-install --no-scripts --no-progress laravel/laravel "$skeleton.new" '12.*' &&
			cd "$skeleton.new" &&
			composer remove --dev laravel/pint --no-update &&
			composer install --no-progress &&
			composer run-script post-root-package-install &&
			composer run-script post-create-project-cmd
	) >&2; then
		fatal "composer create-project laravel/laravel 12 (less laravel/pint)"
	fi
	echo "$recipe" >"$skeleton.new/.lock-app-recipe"
	mv "$skeleton.new" "$skeleton"
fi
cp -a "$skeleton" "$app" || fatal "a fresh copy of the laravel/laravel 12 skeleton"
ok "a fresh laravel/laravel $(cd "$app" && php artisan --version | sed 's/^Laravel Framework //') application"

# --- adapters/README.md, "Installing": step 2, the adapter through a path repository -------
# (Step 1 installs the extension for the command line's PHP; here it is loaded for Composer's.)
if (cd "$app" && composer config repositories.lock-adapter path "$adapter" &&
	php -d extension="$ext" "$(command -v composer)" require --no-progress 'lock/laravel-lock-store:@dev') >&2; then
	ok "composer require 'lock/laravel-lock-store:@dev' through a path repository, with the extension loaded for Composer's PHP"
else
	fatal "composer require 'lock/laravel-lock-store:@dev' through a path repository"
fi
check "LockServiceProvider is discovered" 'Lock\\Adapter\\Laravel\\LockServiceProvider' "$(cat "$app/bootstrap/cache/packages.php")"

# --- The Laravel README's config/cache.php and .env ----------------------------------------
php "$here/app/configure.php" "$adapter/README.md" "$app/config/cache.php" >&2 || fatal "the README's config/cache.php"
ok "the README's config/cache.php: its default line and its locks store (then the test's own flock and pgsql stores)"
grep -q '^CACHE_STORE=database$' "$app/.env" || fatal "the new application's .env says CACHE_STORE=database, as the README says"
# The README: CACHE_STORE=locks in .env. The rest is this machine's: the test redis, no pdo_sqlite.
sed -i -e 's/^CACHE_STORE=database$/CACHE_STORE=locks/' \
	-e "s/^REDIS_PORT=.*/REDIS_PORT=$redis_port/" \
	-e 's/^QUEUE_CONNECTION=.*/QUEUE_CONNECTION=redis/' \
	-e 's/^SESSION_DRIVER=.*/SESSION_DRIVER=file/' "$app/.env"
echo "LOCK_APP_PGSQL_DSN=$pgsql_dsn" >>"$app/.env"
ok "the README's .env: CACHE_STORE=locks"

# --- What the application does with its locks (tests/app/) ---------------------------------
mkdir -p "$app/app/Jobs"
cp "$here/app/LockAppUniqueJob.php" "$app/app/Jobs/"
cat "$here/app/console.php" >>"$app/routes/console.php"
cat "$here/app/web.php" >>"$app/routes/web.php"

# The README's own check.
check "the README's tinker line prints ExtensionLock" 'Lock\Adapter\Laravel\ExtensionLock' \
	"$(artisan tinker --execute 'echo get_class(Cache::lock("x"));')"

name="lock-app-$$"
out=$(artisan lock-app:through-extension "$name")
check "Cache::lock()->get() takes the lock in the extension (Redis, the README's prefix)" "taken: true
held in the extension's store: true
a Lock\\Lock takes it: false" "$out"
check "Cache::lock()->release() frees it there" "released: true
free in the extension's store: true" "$out"

# block() in a second process, woken when the first releases.
go="$work/go"
artisan lock-app:hold "$name-block" "$go" >"$work/hold.out" &
hold_pid=$!
pids="$pids $hold_pid"
i=0
while [ "$(head -n 1 "$work/hold.out" 2>/dev/null)" = "" ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
# The provider's lock:inspect sees that hold (the README's "Artisan commands").
check "php artisan lock:inspect NAME --format=json shows the hold" '{"held":true,"mode":"write","owners":["' \
	"$(artisan lock:inspect "$name-block" --format=json)"
out=$(artisan lock-app:block "$name-block" "$go")
wait "$hold_pid"
check "block() in a second process gets the lock when the first releases it" "busy at first
block() got it" "$out"
check "the first process held it until its release" "held
released" "$(cat "$work/hold.out")"

check "a unique job on Redis is queued once" "queued: 1" "$(artisan lock-app:unique "$name")"
out=$(CACHE_STORE=locks_flock artisan lock-app:unique "$name")
check "a unique job on flock is refused, loudly: ProcessBoundException naming the store and what to use" \
	"Lock\\Adapter\\Laravel\\ProcessBoundException: Unique job lock \"laravel_unique_job:" "$out"
check "the refusal names the store and what to use instead" "Lock\\Store\\FlockStore binds a hold" "$out"

# The scheduler on flock: a foreground event's withoutOverlapping() works, a background one's is refused.
: >"$app/storage/logs/laravel.log"
ran="$work/scheduled-ran"
out=$(cd "$app" && CACHE_STORE=locks_flock LOCK_APP_SCHEDULE="$ran" php -d extension="$ext" artisan schedule:run 2>&1)
if [ -f "$ran" ]; then
	ok "schedule:run on flock runs a foreground event withoutOverlapping()"
else
	not_ok "schedule:run on flock runs a foreground event withoutOverlapping()"
	echo "$out" >&2
fi
check "schedule:run on flock refuses a background event's withoutOverlapping(), loudly (logged)" \
	"withoutOverlapping() for the background event" "$(cat "$app/storage/logs/laravel.log")"

# A web worker (php -S with Laravel's server.php, as artisan serve runs it): a request takes a
# lock on a process-bound store and dies of a fatal error; the worker's next request gets it.
port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
(cd "$app/public" && PHP_CLI_SERVER_WORKERS='' exec php -d extension="$ext" -d display_errors=1 -S "127.0.0.1:$port" \
	"$app/vendor/laravel/framework/src/Illuminate/Foundation/resources/server.php") >"$work/serve.log" 2>&1 &
serve_pid=$!
pids="$pids $serve_pid"
get() { php -r '$s = @stream_socket_client("tcp://127.0.0.1:" . $argv[1], $e, $m, 5.0); if (!$s) exit(1);
	fwrite($s, "GET " . $argv[2] . " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"); stream_set_timeout($s, 120);
	$a = stream_get_contents($s); echo substr($a, strpos($a, "\r\n\r\n") + 4);' "$port" "$1"; }
i=0
until get /up >/dev/null 2>&1 || [ $i -ge 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
for store in locks_flock locks_pgsql; do
	first=$(get "/lock-app/$store/take")
	second=$(get "/lock-app/$store/probe")
	pid=${first%% *}
	case "$first" in
	*"$pid taken"*"Allowed memory size"*) ok "$store: a web request takes the lock and dies of a fatal error" ;;
	*) not_ok "$store: a web request takes the lock and dies of a fatal error"; echo "$first" >&2 ;;
	esac
	check "$store: the same worker's next request gets the lock" "$pid free" "$second"
done
kill "$serve_pid" 2>/dev/null

check "without the extension, the store says to load it" "load the lock extension (extension=lock in php.ini)" \
	"$(cd "$app" && php artisan lock-app:without-extension 2>&1)"

[ "$failures" -eq 0 ]
