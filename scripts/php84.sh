#!/usr/bin/env bash
# A Debian 13 (trixie) root with PHP 8.4 and GCC 14, for building and testing the extension
# on the next PHP beside the host's PHP 8.2. The root lives outside the work tree (one per
# machine, reused by every checkout) and is made once, with debootstrap from the Debian
# mirror the host's apt uses; a stamp written last marks it complete.
#
#   scripts/php84.sh root                 makes the root when missing or incomplete; prints its path
#   scripts/php84.sh build                copies the work tree's sources into the root and builds
#                                         them there with scripts/build.sh --dev (warnings are errors)
#   scripts/php84.sh run CMD [ARG...]     runs CMD in the root, in the copy of the work tree
#
# The copy sits in the root at the work tree's own path, and the work tree's .test-run is
# mounted over the copy's: the servers' sockets, certificates and paths that scripts/test.sh
# exports in LOCK_TEST_* mean the same inside as outside. Loopback TCP reaches the host's
# servers as it is (a chroot shares the network). The mounts (proc, sys, dev, .test-run,
# adapters/.vendor) are made in a mount namespace of the command's own (unshare -m): the host
# never sees them, and they go with the last process of the namespace however the command
# ends, killed included.
#
#   LOCK_PHP84_ROOT     where the root is (default /var/cache/lock/trixie)
#   LOCK_PHP84_MIRROR   the Debian mirror (default: the host's, from /etc/apt/sources.list*)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
base="${LOCK_PHP84_ROOT:-/var/cache/lock/trixie}"
stamp="$base/.lock-php84-complete"

# What the build and the phpt suite need in the root: the toolchain and client libraries, the
# clients the tests call (psql, mariadb, redis-cli), the servers some tests start of their own
# (redis-server, memcached, PostgreSQL through scripts/pg-test-server.sh, MariaDB through
# scripts/my-test-server.sh, pgbouncer, php-fpm), and the tools they run (setpriv, unshare, ipcs:
# util-linux; timeout: coreutils; ip: iproute2); and what the adapters' suites of framework
# versions that need a newer PHP than the host's load (PHPUnit: dom, xml; Laravel: mbstring).
packages=(
	build-essential pkg-config php8.4-cli php8.4-dev libhiredis-dev libssl-dev libpq-dev
	libmariadb-dev libmemcached-dev
	redis-server redis-tools memcached postgresql postgresql-client mariadb-server mariadb-client
	pgbouncer php8.4-pgsql php8.4-fpm openssl procps iproute2 php8.4-mbstring php8.4-xml
)

if ((EUID != 0)); then
	# debootstrap, chroot and mount need root.
	command -v sudo >/dev/null 2>&1 || { echo "php84: needs root (or sudo)" >&2; exit 1; }
	exec sudo --preserve-env "$0" "$@"
fi

# The mirror of the host's Debian archive: the first URI of a source for this release's suite.
host_mirror() {
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(
		{
			sed -n "s|^deb \(\[[^]]*\] \)\?\([a-z]*://[^ ]*\) $codename .*|\2|p" /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
			for f in /etc/apt/sources.list.d/*.sources; do
				[ -f "$f" ] || continue
				# deb822: a paragraph's URIs when its Suites name this release.
				awk -v c="$codename" 'BEGIN { RS = ""; FS = "\n" } {
					u = ""; s = 0
					for (i = 1; i <= NF; i++) {
						if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, a, " "); u = a[1] }
						if ($i ~ /^Suites:/ && (" " $i " ") ~ (" " c " ")) s = 1
					}
					if (s && u != "") print u
				}' "$f"
			done
		} | head -n 1
	)
	echo "${uri:-http://deb.debian.org/debian}"
}

# Runs a command in the root (at $dir), with proc, sys and dev mounted in a mount namespace of its own.
in_root() {
	local dir=$1
	shift
	unshare --mount --propagation private -- bash -c '
		set -e
		dir=$1
		shift
		mount -t proc proc "$dir/proc"
		mount --rbind /sys "$dir/sys"
		mount --rbind /dev "$dir/dev"
		exec chroot "$dir" "$@"
	' in-root "$dir" "$@"
}

# Makes the root at $base when its stamp is missing; installs packages the stamp does not list.
make_root() {
	local want mirror start
	want="${packages[*]}"
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
	mkdir -p "$(dirname "$base")"
	exec 9>"$base.lock"
	# Another run making it at the same time: wait for it, then look again.
	flock 9
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		exec 9>&-
		return 0
	fi
	start=$SECONDS
	mirror="${LOCK_PHP84_MIRROR:-$(host_mirror)}"
	if [ ! -f "$stamp" ]; then
		# An incomplete root (a run killed while making it) is made again from nothing. Its
		# mounts were in namespaces of their own: none of them is on this path.
		rm -rf "$base"
		command -v debootstrap >/dev/null || { echo "php84: debootstrap not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
		echo "php84: making the Debian 13 root in $base from $mirror" >&2
		unshare --mount --propagation private -- \
			debootstrap --variant=minbase --components=main trixie "$base" "$mirror" >&2
		echo "deb $mirror trixie main" >"$base/etc/apt/sources.list"
		# Exit code 101 keeps the packages' services (redis, PostgreSQL, MariaDB, memcached) from
		# starting in the root: the tests start their own.
		printf '#!/bin/sh\nexit 101\n' >"$base/usr/sbin/policy-rc.d"
		chmod 755 "$base/usr/sbin/policy-rc.d"
	fi
	in_root "$base" env DEBIAN_FRONTEND=noninteractive apt-get -q update >&2
	in_root "$base" env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install "${packages[@]}" >&2
	in_root "$base" apt-get clean
	echo "$want" >"$stamp"
	echo "php84: root ready in $((SECONDS - start)) s" >&2
	exec 9>&-
}

# The copy of the work tree in the root: at the work tree's own path.
dest="$base$src"

# Brings the copy up to date with the work tree's files (git's tracked and untracked, not its
# ignored ones: build outputs of the host stay out, the copy's own stay in), removes the files
# the work tree no longer has, and builds it.
build() {
	local list old
	make_root
	git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "php84: $src is not a git work tree (its files are copied by git ls-files)" >&2; exit 1; }
	mkdir -p "$dest/.test-run"
	list=$(git -C "$src" ls-files --cached --others --exclude-standard | while IFS= read -r f; do
		[ -e "$src/$f" ] && printf '%s\n' "$f"
	done | sort)
	old="$dest/.lock-php84-files"
	if [ -f "$old" ]; then
		comm -23 "$old" <(echo "$list") | while IFS= read -r f; do rm -f "$dest/$f"; done
	fi
	# By content, the copy's times left alone when it is the same: make rebuilds what changed, whatever its time in the work tree.
	rsync -rlp --checksum --files-from=<(echo "$list") "$src/" "$dest/"
	echo "$list" >"$old"
	run bash scripts/build.sh --dev
}

# Runs a command in the root, in the copy, with the work tree's .test-run and adapters/.vendor
# (the adapters' Composer installs, git-ignored and so not copied) mounted over the copy's, a
# /tmp of its own, and only the environment the tests read (LOCK_*, run-tests.php's variables)
# passed on.
run() {
	local vars=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
	local name
	while IFS= read -r name; do
		case "$name" in
			LOCK_* | TEST_PHP_* | NO_INTERACTION | REPORT_EXIT_STATUS | USE_ZEND_ALLOC | TERM) vars+=("$name=${!name}") ;;
		esac
	done < <(compgen -e)
	[ -f "$stamp" ] || { echo "php84: no root in $base (scripts/php84.sh root makes it)" >&2; exit 1; }
	[ -d "$dest" ] || { echo "php84: no copy of $src in the root (scripts/php84.sh build makes it)" >&2; exit 1; }
	exec unshare --mount --propagation private -- bash -c '
		set -e
		base=$1 src=$2
		shift 2
		mount -t proc proc "$base/proc"
		mount --rbind /sys "$base/sys"
		mount --rbind /dev "$base/dev"
		# (A work tree under /tmp has its copy there: that /tmp stays.)
		case "$src" in /tmp | /tmp/*) ;; *) mount -t tmpfs -o mode=1777 tmpfs "$base/tmp" ;; esac
		if [ -d "$src/.test-run" ]; then mount --bind "$src/.test-run" "$base$src/.test-run"; fi
		if [ -d "$src/adapters/.vendor" ]; then
			mkdir -p "$base$src/adapters/.vendor"
			mount --bind "$src/adapters/.vendor" "$base$src/adapters/.vendor"
		fi
		exec chroot "$base" /usr/bin/env -i "$@"
	' php84-run "$base" "$src" "${vars[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' php84-cd "$src" "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
	root)
		make_root
		echo "$base"
		;;
	build) build ;;
	run)
		[ $# -gt 0 ] || { echo "usage: $0 run CMD [ARG...]" >&2; exit 2; }
		run "$@"
		;;
	*) echo "usage: $0 root|build|run CMD..." >&2; exit 2 ;;
esac
