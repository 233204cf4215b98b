#!/usr/bin/env bash
# Installs what building, testing and benchmarking the lock extension needs on Debian 12.
# Does nothing when every package is already installed; otherwise runs apt-get update
# once and installs the missing ones, without letting any package start its service.
set -euo pipefail

packages=(
	# build
	build-essential pkg-config php8.2-cli php8.2-dev php-pear libhiredis-dev libssl-dev
	# tests: our own redis-server processes on free ports, valgrind for the phpt suite
	redis-server valgrind curl php8.2-fpm
	# the PostgreSQL store: libpq to build it, a server of the tests' own (scripts/pg-test-server.sh)
	postgresql-15 libpq-dev
	# the MySQL store: libmariadb to build it, a server of the tests' own (scripts/my-test-server.sh)
	mariadb-server libmariadb-dev
	# benchmark peers (Symfony's PostgreSqlStore and PdoStore run on pdo_pgsql and pdo_mysql), and PHP-Parser so that gen_stub.php runs offline
	php-symfony-lock php-redis php-illuminate-cache php-illuminate-redis php-parser php8.2-pgsql php8.2-mysql
	# fuzzing the C core with libFuzzer (scripts/fuzz.sh)
	clang-14 libclang-rt-14-dev
	# --- MemcachedStore: libmemcached to build it, memcached for its tests, php-memcached for Symfony's peer ---
	libmemcached-dev memcached php-memcached
	# --- end MemcachedStore ---
	# PostgresStore's pooler check: tests/pgsql/pgbouncer.phpt runs its own pgbouncer in transaction and session mode
	pgbouncer
	# the PHP 8.4 pass: a Debian 13 root made with debootstrap, the work tree copied in with rsync (scripts/php84.sh)
	debootstrap rsync
)

# Prints the packages of the list that dpkg does not report as installed.
missing_packages() {
	local pkg status
	for pkg in "${packages[@]}"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
		# "ii" is installed; "rc" (removed, config left) or nothing at all is missing.
		if [[ $status != ii* ]]; then
			printf '%s\n' "$pkg"
		fi
	done
}

mapfile -t missing < <(missing_packages)
if ((${#missing[@]} == 0)); then
	echo "install-deps: all ${#packages[@]} packages already installed, nothing to do"
	exit 0
fi

sudo=()
if ((EUID != 0)); then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi

# The pid of the system redis-server named by its pid file, or nothing when it is not running.
system_redis_pid() {
	local pidfile=/run/redis/redis-server.pid pid
	[[ -s $pidfile ]] || return 0
	pid=$(cat "$pidfile")
	if [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]]; then
		printf '%s\n' "$pid"
	fi
}

# The pids of the system's PostgreSQL clusters (pg_ctlcluster's), or nothing when none runs.
system_pg_pids() {
	local f pid
	for f in /var/run/postgresql/*.pid; do
		[[ -s $f ]] || continue
		pid=$(head -n 1 "$f")
		if [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]]; then
			printf '%s\n' "$pid"
		fi
	done
}

# --- MySQL store: the pid of the system MariaDB, or nothing when it is not running ---
system_my_pid() {
	local pidfile=/run/mysqld/mysqld.pid pid
	[[ -s $pidfile ]] || return 0
	pid=$(cat "$pidfile")
	if [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]]; then
		printf '%s\n' "$pid"
	fi
}
# --- end MySQL store ---

policy=/usr/sbin/policy-rc.d
policy_saved=
policy_ours=0
log=$(mktemp)
redis_before=$(system_redis_pid)
pg_before=$(system_pg_pids)
my_before=$(system_my_pid) # MySQL store

# Puts back whatever policy-rc.d was there before, on every way out.
restore_policy() {
	if ((policy_ours)); then
		"${sudo[@]}" rm -f "$policy"
	fi
	if [[ -n $policy_saved ]]; then
		"${sudo[@]}" mv "$policy_saved" "$policy"
	fi
	rm -f "$log"
}
trap restore_policy EXIT
trap 'exit 130' INT TERM

# Exit code 101 tells invoke-rc.d and deb-systemd-invoke not to start services, such as
# the system redis-server on port 6379, which our tests never use.
if [[ -e $policy ]]; then
	"${sudo[@]}" mv "$policy" "$policy.install-deps.$$"
	policy_saved=$policy.install-deps.$$
fi
policy_ours=1
printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
"${sudo[@]}" chmod 755 "$policy"

apt_get() {
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -o DPkg::Lock::Timeout=300 "$@" >>"$log" 2>&1
}

if ! apt_get update || ! apt_get install "${missing[@]}"; then
	tail -n 30 "$log" >&2
	echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
	exit 1
fi

# Should an init system have started redis-server despite the policy, stop that one.
redis_after=$(system_redis_pid)
if [[ -z $redis_before && -n $redis_after ]]; then
	"${sudo[@]}" kill "$redis_after"
fi

# Likewise the cluster "main" that the postgresql-15 package creates: the tests start their own.
if [[ -z $pg_before ]]; then
	for pid in $(system_pg_pids); do
		"${sudo[@]}" kill "$pid"
	done
fi

# --- MySQL store: likewise a system MariaDB that the mariadb-server package started: the tests start their own ---
my_after=$(system_my_pid)
if [[ -z $my_before && -n $my_after ]]; then
	"${sudo[@]}" kill "$my_after"
fi
# --- end MySQL store ---

echo "install-deps: ran apt-get update and installed ${#missing[@]} missing package(s): ${missing[*]}"
