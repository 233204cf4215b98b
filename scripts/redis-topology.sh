#!/usr/bin/env bash
# The Redis servers the TLS, Sentinel and Cluster tests and benchmarks talk to, on free
# loopback ports, every file under one directory:
#
#   scripts/redis-topology.sh start DIR [--owner PID]   makes certificates, starts every server,
#                                                      waits until each is ready, writes DIR/env
#   scripts/redis-topology.sh restore DIR              puts Sentinel and Cluster back in a known,
#                                                      healthy state after a test failed one over
#   scripts/redis-topology.sh stop DIR                 stops every server started in DIR
#
# What runs (ports in DIR/env, as `export LOCK_TEST_...=` lines):
# - TLS (certificates of DIR/tls, made with openssl): a server with a plain and a TLS port
#   that does not ask for client certificates, one that requires them (mutual TLS), one
#   serving an expired certificate and one serving a certificate for wrong.example.
# - Sentinel: a master, two replicas and three sentinels watching `mymaster` (quorum 2,
#   down-after-milliseconds 1000); a small group with passwords (a master and a replica
#   with one password, a sentinel with another); a small group that speaks only TLS.
# - Cluster: six nodes, three masters with a replica each; three masters over TLS only.
# The variables are listed in docs/testing.md and read by tests/inc/topology.inc.
# With --owner PID a watcher stops everything once that process is gone, so a killed test
# run leaves no server behind; `start` also stops what a previous run left in DIR.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
self="$here/$(basename "$0")"

master_name=mymaster
down_after_ms=1000
failover_timeout_ms=3000
cluster_node_timeout_ms=2000
auth_master_password='Mast3r-pw'
auth_sentinel_password='Sent1nel-pw'

die() {
	echo "redis-topology: $*" >&2
	exit 1
}

usage() {
	echo "usage: $0 start DIR [--owner PID] | restore DIR | stop DIR" >&2
	exit 2
}

# Prints N distinct free loopback ports, one a line (all listeners are open at once).
free_ports() {
	php -r '$ls = []; for ($i = 0; $i < (int) $argv[1]; $i++) {
		$ls[] = $s = stream_socket_server("tcp://127.0.0.1:0");
		$n = stream_socket_get_name($s, false);
		echo substr($n, strrpos($n, ":") + 1), "\n";
	}' "$1"
}

# Polls a command until it succeeds; fails after $2 seconds naming $1.
wait_for() {
	local what=$1 seconds=$2
	shift 2
	local deadline=$((SECONDS + seconds))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			echo "redis-topology: timed out after ${seconds} s waiting for $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

# ---------------------------------------------------------------- certificates

# Makes the test CA, the certificates signed by it, and an unrelated CA, in $1.
make_certs() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d"
		key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
		ca() {
			key "$1.key"
			openssl req -x509 -new -key "$1.key" -out "$1.crt" -days 3650 -subj "/CN=$2" \
				-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
		}
		# Signs $1.csr with CA $2 into $1.crt, with the extensions of $3.
		sign() {
			openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -days 3650 \
				-extfile <(printf '%s\n' "$3") -out "$1.crt" 2>/dev/null
			rm -f "$1.csr"
		}
		csr() {
			key "$1.key"
			openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
		}
		# Servers present their certificate as clients too (replication, the cluster bus,
		# which always asks for one).
		server_ext='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth'
		client_ext='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'

		ca ca "lock test CA"
		ca other-ca "lock test unrelated CA"
		csr server localhost
		sign server ca "$server_ext
subjectAltName=DNS:localhost,IP:127.0.0.1"
		csr client lock-test-client
		sign client ca "$client_ext"
		csr other-client lock-test-other-client
		sign other-client other-ca "$client_ext"
		csr wrongname wrong.example
		sign wrongname ca "$server_ext
subjectAltName=DNS:wrong.example"

		# OpenSSL 3.0's x509 cannot date a certificate in the past; its ca command can.
		csr expired localhost
		mkdir -p ca-db
		: >ca-db/index.txt
		echo 1000 >ca-db/serial
		cat >ca-db/ca.cnf <<-EOF
			[ca]
			default_ca = test_ca
			[test_ca]
			dir = $d/ca-db
			database = \$dir/index.txt
			new_certs_dir = \$dir
			serial = \$dir/serial
			certificate = $d/ca.crt
			private_key = $d/ca.key
			default_md = sha256
			policy = policy_any
			unique_subject = no
			[policy_any]
			commonName = supplied
			[server_ext]
			$(printf '%s\n' "$server_ext" | sed 's/=/ = /')
			subjectAltName = DNS:localhost,IP:127.0.0.1
		EOF
		openssl ca -batch -config ca-db/ca.cnf -extensions server_ext -notext \
			-startdate 20200101000000Z -enddate 20210101000000Z \
			-in expired.csr -out expired.crt 2>/dev/null
		rm -f expired.csr
		# Readable by tests that run as another user too.
		chmod 644 ./*.key ./*.crt
	) || die "cannot make the certificates in $d (openssl failed)"
}

# ---------------------------------------------------------------- processes

# Starts redis-server with config file $2 (sentinel if $1 is "sentinel"), plus extra args.
launch() {
	local kind=$1 conf=$2
	shift 2
	if [ "$kind" = sentinel ]; then
		redis-server "$conf" --sentinel "$@" >/dev/null 2>&1
	else
		redis-server "$conf" "$@" >/dev/null 2>&1
	fi
}

# Writes the config of a data node: conf_node DIR PORT [lines...] (to DIR/conf/PORT.conf).
conf_node() {
	local d=$1 port=$2
	shift 2
	{
		echo "port $port"
		echo "bind 127.0.0.1"
		echo "daemonize yes"
		echo "pidfile $d/run/$port.pid"
		echo "logfile $d/log/$port.log"
		echo "dir $d/data/$port"
		echo "save \"\""
		echo "appendonly no"
		# A replica (re)syncs at once, not after the 5 s a diskless master waits for company.
		echo "repl-diskless-sync-delay 0"
		printf '%s\n' "$@"
	} >"$d/conf/$port.conf"
	mkdir -p "$d/data/$port"
	echo "node $port" >>"$d/procs"
}

# The pid of the server on $2 started in DIR $1, if it runs (and is that server).
pid_of() {
	local d=$1 port=$2 pid
	[ -s "$d/run/$port.pid" ] || return 1
	pid=$(cat "$d/run/$port.pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	# redis-server titles itself "redis-server 127.0.0.1:PORT": a recycled pid is not ours.
	tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qE "^redis-server 127\.0\.0\.1:$port( |\$)" || return 1
	echo "$pid"
}

# The directory of the servers the commands below talk to (set by start, restore, stop).
topo=""

# Sets tls_flags to redis-cli's TLS options for a port that speaks only TLS, else to none.
# Only liveness and state are asked: the certificate is not verified (one is expired).
set_tls_flags() {
	tls_flags=()
	if [ -n "$topo" ] && grep -qx "$1" "$topo/tls-ports" 2>/dev/null; then
		tls_flags=(--tls --insecure --cert "$topo/tls/client.crt" --key "$topo/tls/client.key")
	fi
}

# redis-cli against a port of the servers in $topo, over TLS when it speaks only TLS: cli PORT args...
cli() {
	local port=$1 tls_flags
	shift
	set_tls_flags "$port"
	redis-cli -h 127.0.0.1 -p "$port" "${tls_flags[@]}" "$@"
}

# redis-cli against a TLS port with the test CA and client certificate.
tls_cli() {
	local d=$1 port=$2
	shift 2
	redis-cli -h 127.0.0.1 -p "$port" --tls --insecure --cert "$d/tls/client.crt" --key "$d/tls/client.key" "$@"
}

pong() { [ "$("$@" ping 2>/dev/null)" = PONG ]; }

# Whether a port answers PING (NOAUTH counts: the server is up).
answers() { [[ "$(cli "$1" ping 2>/dev/null)" =~ ^(PONG|NOAUTH) ]]; }

# ---------------------------------------------------------------- start

start() {
	local d=$1 owner=$2
	mkdir -p "$d"
	d="$(cd "$d" && pwd)"
	[ -e "$d/procs" ] && stop "$d"
	rm -rf "$d/conf" "$d/run" "$d/log" "$d/data" "$d/sentinel" "$d/tls" "$d/env" "$d/procs" "$d/tls-ports"
	mkdir -p "$d/conf" "$d/run" "$d/log" "$d/data"
	: >"$d/procs"
	topo=$d
	local t0=$SECONDS

	make_certs "$d/tls"
	local tls="$d/tls"

	local ports
	mapfile -t ports < <(free_ports 35)
	[ ${#ports[@]} -eq 35 ] || die "cannot find free ports"
	local tls_plain=${ports[0]} tls_port=${ports[1]} mtls_port=${ports[2]} expired_port=${ports[3]} wrongname_port=${ports[4]}
	local s_master=${ports[5]} s_replica1=${ports[6]} s_replica2=${ports[7]}
	local s_sent=("${ports[8]}" "${ports[9]}" "${ports[10]}")
	local a_master=${ports[11]} a_replica=${ports[12]} a_sent=${ports[13]}
	local c_ports=("${ports[@]:14:6}") c_bus=("${ports[@]:20:6}")
	local t_master=${ports[26]} t_replica=${ports[27]} t_sent=${ports[28]}
	local tc_ports=("${ports[@]:29:3}") tc_bus=("${ports[@]:32:3}")
	# The ports that speak only TLS (cli uses TLS there).
	printf '%s\n' "$mtls_port" "$expired_port" "$wrongname_port" "$t_master" "$t_replica" "$t_sent" \
		"${tc_ports[@]}" >"$d/tls-ports"

	# TLS servers.
	local tls_common=("tls-ca-cert-file $tls/ca.crt" "tls-replication no")
	conf_node "$d" "$tls_plain" "tls-port $tls_port" "tls-cert-file $tls/server.crt" \
		"tls-key-file $tls/server.key" "tls-auth-clients no" "${tls_common[@]}"
	conf_node "$d" "$mtls_port" "port 0" "tls-port $mtls_port" "tls-cert-file $tls/server.crt" \
		"tls-key-file $tls/server.key" "tls-auth-clients yes" "${tls_common[@]}"
	conf_node "$d" "$expired_port" "port 0" "tls-port $expired_port" "tls-cert-file $tls/expired.crt" \
		"tls-key-file $tls/expired.key" "tls-auth-clients no" "${tls_common[@]}"
	conf_node "$d" "$wrongname_port" "port 0" "tls-port $wrongname_port" "tls-cert-file $tls/wrongname.crt" \
		"tls-key-file $tls/wrongname.key" "tls-auth-clients no" "${tls_common[@]}"

	# Sentinel: the first master prefers to be master again (priority 1) after a failback.
	conf_node "$d" "$s_master" "replica-priority 1"
	conf_node "$d" "$s_replica1" "replicaof 127.0.0.1 $s_master"
	conf_node "$d" "$s_replica2" "replicaof 127.0.0.1 $s_master"
	conf_node "$d" "$a_master" "requirepass $auth_master_password" "masterauth $auth_master_password"
	conf_node "$d" "$a_replica" "replicaof 127.0.0.1 $a_master" \
		"requirepass $auth_master_password" "masterauth $auth_master_password"
	mkdir -p "$d/sentinel"
	# Each sentinel is told of the others and of the replicas up front (fixed ids), so
	# none waits for hello messages or INFO rounds to discover them.
	local ids=() i j
	for i in 0 1 2; do ids+=("$(printf '%040x' $((0x10c0 + i)))"); done
	for i in 0 1 2; do
		{
			sentinel_common "$d" "${s_sent[$i]}" "${ids[$i]}" "$s_master" 2
			echo "sentinel known-replica $master_name 127.0.0.1 $s_replica1"
			echo "sentinel known-replica $master_name 127.0.0.1 $s_replica2"
			for j in 0 1 2; do
				[ "$j" = "$i" ] || echo "sentinel known-sentinel $master_name 127.0.0.1 ${s_sent[$j]} ${ids[$j]}"
			done
		} >"$d/conf/${s_sent[$i]}.conf"
		echo "sentinel ${s_sent[$i]}" >>"$d/procs"
	done
	{
		sentinel_common "$d" "$a_sent" "$(printf '%040x' 0x20c0)" "$a_master" 1
		echo "sentinel auth-pass $master_name $auth_master_password"
		echo "sentinel known-replica $master_name 127.0.0.1 $a_replica"
		echo "requirepass $auth_sentinel_password"
	} >"$d/conf/$a_sent.conf"
	echo "sentinel $a_sent" >>"$d/procs"

	# Sentinel over TLS: a master, a replica and a sentinel that speak only TLS (no client
	# certificate asked), replication and the sentinel's links over TLS too.
	local tls_only=("tls-cert-file $tls/server.crt" "tls-key-file $tls/server.key" "tls-ca-cert-file $tls/ca.crt"
		"tls-auth-clients no" "tls-replication yes")
	conf_node "$d" "$t_master" "port 0" "tls-port $t_master" "${tls_only[@]}"
	conf_node "$d" "$t_replica" "port 0" "tls-port $t_replica" "${tls_only[@]}" "replicaof 127.0.0.1 $t_master"
	{
		sentinel_common "$d" "$t_sent" "$(printf '%040x' 0x30c0)" "$t_master" 1 | sed "s/^port .*/port 0\ntls-port $t_sent/"
		printf '%s\n' "${tls_only[@]}"
		echo "sentinel known-replica $master_name 127.0.0.1 $t_replica"
	} >"$d/conf/$t_sent.conf"
	echo "sentinel $t_sent" >>"$d/procs"

	# Cluster nodes, each with its bus on a port of its own. A replica counts as in sync
	# (CLUSTER SLOTS lists it) once its offset moved: the master pings it every second.
	for i in 0 1 2 3 4 5; do
		conf_node "$d" "${c_ports[$i]}" "cluster-enabled yes" "cluster-port ${c_bus[$i]}" \
			"cluster-config-file $d/data/${c_ports[$i]}/nodes.conf" \
			"cluster-node-timeout $cluster_node_timeout_ms" "cluster-replica-validity-factor 0" \
			"repl-ping-replica-period 1"
	done
	# A cluster over TLS (clients, bus and replication): three masters, no replicas.
	for i in 0 1 2; do
		conf_node "$d" "${tc_ports[$i]}" "port 0" "tls-port ${tc_ports[$i]}" "${tls_only[@]}" "tls-cluster yes" \
			"cluster-enabled yes" "cluster-port ${tc_bus[$i]}" \
			"cluster-config-file $d/data/${tc_ports[$i]}/nodes.conf" \
			"cluster-node-timeout $cluster_node_timeout_ms"
	done

	local kind port
	while read -r kind port; do
		launch "$kind" "$d/conf/$port.conf" || die "redis-server on $port did not start: $(tail -n 5 "$d/log/$port.log" 2>/dev/null)"
	done <"$d/procs"
	[ -n "$owner" ] && watch_owner "$d" "$owner"

	wait_for "the TLS server on $tls_port" 20 pong tls_cli "$d" "$tls_port" || return 1
	while read -r kind port; do
		wait_for "the server on $port" 20 answers "$port" || return 1
	done <"$d/procs"
	local nodes=() tls_flags
	for port in "${c_ports[@]}"; do nodes+=("127.0.0.1:$port"); done
	timeout 60 redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$d/log/cluster-create.log" 2>&1 &
	local create=$!
	nodes=()
	for port in "${tc_ports[@]}"; do nodes+=("127.0.0.1:$port"); done
	set_tls_flags "${tc_ports[0]}"
	timeout 60 redis-cli "${tls_flags[@]}" --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$d/log/cluster-tls-create.log" 2>&1 \
		|| die "redis-cli --cluster create (TLS) failed: $(tail -n 5 "$d/log/cluster-tls-create.log")"
	wait "$create" || die "redis-cli --cluster create failed: $(tail -n 5 "$d/log/cluster-create.log")"

	{
		echo "export LOCK_TEST_TOPOLOGY_DIR=$d"
		echo "export LOCK_TEST_TOPOLOGY_SCRIPT=$self"
		echo "export LOCK_TEST_TLS_DIR=$tls"
		echo "export LOCK_TEST_TLS_CA=$tls/ca.crt"
		echo "export LOCK_TEST_TLS_OTHER_CA=$tls/other-ca.crt"
		echo "export LOCK_TEST_TLS_CLIENT_CERT=$tls/client.crt"
		echo "export LOCK_TEST_TLS_CLIENT_KEY=$tls/client.key"
		echo "export LOCK_TEST_TLS_OTHER_CLIENT_CERT=$tls/other-client.crt"
		echo "export LOCK_TEST_TLS_OTHER_CLIENT_KEY=$tls/other-client.key"
		echo "export LOCK_TEST_REDIS_TLS_PORT=$tls_port"
		echo "export LOCK_TEST_REDIS_TLS_PLAIN_PORT=$tls_plain"
		echo "export LOCK_TEST_REDIS_MTLS_PORT=$mtls_port"
		echo "export LOCK_TEST_REDIS_TLS_EXPIRED_PORT=$expired_port"
		echo "export LOCK_TEST_REDIS_TLS_WRONGNAME_PORT=$wrongname_port"
		echo "export LOCK_TEST_SENTINEL_MASTER_NAME=$master_name"
		echo "export LOCK_TEST_SENTINEL_PORTS=$(IFS=,; echo "${s_sent[*]}")"
		echo "export LOCK_TEST_SENTINEL_MASTER_PORT=$s_master"
		echo "export LOCK_TEST_SENTINEL_REPLICA_PORTS=$s_replica1,$s_replica2"
		echo "export LOCK_TEST_SENTINEL_DOWN_AFTER_MS=$down_after_ms"
		echo "export LOCK_TEST_SENTINEL_FAILOVER_TIMEOUT_MS=$failover_timeout_ms"
		echo "export LOCK_TEST_SENTINEL_AUTH_PORTS=$a_sent"
		echo "export LOCK_TEST_SENTINEL_AUTH_PASSWORD=$auth_sentinel_password"
		echo "export LOCK_TEST_SENTINEL_AUTH_MASTER_PORT=$a_master"
		echo "export LOCK_TEST_SENTINEL_AUTH_REPLICA_PORTS=$a_replica"
		echo "export LOCK_TEST_SENTINEL_AUTH_MASTER_PASSWORD=$auth_master_password"
		echo "export LOCK_TEST_SENTINEL_TLS_PORTS=$t_sent"
		echo "export LOCK_TEST_SENTINEL_TLS_MASTER_PORT=$t_master"
		echo "export LOCK_TEST_SENTINEL_TLS_REPLICA_PORTS=$t_replica"
		echo "export LOCK_TEST_CLUSTER_PORTS=$(IFS=,; echo "${c_ports[*]}")"
		echo "export LOCK_TEST_CLUSTER_TLS_PORTS=$(IFS=,; echo "${tc_ports[*]}")"
		echo "export LOCK_TEST_CLUSTER_NODE_TIMEOUT_MS=$cluster_node_timeout_ms"
	} >"$d/env.tmp"
	# restore reads the layout from the env file; it also waits until everything is ready.
	mv "$d/env.tmp" "$d/env.layout"
	restore "$d" || return 1
	mv "$d/env.layout" "$d/env"
	echo "redis-topology: ready in $((SECONDS - t0)) s; env in $d/env"
}

# The lines every sentinel config shares: sentinel_common DIR PORT ID MASTER-PORT QUORUM.
sentinel_common() {
	local d=$1 port=$2 id=$3 master=$4 quorum=$5
	echo "port $port"
	echo "bind 127.0.0.1"
	echo "daemonize yes"
	echo "pidfile $d/run/$port.pid"
	echo "logfile $d/log/$port.log"
	echo "dir $d/sentinel"
	echo "sentinel myid $id"
	echo "sentinel monitor $master_name 127.0.0.1 $master $quorum"
	echo "sentinel down-after-milliseconds $master_name $down_after_ms"
	echo "sentinel failover-timeout $master_name $failover_timeout_ms"
	echo "sentinel parallel-syncs $master_name 2"
}

# Stops everything in DIR once process $2 is gone (a test run killed without its trap).
watch_owner() {
	local d=$1 owner=$2
	setsid bash -c '
		while kill -0 "$1" 2>/dev/null && [ -e "$2/procs" ]; do sleep 1; done
		[ -e "$2/procs" ] && exec "$3" stop "$2"
	' watcher "$owner" "$d" "$self" </dev/null >/dev/null 2>&1 &
	echo $! >"$d/run/watcher.pid"
}

# ---------------------------------------------------------------- restore

# Reads a var of the layout: layout DIR NAME.
layout() {
	local f=$1/env
	[ -e "$1/env.layout" ] && f=$1/env.layout
	sed -n "s/^export $2=//p" "$f"
}

# Wakes frozen servers and starts again those that died (a killed data node comes back as a replica of $2).
revive() {
	local d=$1 master=$2 kind port pid
	while read -r kind port; do
		if pid=$(pid_of "$d" "$port"); then
			kill -CONT "$pid" 2>/dev/null || true
		elif [ "$kind" = sentinel ]; then
			launch sentinel "$d/conf/$port.conf"
		elif [ -n "$master" ] && [[ ",$3," == *",$port,"* ]] && [ "$port" != "$master" ]; then
			launch node "$d/conf/$port.conf" --replicaof 127.0.0.1 "$master"
		else
			launch node "$d/conf/$port.conf"
		fi
	done <"$d/procs"
}

# The port of the master the sentinel on $1 names (it answers for $2 credentials).
sentinel_master_port() {
	cli "$1" "${@:2}" sentinel get-master-addr-by-name "$master_name" 2>/dev/null | sed -n 2p
}

# Whether a sentinel group is healthy: every sentinel names master $2, sees no failure or
# failover, knows $3 replicas and $4 other sentinels; the master has $3 replicas online.
sentinel_healthy() {
	local d=$1 master=$2 replicas=$3 others=$4 sentinels=$5 auth=$6 s info
	local sauth=() mauth=()
	if [ -n "$auth" ]; then
		sauth=(--no-auth-warning -a "$auth_sentinel_password")
		mauth=(--no-auth-warning -a "$auth_master_password")
	fi
	for s in ${sentinels//,/ }; do
		[ "$(sentinel_master_port "$s" "${sauth[@]}")" = "$master" ] || return 1
		info=$(cli "$s" "${sauth[@]}" sentinel master "$master_name" | paste - - | tr -d '\r')
		grep -qx $'flags\tmaster' <<<"$info" || return 1
		grep -qx $'num-slaves\t'"$replicas" <<<"$info" || return 1
		grep -qx $'num-other-sentinels\t'"$others" <<<"$info" || return 1
		# Every replica the sentinel knows is up and points at the master.
		if cli "$s" "${sauth[@]}" sentinel replicas "$master_name" | tr -d '\r' | grep -qE 's_down|disconnected'; then
			return 1
		fi
	done
	info=$(cli "$master" "${mauth[@]}" info replication | tr -d '\r')
	grep -qx 'role:master' <<<"$info" || return 1
	[ "$(grep -c '^slave[0-9]*:.*state=online' <<<"$info")" = "$replicas" ]
}

# Fails the group back to its first master (priority 1: the one a failover picks) and waits until it is healthy.
restore_sentinel() {
	local d=$1 master=$2 replicas=$3 sentinels=$4 auth=$5 others=$6
	local sauth=() current s
	[ -n "$auth" ] && sauth=(--no-auth-warning -a "$auth_sentinel_password")
	local n_replicas
	n_replicas=$(tr ',' '\n' <<<"$replicas" | grep -c .)
	# Sentinels refresh what they know of replicas every 10 s and demote a returning old
	# master after 4 publish periods (8 s) by default: every second, and after 2 s, here,
	# so that tests do not wait for them. A stalled sentinel's tilt lasts 5 s, not 30.
	for s in ${sentinels//,/ }; do
		wait_for "sentinel $s" 20 pong cli "$s" "${sauth[@]}"
		cli "$s" "${sauth[@]}" sentinel debug info-period 1000 publish-period 500 tilt-period 5000 >/dev/null
	done
	local deadline=$((SECONDS + 60))
	while ! sentinel_healthy "$d" "$master" "$n_replicas" "$others" "$sentinels" "$auth"; do
		((SECONDS < deadline)) || { echo "redis-topology: the sentinel group of $master is not healthy after 60 s" >&2; return 1; }
		s=${sentinels%%,*}
		current=$(sentinel_master_port "$s" "${sauth[@]}")
		if [ -n "$current" ] && [ "$current" != "$master" ]; then
			# Fail back once the sentinel sees the first master as a replica in sync (a
			# failover picks it then: priority 1), and no failover is in progress.
			if cli "$s" "${sauth[@]}" sentinel replicas "$master_name" | tr -d '\r' | paste - - \
				| awk -v p="$master" '$1 == "port" { ours = ($2 == p) } ours && $1 == "master-link-status" && $2 == "ok" { found = 1 } END { exit !found }'; then
				cli "$s" "${sauth[@]}" sentinel failover "$master_name" >/dev/null 2>&1 || true
				sleep 0.5
			fi
		fi
		sleep 0.1
	done
}

# Whether every node of cluster $1 (its ports) says cluster_state:ok, knows them all,
# 3 of them masters, none failing or out of sync, and sees no slot left importing or migrating.
cluster_healthy() {
	local port nodes n
	n=$(tr ',' '\n' <<<"$1" | grep -c .)
	for port in ${1//,/ }; do
		cli "$port" cluster info | tr -d '\r' | grep -qx 'cluster_state:ok' || return 1
		nodes=$(cli "$port" cluster nodes | tr -d '\r')
		[ "$(grep -c . <<<"$nodes")" = "$n" ] || return 1
		grep -qE 'fail|handshake|noaddr|disconnected|->-|-<-' <<<"$nodes" && return 1
		[ "$(awk '$3 ~ /master/' <<<"$nodes" | grep -c .)" = 3 ] || return 1
		# Every replica in sync as this node has heard (CLUSTER SLOTS lists only those).
		[ "$(cli "$port" cluster shards | tr -d '\r' | grep -A1 -x health | grep -cx online)" = "$n" ] || return 1
	done
	return 0
}

# Closes half-migrated slots and waits until the cluster is healthy.
restore_cluster() {
	local ports=$1 first=${1%%,*}
	local deadline=$((SECONDS + 60))
	while ! cluster_healthy "$ports"; do
		((SECONDS < deadline)) || { echo "redis-topology: the cluster is not healthy after 60 s" >&2; cli "$first" cluster nodes >&2; return 1; }
		if cli "$first" cluster nodes | grep -qE -- '->-|-<-'; then
			local tls_flags
			set_tls_flags "$first"
			timeout 30 redis-cli "${tls_flags[@]}" --cluster fix "127.0.0.1:$first" --cluster-yes >/dev/null 2>&1 || true
		fi
		sleep 0.1
	done
}

restore() {
	local d
	d="$(cd "$1" && pwd)"
	[ -e "$d/procs" ] || die "nothing was started in $d"
	topo=$d
	local s_master s_replicas s_sentinels a_master a_replicas a_sentinels c_ports current
	s_master=$(layout "$d" LOCK_TEST_SENTINEL_MASTER_PORT)
	s_replicas=$(layout "$d" LOCK_TEST_SENTINEL_REPLICA_PORTS)
	s_sentinels=$(layout "$d" LOCK_TEST_SENTINEL_PORTS)
	a_master=$(layout "$d" LOCK_TEST_SENTINEL_AUTH_MASTER_PORT)
	a_replicas=$(layout "$d" LOCK_TEST_SENTINEL_AUTH_REPLICA_PORTS)
	a_sentinels=$(layout "$d" LOCK_TEST_SENTINEL_AUTH_PORTS)
	c_ports=$(layout "$d" LOCK_TEST_CLUSTER_PORTS)
	# A data node that died comes back as a replica of the master the sentinels name now.
	current=""
	for s in ${s_sentinels//,/ }; do
		current=$(sentinel_master_port "$s") && [ -n "$current" ] && pid_of "$d" "$current" >/dev/null && break
		current=""
	done
	revive "$d" "${current:-$s_master}" "$s_master,$s_replicas"
	restore_sentinel "$d" "$s_master" "$s_replicas" "$s_sentinels" "" 2 &
	local p1=$!
	restore_sentinel "$d" "$a_master" "$a_replicas" "$a_sentinels" auth 0 &
	local p2=$!
	restore_cluster "$c_ports" &
	local p3=$!
	restore_sentinel "$d" "$(layout "$d" LOCK_TEST_SENTINEL_TLS_MASTER_PORT)" "$(layout "$d" LOCK_TEST_SENTINEL_TLS_REPLICA_PORTS)" \
		"$(layout "$d" LOCK_TEST_SENTINEL_TLS_PORTS)" "" 0 &
	local p4=$!
	restore_cluster "$(layout "$d" LOCK_TEST_CLUSTER_TLS_PORTS)" &
	local p5=$!
	local status=0 p
	for p in "$p1" "$p2" "$p3" "$p4" "$p5"; do
		wait "$p" || status=1
	done
	return $status
}

# ---------------------------------------------------------------- stop

stop() {
	local d
	[ -d "$1" ] || return 0
	d="$(cd "$1" && pwd)"
	[ -e "$d/procs" ] || return 0
	local kind port pid pids=()
	if [ -s "$d/run/watcher.pid" ]; then
		pid=$(cat "$d/run/watcher.pid")
		if [ "$pid" != "$$" ] && grep -qa watcher "/proc/$pid/cmdline" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
		fi
	fi
	while read -r kind port; do
		if pid=$(pid_of "$d" "$port"); then
			# A frozen server would not act on SIGTERM until woken: kill it outright.
			kill -KILL "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done <"$d/procs"
	for pid in "${pids[@]}"; do
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
	done
	rm -f "$d/procs" "$d/env"
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
owner=""
while [ $# -gt 0 ]; do
	case "$1" in
		--owner) owner=$2; shift 2 ;;
		*) usage ;;
	esac
done
case "$cmd" in
	start)
		# A start that fails half-way stops what it started, and tries again on other
		# ports (another process may have taken one of the free ports meanwhile).
		trap 'stop "$dir"' EXIT
		for attempt in 1 2 3; do
			(start "$dir" "$owner") && break
			stop "$dir"
			[ "$attempt" = 3 ] && exit 1
			echo "redis-topology: start failed, trying again on other ports" >&2
		done
		trap - EXIT
		;;
	restore) restore "$dir" ;;
	stop) stop "$dir" ;;
	*) usage ;;
esac
