#!/usr/bin/env bash
# Runs one adapter's PHPUnit suite against the extension built in this checkout
# (modules/lock.so; scripts/build.sh builds it), for adapters whose framework cannot be
# installed here and whose tests load stand-ins of its interfaces from tests/stubs.
#
#   run-suite.sh ADAPTER NAMESPACE STUB_NAMESPACE STUB_DIR EXTRA_REQUIRE [PHPUnit args...]
#     ADAPTER         the folder under adapters/ (drupal, yii2, ...)
#     NAMESPACE       the adapter's namespace under Lock\Adapter (Drupal, Yii2, ...)
#     STUB_NAMESPACE  the framework namespace the stand-ins declare, JSON-escaped (yii\\, ...)
#     STUB_DIR        their folder under the adapter's tests/stubs
#     EXTRA_REQUIRE   further test-only packages as JSON members (, "symfony/yaml": "^7.0"), or ""
#   LOCK_TEST_REDIS_PORT  a redis-server to use; without it one is started on a free port
# PHPUnit goes into adapters/.vendor/<adapter>/ (git-ignored) with a test-only composer.json,
# which also autoloads the tests' shared support (adapters/test-support/src).
set -euo pipefail

adapter=$1 namespace=$2 stub_namespace=$3 stub_dir=$4 extra=$5
shift 5
adapters=$(cd "$(dirname "$0")/.." && pwd)
here=$adapters/$adapter/tests
repo=$(cd "$adapters/.." && pwd)
so=${LOCK_TEST_EXT:-$repo/modules/lock.so}
vendor=$adapters/.vendor/$adapter

[ -f "$so" ] || { echo "run.sh: $so is missing: run scripts/build.sh first" >&2; exit 1; }

mkdir -p "$vendor"
manifest=$(cat <<JSON
{
    "name": "lock/test-$adapter",
    "description": "test-only: PHPUnit and the autoloader for adapters/$adapter",
    "require-dev": { "phpunit/phpunit": "^10.5"$extra },
    "autoload": { "psr-4": {
        "Lock\\\\Adapter\\\\$namespace\\\\": "../../$adapter/src/",
        "Lock\\\\Adapter\\\\$namespace\\\\Tests\\\\": "../../$adapter/tests/",
        "Lock\\\\Adapter\\\\TestSupport\\\\": "../../test-support/src/",
        "$stub_namespace": "../../$adapter/tests/stubs/$stub_dir/"
    } },
    "config": { "allow-plugins": false, "sort-packages": true }
}
JSON
)
if [ ! -f "$vendor/vendor/autoload.php" ] || [ "$(cat "$vendor/composer.json" 2>/dev/null)" != "$manifest" ]; then
    printf '%s\n' "$manifest" > "$vendor/composer.json"
    (cd "$vendor" && composer update --no-interaction --no-progress --quiet)
fi

redis_pid=
cleanup() { if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
if [ -z "${LOCK_TEST_REDIS_PORT:-}" ]; then
    LOCK_TEST_REDIS_PORT=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
    redis-server --port "$LOCK_TEST_REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
    redis_pid=$!
    for _ in $(seq 50); do
        redis-cli -p "$LOCK_TEST_REDIS_PORT" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
export LOCK_TEST_REDIS_PORT LOCK_TEST_EXT=$so LOCK_TEST_AUTOLOAD=$vendor/vendor/autoload.php

php -d extension="$so" "$vendor/vendor/bin/phpunit" -c "$here/phpunit.xml" "$@"
