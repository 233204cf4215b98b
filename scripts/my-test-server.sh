#!/usr/bin/env bash
# Starts or stops a MariaDB of the tests' own: a throwaway data directory in DIR, a free
# loopback port and a unix socket DIR/sock, run as an unprivileged user when we are root
# (mariadbd refuses root).
#
#   scripts/my-test-server.sh start DIR   creates and starts it; prints the DSN of user locktest (password Lt-my-3e9a)
#   scripts/my-test-server.sh stop DIR    stops it at once (SIGKILL: the tests' "server killed")
#   scripts/my-test-server.sh up DIR      starts it again, on its port, after a stop
#
# Commits reach the OS at once (innodb_flush_log_at_trx_commit=2): a killed server keeps its
# fencing tokens, as a real server with the default (1) does.
# locktest owns the database locktest, may KILL other users' sessions (CONNECTION ADMIN,
# for forceRelease()) and see them (PROCESS); lockother may not, and its statements end after
# 0.5 s (MAX_STATEMENT_TIME); root connects through the socket only.
set -euo pipefail
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|up DIR" >&2; exit 2; }

user=$(id -un)
[ "$(id -u)" = 0 ] && user=nobody

case "$cmd" in
	start)
		command -v mariadb-install-db >/dev/null || { echo "my-test-server: mariadb-install-db not found (install mariadb-server)" >&2; exit 1; }
		mkdir -p "$dir"
		dir="$(cd "$dir" && pwd)"
		[ "$(id -u)" = 0 ] && chown nobody:nogroup "$dir"
		chmod 700 "$dir"
		port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
		echo "$port" >"$dir/port"
		mariadb-install-db --no-defaults --user="$user" --datadir="$dir/data" --auth-root-authentication-method=socket \
			--skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }
		"$0" up "$dir"
		mariadb --no-defaults -S "$dir/sock" -u root -e "CREATE USER locktest@'%' IDENTIFIED BY 'Lt-my-3e9a';
			CREATE DATABASE locktest; GRANT ALL ON locktest.* TO locktest@'%'; GRANT CONNECTION ADMIN, PROCESS ON *.* TO locktest@'%';
			CREATE USER lockother@'%' IDENTIFIED BY 'Lo-my-51c2' WITH MAX_STATEMENT_TIME 0.5; GRANT ALL ON locktest.* TO lockother@'%';
			CREATE USER lockpool@'%' IDENTIFIED BY 'Lp-my-8b3d'; GRANT ALL ON locktest.* TO lockpool@'%';" \
			|| { tail -n 20 "$dir/server.log" >&2; exit 1; }
		echo "mysql://locktest:Lt-my-3e9a@127.0.0.1:$port/locktest"
		;;
	up)
		port=$(cat "$dir/port")
		# setsid: the server outlives a test that started it in its own process group.
		setsid /usr/sbin/mariadbd --no-defaults --user="$user" --datadir="$dir/data" --port="$port" \
			--bind-address=127.0.0.1 --socket="$dir/sock" --pid-file="$dir/mariadbd.pid" --log-error="$dir/server.log" \
			--skip-log-bin --innodb-buffer-pool-size=16M --innodb-log-file-size=8M --max-connections=300 \
			--skip-name-resolve --innodb-flush-log-at-trx-commit=2 </dev/null >/dev/null 2>&1 &
		for _ in $(seq 1 300); do
			mariadb-admin --no-defaults -S "$dir/sock" -u root ping >/dev/null 2>&1 && exit 0
			sleep 0.1
		done
		echo "my-test-server: mariadbd did not start in 30 s" >&2
		tail -n 20 "$dir/server.log" >&2
		exit 1
		;;
	stop)
		if [ -s "$dir/mariadbd.pid" ]; then
			pid=$(cat "$dir/mariadbd.pid")
			if [[ $pid =~ ^[0-9]+$ ]] && kill -9 "$pid" 2>/dev/null; then
				for _ in $(seq 1 100); do
					kill -0 "$pid" 2>/dev/null || break
					sleep 0.05
				done
			fi
			rm -f "$dir/mariadbd.pid"
		fi
		;;
	*) echo "usage: $0 start|stop|up DIR" >&2; exit 2 ;;
esac
