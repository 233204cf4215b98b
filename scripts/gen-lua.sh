#!/usr/bin/env bash
# Makes ext/core/lkc_redis_lua.h, the Redis store's scripts as C strings, from ext/core/lua:
# one script per ext/core/lua/NAME.lua (the C string lkc_rs_NAME_lua), the fragments they
# share in ext/core/lua/lib. In a script, a line "--@include F.lua" stands for lib/F.lua,
# and @NAME@ for the value of "#define NAME <number>" in ext/core/lkc_redis_lua_const.h.
# Comment lines and blank lines are left out of what is sent to Redis.
#
# Every script declares each key it touches (Redis Cluster and the EVAL contract ask for
# it): its first code line "--@keys lock NAME... [+w]" names them, in the order the C code
# sends them as KEYS, and becomes the Lua locals NAME = KEYS[i]; "+w" says wake lists
# (P{R}:w:<ticket>) may follow, which the prologue collects in the set "declared". The
# header gets each script's key suffixes, lkc_rs_NAME_keys, for the C code to build. A
# script may name no key but through these: --check refuses one that derives a key
# ("lock .." anywhere but in lib/core.lua's wake list accessor, marked "-- the accessor").
#
#   scripts/gen-lua.sh              rewrites ext/core/lkc_redis_lua.h
#   scripts/gen-lua.sh --check      fails when the committed header is not what it would write
#   scripts/gen-lua.sh --print NAME prints script NAME as Redis gets it, ready for
#                                   redis-cli --eval FILE KEYS... , ARG...
#   scripts/gen-lua.sh --keys NAME LOCKKEY [TICKET...]
#                                   prints the KEYS script NAME takes for LOCKKEY (and the
#                                   wake lists of the tickets), one per line
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/.." && pwd)"
lua="$root/ext/core/lua"
consts="$root/ext/core/lkc_redis_lua_const.h"
header="$root/ext/core/lkc_redis_lua.h"
# The keys a --@keys line may name: the Lua local, then the suffix of the lock key it is.
keys='rd::r q::q qd::qd hd::h ws::ws pk::p fk::f tk::t mb::m wl::wl fw::fw fl::fl'

# Prints the script file $1 as sent: includes resolved, constants replaced, comments dropped.
resolve() {
	awk -v script="$1" -v lib="$lua/lib" -v consts="$consts" -v table="$keys" '
		function fail(msg) {
			print "gen-lua: " msg > "/dev/stderr"
			exit 1
		}
		function emit(file, depth,   line, n, name) {
			if (depth > 4) fail(file ": includes nest too deep")
			while ((n = (getline line < file)) > 0) {
				if (line ~ /^[ \t]*--@include /) {
					name = line
					sub(/^[ \t]*--@include /, "", name)
					if (name !~ /^[a-z_]+\.lua$/) fail(file ": bad include \"" name "\"")
					emit(lib "/" name, depth + 1)
					continue
				}
				if (line ~ /^--@keys /) {
					prologue(file, line)
					continue
				}
				if (line ~ /lock \.\./ && line !~ /-- the accessor$/) fail(file ": derives a key from the lock key (declare it in --@keys): " line)
				if (line ~ /^[ \t]*--\[/) fail(file ": block comments are not supported, use -- lines")
				if (line ~ /^[ \t]*(--.*)?$/) continue
				while (match(line, /@[A-Z0-9_]+@/)) {
					name = substr(line, RSTART + 1, RLENGTH - 2)
					if (!(name in value)) fail(file ": @" name "@ is not a number #defined in " consts)
					line = substr(line, 1, RSTART - 1) value[name] substr(line, RSTART + RLENGTH)
				}
				print line
			}
			if (n < 0) fail(file ": cannot be read")
			close(file)
		}
		# The locals of a --@keys line, KEYS[1] onwards, and the declared wake lists after them.
		function prologue(file, line,   n, i, names, vals, w) {
			n = split(line, f, " ")
			w = f[n] == "+w"
			if (w) n--
			if (n < 2 || f[2] != "lock") fail(file ": --@keys must begin with lock")
			names = ""
			vals = ""
			for (i = 2; i <= n; i++) {
				if (!(f[i] in suffix)) fail(file ": --@keys: no key called " f[i])
				names = names (i > 2 ? ", " : "") f[i]
				vals = vals (i > 2 ? ", " : "") "KEYS[" (i - 1) "]"
			}
			print "local " names " = " vals
			if (w) {
				print "local declared = {}"
				print "for i = " n ", #KEYS do declared[string.sub(KEYS[i], #lock + 4)] = true end"
			}
		}
		BEGIN {
			suffix["lock"] = ""
			split(table, kv, " ")
			for (i in kv) {
				split(kv[i], pair, ":")
				suffix[pair[1]] = substr(kv[i], length(pair[1]) + 2)
			}
			while ((getline line < consts) > 0) {
				if (line ~ /^#define [A-Z0-9_]+ [0-9]+$/) {
					split(line, f, " ")
					value[f[2]] = f[3]
				}
			}
			emit(script, 0)
		}'
}

# Prints the suffixes of the lock key that script $1 takes as KEYS after it, one per line,
# then "+w" when wake lists may follow them.
suffixes_of() {
	local line
	line="$(grep -m1 '^--@keys ' "$1")" || { echo "gen-lua: $1 has no --@keys line" >&2; exit 1; }
	printf '%s\n' "$line" | awk -v table="$keys" '
		BEGIN {
			split(table, kv, " ")
			for (i in kv) {
				split(kv[i], pair, ":")
				suffix[pair[1]] = substr(kv[i], length(pair[1]) + 2)
			}
		}
		{
			for (i = 3; i <= NF; i++) print ($i == "+w" ? "+w" : suffix[$i])
		}'
}

# Prints script $1's KEYS after the lock key as the C array lkc_rs_$2_keys (NULL-terminated)
# and whether wake lists may follow them (lkc_rs_$2_lists).
keys_of() {
	local out="" lists=0 suffix
	while IFS= read -r suffix; do
		if [ "$suffix" = "+w" ]; then
			lists=1
		else
			out="$out\"$suffix\", "
		fi
	done < <(suffixes_of "$1")
	printf 'static const char *const lkc_rs_%s_keys[] = { %sNULL };\n' "$2" "$out"
	printf 'static const int lkc_rs_%s_lists = %d;\n' "$2" "$lists"
}

# Prints the header: each script as a C string literal, a line of the script per line.
generate() {
	cat <<'EOF'
/*
 * Generated by scripts/gen-lua.sh from the scripts in ext/core/lua and the
 * constants of lkc_redis_lua_const.h: do not edit, edit them and run it again.
 */
#ifndef LKC_REDIS_LUA_H
#define LKC_REDIS_LUA_H
EOF
	local f name body
	for f in "$lua"/*.lua; do
		name="$(basename "$f" .lua)"
		body="$(resolve "$f")"
		printf '\n/* ext/core/lua/%s.lua */\nstatic const char lkc_rs_%s_lua[] =\n' "$name" "$name"
		printf '%s\n' "$body" | awk '
			{
				gsub(/\\/, "&&")
				gsub(/"/, "\\\"")
				gsub(/\t/, "\\t")
				if (NR > 1) print prev
				prev = "\t\"" $0 "\\n\""
			}
			END { print prev ";" }'
		keys_of "$f" "$name"
	done
	printf '\n/* Every script, as X(NAME). */\n#define LKC_RS_EACH_SCRIPT(X)'
	for f in "$lua"/*.lua; do
		printf ' X(%s)' "$(basename "$f" .lua)"
	done
	printf '\n\n#endif\n'
}

case "${1:-}" in
	--print)
		name="${2:-}"
		if ! [[ "$name" =~ ^[a-z_]+$ ]] || [ ! -f "$lua/$name.lua" ]; then
			echo "gen-lua: no script \"$name\"; the scripts: $(cd "$lua" && ls -- *.lua | sed 's/\.lua$//' | paste -sd ' ')" >&2
			exit 2
		fi
		resolve "$lua/$name.lua"
		;;
	--keys)
		name="${2:-}"
		if ! [[ "$name" =~ ^[a-z_]+$ ]] || [ ! -f "$lua/$name.lua" ] || [ $# -lt 3 ]; then
			echo "usage: scripts/gen-lua.sh --keys NAME LOCKKEY [TICKET...]" >&2
			exit 2
		fi
		lock_key="$3"
		shift 3
		printf '%s\n' "$lock_key"
		suffixes_of "$lua/$name.lua" | while IFS= read -r suffix; do
			[ "$suffix" = "+w" ] || printf '%s%s\n' "$lock_key" "$suffix"
		done
		for t in "$@"; do
			printf '%s:w:%s\n' "$lock_key" "$t"
		done
		;;
	--check)
		new="$(mktemp)"
		trap 'rm -f "$new"' EXIT
		generate >"$new"
		if ! cmp -s "$new" "$header"; then
			echo "gen-lua: ext/core/lkc_redis_lua.h is stale: run scripts/gen-lua.sh" >&2
			diff "$header" "$new" >&2 || true
			exit 1
		fi
		;;
	"")
		new="$(mktemp)"
		trap 'rm -f "$new"' EXIT
		generate >"$new"
		cp "$new" "$header"
		;;
	*)
		echo "usage: scripts/gen-lua.sh [--check | --print NAME | --keys NAME LOCKKEY [TICKET...]]" >&2
		exit 2
		;;
esac
