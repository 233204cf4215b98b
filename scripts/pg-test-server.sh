#!/usr/bin/env bash
# Starts or stops a PostgreSQL of the tests' own: a throwaway cluster in DIR on a free
# loopback port, run as an unprivileged user when we are root (PostgreSQL refuses root).
# The server is the one in LOCK_PG_BIN (a directory holding initdb, pg_ctl and psql), else
# the one pg_config names, else the newest of /usr/lib/postgresql/*/bin.
#
#   scripts/pg-test-server.sh start DIR   creates and starts it; prints the DSN of role locktest (password Lt-pw-7d2f)
#   scripts/pg-test-server.sh stop DIR    stops it at once (the tests' "server killed")
#   scripts/pg-test-server.sh up DIR      starts it again, on its port, after a stop
#
# TCP connections need the password (scram-sha-256); the unix socket in DIR/sock trusts.
set -euo pipefail

# The bin directory of the PostgreSQL server to run, or nothing when none is installed.
pg_bin() {
	local d
	if [ -n "${LOCK_PG_BIN:-}" ]; then
		echo "$LOCK_PG_BIN"
		return
	fi
	d=$(pg_config --bindir 2>/dev/null || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then
		echo "$d"
		return
	fi
	# pg_config belongs to libpq-dev, whose version may not be the server's.
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$d/initdb" ] && { echo "$d"; return; }
	done
}
bin=$(pg_bin)
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|up DIR" >&2; exit 2; }

as_owner=()
if [ "$(id -u)" = 0 ]; then
	as_owner=(runuser -u nobody --)
fi

case "$cmd" in
	start)
		[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "pg-test-server: no PostgreSQL server found: no initdb in ${bin:-pg_config --bindir or /usr/lib/postgresql/*/bin} (install postgresql)" >&2; exit 1; }
		mkdir -p "$dir"
		dir="$(cd "$dir" && pwd)"
		[ ${#as_owner[@]} -gt 0 ] && chown nobody:nogroup "$dir"
		chmod 700 "$dir"
		port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
		printf 'postgres-pw\n' >"$dir/pwfile"
		[ ${#as_owner[@]} -gt 0 ] && chown nobody:nogroup "$dir/pwfile"
		"${as_owner[@]}" "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" \
			--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 \
			|| { cat "$dir/initdb.log" >&2; exit 1; }
		mkdir -p "$dir/sock"
		[ ${#as_owner[@]} -gt 0 ] && chown nobody:nogroup "$dir/sock"
		echo "$port" >"$dir/port"
		"$0" up "$dir"
		"${as_owner[@]}" "$bin/psql" -X -q -h "$dir/sock" -p "$port" -U postgres -d postgres \
			-c "CREATE ROLE locktest LOGIN PASSWORD 'Lt-pw-7d2f'" -c "CREATE DATABASE locktest OWNER locktest" >/dev/null
		echo "pgsql://locktest:Lt-pw-7d2f@127.0.0.1:$port/locktest"
		;;
	up)
		port=$(cat "$dir/port")
		"${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
			-o "-p $port -h 127.0.0.1 -k $dir/sock -c fsync=off -c max_connections=200 -c shared_buffers=16MB" start >/dev/null \
			|| { tail -n 20 "$dir/server.log" >&2; exit 1; }
		;;
	stop)
		if [ -f "$dir/data/postmaster.pid" ]; then
			"${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
		fi
		;;
	*) echo "usage: $0 start|stop|up DIR" >&2; exit 2 ;;
esac
