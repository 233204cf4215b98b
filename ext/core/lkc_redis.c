/*
 * The Redis store: a resource's lock is one key holding the owner token, with
 * a TTL. Scripts compare the token before they delete or extend, so a hold
 * that expired and was taken by somebody else is never touched.
 *
 * Waiting. Every key of a resource shares its braced hash tag (lkc_rs_key), so
 * one script may touch them all, also on a cluster:
 *   P{R}            the lock: the holder's token
 *   P{R}:q          the queue: a LIST of waiters' tokens in arrival order
 *   P{R}:qd         a HASH token -> "deadline:ttl": the waiter's liveness
 *                   deadline (ms of the server's TIME) and the TTL it asked for
 *   P{R}:ws         the watcher: the waiter that looks at hand-offs soon
 *   P{R}:w:TOKEN    a waiter's wake LIST, on which it sleeps in BLPOP
 * A single attempt is a plain SET NX and never touches the queue. A waiter
 * runs the wait script (take the lock if it is ours or free, else join the
 * queue and learn how long to sleep), then sleeps in BLPOP on its wake list
 * for at most the holder's PTTL (and LKC_RS_WAIT_CAP), so a holder that dies
 * is taken over when its TTL runs out and a lost wake-up costs at most that
 * bound. It blocks its own connection: no second connection, and no command
 * at all beyond the release script's one LLEN while nobody waits.
 *
 * Wake messages: "y<ms>" the lock was handed to you at server time ms (fair
 * mode); "w" watch that hand-off (below); "c" check again now; "f" the lock
 * is free (unfair mode).
 *
 * Fair mode (the default): whoever frees the lock (release, force_release, or
 * a waiter that finds it free) hands it in the same script to the first live
 * waiter H: SET lock H with H's own TTL and push "y" to H, whose BLPOP reply
 * is then its acquisition, without a further round trip. A newcomer thus
 * finds the lock taken while others wait. A waiter blocked in BLPOP pops the
 * "y" at once, so a "y" still unread after LKC_RS_GRACE means H died (or
 * stalled that long outside its sleep): the watcher, told by a "w", sleeps
 * the grace and then breaks the lock and hands it on. One watcher serves
 * every hand-off of its watch, so a busy queue does not wake a second
 * process per hand-off. A waiter that died therefore costs the others
 * LKC_RS_GRACE (and a round trip) when it reaches the head, and nothing once
 * its liveness deadline has passed (it is dropped unseen); should the watcher
 * die too, the others' own sleeps bound it by LKC_RS_WAIT_CAP. A newcomer
 * can still slip in while the lock is free with waiters queued: only until
 * they see a holder's TTL run out, or a dead waiter's grace end.
 *
 * Unfair mode (fair = 0): release deletes the lock and wakes the first live
 * waiter, which takes the lock if it is still free (leaving the queue) and
 * stays queued otherwise; a newcomer's SET NX may win. A waiter that died at
 * the head costs the others at most LKC_RS_WAIT_CAP there, since each waiter
 * takes a free lock when its own sleep ends. Stores of both modes may share a
 * resource safely; only the order is then not promised.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#define LKC_RS_STR2(x) #x
#define LKC_RS_STR(x) LKC_RS_STR2(x)

/* Idle persistent connections kept per process; more are closed. */
#define LKC_RS_POOL_MAX 64
/* How long a waiter handed the lock has to pick it up (ms): what a waiter that died costs the others. */
#define LKC_RS_GRACE 200
/* Longest single sleep of a waiter (ms), so that its liveness deadline stays fresh. */
#define LKC_RS_WAIT_CAP 2000
/* Margin of a waiter's liveness deadline for its own round trips (ms), beyond its sleep and I/O timeouts. */
#define LKC_RS_SLACK 500
/* Lifetime of a wake list (ms): only one nobody sleeps on (its waiter died) lives that long. */
#define LKC_RS_WAKE_TTL 10000

/*
 * Shared by every script: KEYS[1] the lock, KEYS[2] the queue, KEYS[3] the
 * deadlines, KEYS[4] the watcher (when the script hands the lock on). A
 * waiter's wake list is not among the KEYS (its name comes from the queue),
 * but it shares the lock's hash tag and so its slot.
 */
#define LKC_RS_LUA_QUEUE \
	"local lock, q, qd, ws = KEYS[1], KEYS[2], KEYS[3], KEYS[4]\n" \
	"local function now_ms()\n" \
	"\tlocal t = redis.call('TIME')\n" \
	"\treturn tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
	"end\n" \
	"local function wake(token, why)\n" \
	"\tlocal w = lock .. ':w:' .. token\n" \
	"\tredis.call('RPUSH', w, why)\n" \
	"\tredis.call('PEXPIRE', w, " LKC_RS_STR(LKC_RS_WAKE_TTL) ")\n" \
	"end\n" \
	"local function wake_head()\n" \
	"\tlocal h = redis.call('LINDEX', q, 0)\n" \
	"\tif h then wake(h, 'c') end\n" \
	"end\n" \
	/* A waiter's liveness deadline (nil when gone or malformed) and the TTL it asked for. */ \
	"local function entry(h)\n" \
	"\tlocal d, ttl = string.match(redis.call('HGET', qd, h) or '', '^(%d+):(%d*)$')\n" \
	"\treturn tonumber(d), ttl\n" \
	"end\n" \
	/* The first waiter whose liveness deadline is still ahead, and its TTL; the dead before it are dropped. */ \
	"local function live_head(now)\n" \
	"\twhile true do\n" \
	"\t\tlocal h = redis.call('LINDEX', q, 0)\n" \
	"\t\tif not h then return nil end\n" \
	"\t\tlocal d, ttl = entry(h)\n" \
	"\t\tif d and d >= now then return h, ttl end\n" \
	"\t\tredis.call('LPOP', q)\n" \
	"\t\tredis.call('HDEL', qd, h)\n" \
	"\t\tredis.call('DEL', lock .. ':w:' .. h)\n" \
	"\tend\n" \
	"end\n" \
	/*
	 * Hands the free lock to the live head h with its TTL. Unless a waiter
	 * already watches hand-offs, one is told to: the tail, as the last to be
	 * served it watches longest, or else the head.
	 */ \
	"local function give(h, ttl, now)\n" \
	"\tredis.call('LPOP', q)\n" \
	"\tredis.call('HDEL', qd, h)\n" \
	"\tif ttl == '' then\n" \
	"\t\tredis.call('SET', lock, h)\n" \
	"\telse\n" \
	"\t\tredis.call('SET', lock, h, 'PX', ttl)\n" \
	"\tend\n" \
	"\twake(h, string.format('y%.0f', now))\n" \
	"\tlocal w = redis.call('GET', ws)\n" \
	"\tif w and w ~= h then return end\n" \
	"\tlocal n = redis.call('LINDEX', q, -1)\n" \
	"\tlocal d = n and entry(n)\n" \
	"\tif not d or d < now then n = live_head(now) end\n" \
	"\tif n then\n" \
	"\t\twake(n, 'w')\n" \
	"\t\tredis.call('SET', ws, n, 'PX', " LKC_RS_STR(LKC_RS_GRACE) " * 2)\n" \
	"\telseif w then\n" \
	"\t\tredis.call('DEL', ws)\n" \
	"\tend\n" \
	"end\n" \
	/* The lock was just freed: fair, give it to the first live waiter; unfair, wake that waiter. */ \
	"local function hand_off(fair)\n" \
	"\tif redis.call('LLEN', q) == 0 then return end\n" \
	"\tlocal now = now_ms()\n" \
	"\tlocal h, ttl = live_head(now)\n" \
	"\tif not h then return end\n" \
	"\tif fair == '1' then give(h, ttl, now) else wake(h, 'f') end\n" \
	"end\n"

/*
 * ARGV[1] our owner token; ARGV[2] a delay in ms, "0" to delete now;
 * ARGV[3] "1" fair. Returns 1 when it was ours, 0 when absent, -1 when
 * another owner has it. Deleting hands the lock to the waiters; a delay
 * wakes the head, so it sleeps until the new end rather than its old bound.
 */
static const char lkc_rs_release_lua[] = LKC_RS_LUA_QUEUE
	"local v = redis.call('GET', lock)\n"
	"if not v then\n"
	"\thand_off(ARGV[3])\n"
	"\treturn 0\n"
	"end\n"
	"if v ~= ARGV[1] then return -1 end\n"
	"if ARGV[2] ~= '0' then\n"
	"\tredis.call('PEXPIRE', lock, ARGV[2])\n"
	"\twake_head()\n"
	"else\n"
	"\tredis.call('DEL', lock)\n"
	"\thand_off(ARGV[3])\n"
	"end\n"
	"return 1\n";

/*
 * As the release script, with ARGV[2] the new TTL in ms, or "" for none.
 * Waiters sleep at most the TTL they last saw, so a shorter one wakes the head.
 */
static const char lkc_rs_refresh_lua[] = LKC_RS_LUA_QUEUE
	"local v = redis.call('GET', lock)\n"
	"if not v then return 0 end\n"
	"if v ~= ARGV[1] then return -1 end\n"
	"if ARGV[2] == '' then\n"
	"\tredis.call('PERSIST', lock)\n"
	"else\n"
	"\tlocal left = redis.call('PTTL', lock)\n"
	"\tredis.call('PEXPIRE', lock, ARGV[2])\n"
	"\tif left < 0 or left > tonumber(ARGV[2]) then wake_head() end\n"
	"end\n"
	"return 1\n";

/*
 * ARGV[1] "1" fair. Deletes the lock whoever holds it, withdraws a hand-off
 * not yet picked up (its "y" would otherwise still read as the lock), and
 * hands the lock to the waiters; returns how many lock keys went.
 */
static const char lkc_rs_force_lua[] = LKC_RS_LUA_QUEUE
	"local v = redis.call('GET', lock)\n"
	"if not v then\n"
	"\thand_off(ARGV[1])\n"
	"\treturn 0\n"
	"end\n"
	"redis.call('DEL', lock, lock .. ':w:' .. v)\n"
	"hand_off(ARGV[1])\n"
	"return 1\n";

/*
 * One step of a waiting acquire. KEYS[5] our wake list; ARGV[1] our token,
 * ARGV[2] our TTL in ms ("" none), ARGV[3] "1" fair, ARGV[4] how long our
 * liveness deadline lasts (ms), ARGV[5] what to do:
 *   "q" take the lock if it is ours (handed to us) or free (fair: and we are
 *       the first live waiter), else join the queue (once) and renew our
 *       deadline;
 *   "l" (the wait is over) take it as "q" would, else leave the queue;
 *   "i" (interrupted) leave the queue, and if the lock was handed to us,
 *       hand it on as a release would.
 * Returns {1} taken, {0} left, or {0, ms} queued: how long to sleep at most
 * (the holder's PTTL, less while we watch a hand-off; -1 no bound).
 * A hand-off to v not picked up within the grace means v died: the lock is
 * broken and handed on. Only the watcher sleeps short to see that; it stays
 * the watcher while such a hand-off is pending, and any waiter that finds
 * one unwatched becomes it. Running a step twice is harmless, so an
 * ambiguous failure is settled by sending it again. A fencing counter
 * belongs in take() and give().
 */
static const char lkc_rs_wait_lua[] = LKC_RS_LUA_QUEUE
	"local me, ttl, fair, how = ARGV[1], ARGV[2], ARGV[3], ARGV[5]\n"
	"local function leave()\n"
	"\tlocal first = redis.call('LINDEX', q, 0) == me\n"
	"\tredis.call('LREM', q, 0, me)\n"
	"\tredis.call('HDEL', qd, me)\n"
	"\tredis.call('DEL', KEYS[5])\n"
	"\tif redis.call('GET', ws) == me then\n"
	"\t\tredis.call('DEL', ws)\n"
	"\t\tfirst = true\n"
	"\tend\n"
	/* Whoever is head now looks again: it may be the one to take the lock, or to watch a hand-off now. */
	"\tif first then wake_head() end\n"
	"end\n"
	"local function take()\n"
	"\tif ttl == '' then\n"
	"\t\tredis.call('SET', lock, me)\n"
	"\telse\n"
	"\t\tredis.call('SET', lock, me, 'PX', ttl)\n"
	"\tend\n"
	"\tleave()\n"
	"\treturn {1}\n"
	"end\n"
	"local v = redis.call('GET', lock)\n"
	"if how == 'i' then\n"
	"\tleave()\n"
	"\tif v == me then\n"
	"\t\tredis.call('DEL', lock)\n"
	"\t\thand_off(fair)\n"
	"\tend\n"
	"\treturn {0}\n"
	"end\n"
	"if v == me then return take() end\n"
	"local now, bound = now_ms(), nil\n"
	"if v then\n"
	"\tlocal m = redis.call('LINDEX', lock .. ':w:' .. v, -1)\n"
	"\tif m and string.sub(m, 1, 1) == 'y' then\n"
	"\t\tlocal age = now - tonumber(string.sub(m, 2))\n"
	"\t\tif age >= " LKC_RS_STR(LKC_RS_GRACE) " then\n"
	"\t\t\tredis.call('DEL', lock, lock .. ':w:' .. v)\n"
	"\t\t\tv = false\n"
	"\t\telse\n"
	"\t\t\tbound = " LKC_RS_STR(LKC_RS_GRACE) " - age\n"
	"\t\tend\n"
	"\tend\n"
	"end\n"
	"if not v then\n"
	"\tlocal h, hl = nil, nil\n"
	"\tif fair == '1' then h, hl = live_head(now) end\n"
	"\tif not h or h == me then return take() end\n"
	"\tgive(h, hl, now)\n"
	"\tbound = " LKC_RS_STR(LKC_RS_GRACE) "\n"
	"end\n"
	"if how == 'l' then\n"
	"\tleave()\n"
	"\treturn {0}\n"
	"end\n"
	"local stay = tonumber(ARGV[4])\n"
	"if redis.call('HEXISTS', qd, me) == 0 then redis.call('RPUSH', q, me) end\n"
	"redis.call('HSET', qd, me, string.format('%.0f:%s', now + stay, ttl))\n"
	/* The queue outlives every live waiter's deadline, and vanishes when all of them died. */
	"if redis.call('PTTL', q) < stay then redis.call('PEXPIRE', q, stay) end\n"
	"if redis.call('PTTL', qd) < stay then redis.call('PEXPIRE', qd, stay) end\n"
	/* What was pushed to us before this step is settled by it: the lock was not ours. */
	"redis.call('DEL', KEYS[5])\n"
	"local w = redis.call('GET', ws)\n"
	"if bound and (not w or w == me) then\n"
	"\tredis.call('SET', ws, me, 'PX', bound + " LKC_RS_STR(LKC_RS_GRACE) ")\n"
	"else\n"
	"\tif w == me then redis.call('DEL', ws) end\n"
	"\tbound = nil\n"
	"end\n"
	"local left = redis.call('PTTL', lock)\n"
	"if bound and (left < 0 or bound < left) then left = bound end\n"
	"return {0, left}\n";

/* A script and the SHA-1 Redis names it by in its cache. */
typedef struct {
	const char *name;
	const char *body;
	char sha[41];
} lkc_rs_lua;

enum { LKC_RS_RELEASE, LKC_RS_REFRESH, LKC_RS_FORCE, LKC_RS_WAIT, LKC_RS_NSCRIPTS };

static lkc_rs_lua lkc_rs_scripts[LKC_RS_NSCRIPTS] = {
	[LKC_RS_RELEASE] = { "release", lkc_rs_release_lua, "" },
	[LKC_RS_REFRESH] = { "refresh", lkc_rs_refresh_lua, "" },
	[LKC_RS_FORCE] = { "force release", lkc_rs_force_lua, "" },
	[LKC_RS_WAIT] = { "wait", lkc_rs_wait_lua, "" },
};
static pthread_once_t lkc_rs_scripts_once = PTHREAD_ONCE_INIT;

typedef struct {
	lkc_store base;
	lkc_redis_config cfg;
	char *endpoint;          /* "host:port" or the socket path, for messages */
	char *pool_key;          /* what a pooled connection must match to be reused */
	size_t pool_key_len;
	redisContext *ctx;       /* NULL until first use and after an I/O error */
	pid_t ctx_pid;           /* the process that made ctx */
	int interrupted;         /* a signal the host wants handled arrived during I/O */
	int abortable;           /* the current exchange is a sleep that such a signal ends */
} lkc_rs_store;

/* The budget of one store operation. */
typedef struct {
	uint64_t deadline;       /* every connect, write and read ends by then */
	int sent;                /* the last failure came after a command may have reached the server */
	int recovered;           /* the one reconnect allowed after a failed command is spent */
} lkc_rs_op;

/* One command as binary-safe arguments. */
typedef struct {
	int argc;
	const char **argv;
	const size_t *lens;
} lkc_rs_cmd;

/* A connection kept for the next store of this process with the same settings. */
typedef struct lkc_rs_pooled {
	struct lkc_rs_pooled *next;
	char *key;
	size_t key_len;
	redisContext *ctx;
	pid_t pid;
} lkc_rs_pooled;

static lkc_rs_pooled *lkc_rs_pool;
static size_t lkc_rs_pool_size;
static pthread_mutex_t lkc_rs_pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Rotates x left by n bits. */
static uint32_t lkc_rs_rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

/* Mixes one 64-byte block into a SHA-1 state. */
static void lkc_rs_sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++) {
		w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16
			| (uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
	}
	for (int i = 16; i < 80; i++) {
		w[i] = lkc_rs_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	}
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999u;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1u;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDCu;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6u;
		}
		t = lkc_rs_rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = lkc_rs_rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* The SHA-1 of data in lowercase hex: the name Redis gives a script in its cache. */
static void lkc_rs_sha1_hex(const char *data, size_t len, char out[41])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t h[5] = { 0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u };
	unsigned char tail[128];
	size_t full = len / 64 * 64, rest = len - full, tail_len;
	uint64_t bits = (uint64_t) len * 8;

	for (size_t off = 0; off < full; off += 64) {
		lkc_rs_sha1_block(h, (const unsigned char *) data + off);
	}
	memset(tail, 0, sizeof(tail));
	memcpy(tail, data + full, rest);
	tail[rest] = 0x80;
	tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++) {
		tail[tail_len - 1 - i] = (unsigned char) (bits >> (8 * i));
	}
	lkc_rs_sha1_block(h, tail);
	if (tail_len == 128) {
		lkc_rs_sha1_block(h, tail + 64);
	}
	for (int i = 0; i < 20; i++) {
		unsigned char byte = (unsigned char) (h[i / 4] >> (24 - 8 * (i % 4)));
		out[2 * i] = hex[byte >> 4];
		out[2 * i + 1] = hex[byte & 15];
	}
	out[40] = '\0';
}

/*
 * The key of a resource: prefix + "{" + resource + "}" + suffix. Every key of
 * one resource (lock, fencing counter, queue, readers) shares the braced hash
 * tag, so scripts may touch them together.
 */
static char *lkc_rs_key(const lkc_rs_store *s, const char *resource, size_t len,
	const char *suffix, size_t *key_len)
{
	size_t prefix_len = s->cfg.prefix_len, suffix_len = strlen(suffix);
	char *key = malloc(prefix_len + len + suffix_len + 3);

	if (key == NULL) {
		return NULL;
	}
	if (prefix_len > 0) {
		memcpy(key, s->cfg.prefix, prefix_len);
	}
	key[prefix_len] = '{';
	memcpy(key + prefix_len + 1, resource, len);
	key[prefix_len + 1 + len] = '}';
	memcpy(key + prefix_len + 2 + len, suffix, suffix_len);
	*key_len = prefix_len + len + suffix_len + 2;
	key[*key_len] = '\0';
	return key;
}

/* Fills err with "Redis at ENDPOINT: " and the formatted cause; returns code. */
__attribute__((format(printf, 4, 5)))
static lkc_rc lkc_rs_fail(const lkc_rs_store *s, lkc_err *err, lkc_rc code, const char *fmt, ...)
{
	char cause[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	return lkc_err_set(err, code, "Redis at %s: %s", s->endpoint, cause);
}

/*
 * Copies text that came from the server or the system into out for a
 * message: control bytes become '?', and the password is masked wherever it
 * appears, so no reply can smuggle it into an error.
 */
static void lkc_rs_quote(const lkc_rs_store *s, const char *text, size_t len, char *out, size_t size)
{
	const char *pw = s->cfg.password;
	size_t pw_len = pw != NULL ? strlen(pw) : 0, o = 0;

	for (size_t i = 0; i < len && o + 1 < size; ) {
		if (pw_len > 0 && len - i >= pw_len && memcmp(text + i, pw, pw_len) == 0) {
			for (int k = 0; k < 3 && o + 1 < size; k++) {
				out[o++] = '*';
			}
			i += pw_len;
			continue;
		}
		out[o++] = (unsigned char) text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
		i++;
	}
	out[o] = '\0';
}

/* Like lkc_rs_quote for a system message, with its first letter lowered to read as a cause. */
static void lkc_rs_quote_errstr(const lkc_rs_store *s, const char *text, char *out, size_t size)
{
	lkc_rs_quote(s, text, strlen(text), out, size);
	if (out[0] >= 'A' && out[0] <= 'Z' && (out[1] < 'A' || out[1] > 'Z')) {
		out[0] = (char) (out[0] - 'A' + 'a');
	}
}

/* A timeval for ms milliseconds, at least one: zero would mean "no timeout" to the socket layer. */
static struct timeval lkc_rs_tv(int64_t ms)
{
	struct timeval tv;

	if (ms < 1) {
		ms = 1;
	}
	tv.tv_sec = (time_t) (ms / 1000);
	tv.tv_usec = (suseconds_t) (ms % 1000) * 1000;
	return tv;
}

/* The monotonic time ms milliseconds from now, saturating instead of wrapping for absurd spans. */
static uint64_t lkc_rs_deadline(int64_t ms)
{
	uint64_t now = lkc_now_ns();

	if ((uint64_t) ms >= (UINT64_MAX - now) / 1000000u) {
		return UINT64_MAX;
	}
	return now + (uint64_t) ms * 1000000u;
}

/* Starts the budget of one operation: timeout_ms from now. */
static void lkc_rs_op_start(const lkc_rs_store *s, lkc_rs_op *op)
{
	op->deadline = lkc_rs_deadline(s->cfg.timeout_ms);
	op->sent = 0;
	op->recovered = 0;
}

/* Whether a failed command may be recovered by one reconnect within the operation's budget. */
static int lkc_rs_may_recover(const lkc_rs_op *op, lkc_rc rc)
{
	return rc == LKC_ERR_IO && op->sent && !op->recovered && lkc_ms_left(op->deadline) > 0;
}

/* Closes a context without sending anything (redisFree only closes the socket). */
static void lkc_rs_close(redisContext *ctx)
{
	redisFree(ctx);
}

/* Drops the store's connection; the next operation connects anew. */
static void lkc_rs_discard(lkc_rs_store *s)
{
	if (s->ctx != NULL) {
		lkc_rs_close(s->ctx);
		s->ctx = NULL;
	}
}

/* Unlinks and closes pooled connections made by another process; the pool lock is held. */
static void lkc_rs_pool_sweep_locked(pid_t self)
{
	lkc_rs_pooled **link = &lkc_rs_pool;

	while (*link != NULL) {
		lkc_rs_pooled *e = *link;

		if (e->pid == self) {
			link = &e->next;
			continue;
		}
		/* A parent's socket: closing our copy leaves the parent's connection alone. */
		*link = e->next;
		lkc_rs_close(e->ctx);
		free(e->key);
		free(e);
		lkc_rs_pool_size--;
	}
}

/* Takes an idle connection of this process made with the same settings, or NULL. */
static redisContext *lkc_rs_pool_take(const char *key, size_t key_len)
{
	redisContext *ctx = NULL;
	lkc_rs_pooled **link;

	pthread_mutex_lock(&lkc_rs_pool_lock);
	lkc_rs_pool_sweep_locked(lkc_pid());
	for (link = &lkc_rs_pool; *link != NULL; link = &(*link)->next) {
		lkc_rs_pooled *e = *link;

		if (e->key_len == key_len && memcmp(e->key, key, key_len) == 0) {
			*link = e->next;
			ctx = e->ctx;
			free(e->key);
			free(e);
			lkc_rs_pool_size--;
			break;
		}
	}
	pthread_mutex_unlock(&lkc_rs_pool_lock);
	return ctx;
}

/* Keeps ctx for reuse by this process, or closes it when the pool is full. */
static void lkc_rs_pool_put(const char *key, size_t key_len, redisContext *ctx)
{
	lkc_rs_pooled *e = malloc(sizeof(*e));

	if (e != NULL) {
		e->key = malloc(key_len);
	}
	if (e == NULL || e->key == NULL) {
		free(e);
		lkc_rs_close(ctx);
		return;
	}
	memcpy(e->key, key, key_len);
	e->key_len = key_len;
	e->ctx = ctx;
	e->pid = lkc_pid();
	pthread_mutex_lock(&lkc_rs_pool_lock);
	lkc_rs_pool_sweep_locked(e->pid);
	if (lkc_rs_pool_size >= LKC_RS_POOL_MAX) {
		pthread_mutex_unlock(&lkc_rs_pool_lock);
		lkc_rs_close(ctx);
		free(e->key);
		free(e);
		return;
	}
	e->next = lkc_rs_pool;
	lkc_rs_pool = e;
	lkc_rs_pool_size++;
	pthread_mutex_unlock(&lkc_rs_pool_lock);
}

/* Closes every pooled connection; a forked child closes only its copies of the sockets. */
void lkc_redis_pool_shutdown(void)
{
	pthread_mutex_lock(&lkc_rs_pool_lock);
	while (lkc_rs_pool != NULL) {
		lkc_rs_pooled *e = lkc_rs_pool;

		lkc_rs_pool = e->next;
		lkc_rs_close(e->ctx);
		free(e->key);
		free(e);
	}
	lkc_rs_pool_size = 0;
	pthread_mutex_unlock(&lkc_rs_pool_lock);
}

/*
 * Waits until fd is ready for events or the deadline passes: 1 ready, 0 timed
 * out, -1 failed (errno), -2 interrupted. A signal the host wants handled is
 * remembered for the waiting acquire; it ends the wait only in an abortable
 * exchange (a waiter's sleep), any other one is short and runs to its end.
 */
static int lkc_rs_wait_fd(lkc_rs_store *s, int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
		int64_t ms = lkc_ms_left(deadline);
		int n;

		if (ms == 0) {
			return 0;
		}
		n = poll(&pfd, 1, ms > 60000 ? 60000 : (int) ms);
		if (n > 0) {
			return 1;
		}
		if (n < 0) {
			if (errno != EINTR) {
				return -1;
			}
			if (lkc_interrupted()) {
				s->interrupted = 1;
			}
			if (s->interrupted && s->abortable) {
				return -2;
			}
		}
	}
}

#if HIREDIS_MAJOR >= 1
# define lkc_rs_sdslen hi_sdslen
# define lkc_rs_sdsrange hi_sdsrange
#else
# define lkc_rs_sdslen sdslen
# define lkc_rs_sdsrange sdsrange
#endif

/*
 * Sends what it can of hiredis's output buffer with MSG_NOSIGNAL, so that a
 * dropped connection is an error and never a SIGPIPE; *done says whether all went.
 */
static int lkc_rs_flush(redisContext *ctx, int *done)
{
	size_t len = lkc_rs_sdslen(ctx->obuf);

	*done = 0;
	while (len > 0) {
		ssize_t n = send(ctx->fd, ctx->obuf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				return REDIS_OK;
			}
			return REDIS_ERR;
		}
		lkc_rs_sdsrange(ctx->obuf, n, -1);
		len -= (size_t) n;
	}
	*done = 1;
	return REDIS_OK;
}

/* Turns a failed socket wait or hiredis call into an error, and drops the connection. */
static lkc_rc lkc_rs_io_fail(lkc_rs_store *s, int waited, int errnum, const char *doing, lkc_err *err)
{
	char cause[256];
	lkc_rc code = LKC_ERR_IO;

	if (waited == 0) {
		snprintf(cause, sizeof(cause), "timed out after %lld ms %s",
			(long long) s->cfg.timeout_ms, doing);
	} else if (waited < 0) {
		char sys[128];

		lkc_rs_quote_errstr(s, strerror(errnum), sys, sizeof(sys));
		snprintf(cause, sizeof(cause), "connection error %s: %s", doing, sys);
	} else {
		char text[160];

		lkc_rs_quote_errstr(s, s->ctx->errstr, text, sizeof(text));
		switch (s->ctx->err) {
			case REDIS_ERR_EOF:
				snprintf(cause, sizeof(cause), "connection closed by the server %s", doing);
				break;
			case REDIS_ERR_PROTOCOL:
				code = LKC_ERR_PROTOCOL;
				snprintf(cause, sizeof(cause), "protocol error %s: %s", doing, text);
				break;
			case REDIS_ERR_OOM:
				code = LKC_ERR_SYSTEM;
				snprintf(cause, sizeof(cause), "out of memory %s", doing);
				break;
			default:
				if (errnum == EAGAIN || errnum == EWOULDBLOCK) {
					snprintf(cause, sizeof(cause), "timed out after %lld ms %s",
						(long long) s->cfg.timeout_ms, doing);
				} else {
					snprintf(cause, sizeof(cause), "connection error %s: %s", doing, text);
				}
				break;
		}
	}
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, code, "%s", cause);
}

/* Frees the first n replies. */
static void lkc_rs_free_replies(redisReply **replies, int n)
{
	for (int i = 0; i < n; i++) {
		if (replies[i] != NULL) {
			freeReplyObject(replies[i]);
			replies[i] = NULL;
		}
	}
}

/* Ends an exchange that an interrupt cut short: the connection is mid-command, so it goes. */
static lkc_rc lkc_rs_io_interrupted(lkc_rs_store *s, lkc_err *err)
{
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, LKC_INTERRUPTED, "the wait for the lock was interrupted");
}

/*
 * Sends n commands in one write on the current connection and reads their n
 * replies, all before the operation's deadline. Any failure drops the
 * connection; op->sent then says whether the server may have run them.
 */
static lkc_rc lkc_rs_exchange(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmds, int n,
	redisReply **replies, lkc_err *err)
{
	redisContext *ctx = s->ctx;
	int done = 0, got = 0, w;

	op->sent = 0;
	for (int i = 0; i < n; i++) {
		replies[i] = NULL;
	}
	if (lkc_ms_left(op->deadline) == 0) {
		return lkc_rs_io_fail(s, 0, 0, "before sending a command", err);
	}
	for (int i = 0; i < n; i++) {
		if (redisAppendCommandArgv(ctx, cmds[i].argc, cmds[i].argv, cmds[i].lens) != REDIS_OK) {
			lkc_rs_discard(s);
			return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
		}
	}
	op->sent = 1;
	/* The socket is non-blocking: write first, and wait only when the kernel's buffer is full. */
	for (;;) {
		if (lkc_rs_flush(ctx, &done) != REDIS_OK) {
			return lkc_rs_io_fail(s, -1, errno, "sending a command", err);
		}
		if (done) {
			break;
		}
		w = lkc_rs_wait_fd(s, ctx->fd, POLLOUT, op->deadline);
		if (w == -2) {
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_io_fail(s, w, errno, "sending a command", err);
		}
	}
	while (got < n) {
		void *reply = NULL;

		if (redisGetReplyFromReader(ctx, &reply) != REDIS_OK) {
			lkc_rs_free_replies(replies, got);
			return lkc_rs_io_fail(s, 1, errno, "reading a reply", err);
		}
		if (reply != NULL) {
			replies[got++] = reply;
			continue;
		}
		w = lkc_rs_wait_fd(s, ctx->fd, POLLIN, op->deadline);
		if (w == -2) {
			lkc_rs_free_replies(replies, got);
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0 || redisBufferRead(ctx) != REDIS_OK) {
			int errnum = errno;

			lkc_rs_free_replies(replies, got);
			return lkc_rs_io_fail(s, w <= 0 ? w : 1, errnum, "waiting for a reply", err);
		}
	}
	return LKC_OK;
}

/* Fills err for an error reply to what; the server's words are quoted, never the password. */
static lkc_rc lkc_rs_refused(const lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err)
{
	char text[256];

	lkc_rs_quote(s, reply->str, reply->len, text, sizeof(text));
	return lkc_rs_fail(s, err, LKC_ERR_REFUSED, "%s failed: %s", what, text);
}

/* Fills err for a reply of a type that what never returns. */
static lkc_rc lkc_rs_unexpected(lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err)
{
	if (reply->type == REDIS_REPLY_ERROR) {
		return lkc_rs_refused(s, what, reply, err);
	}
	return lkc_rs_fail(s, err, LKC_ERR_PROTOCOL, "unexpected reply to %s (type %d)", what, reply->type);
}

/* Whether reply is the status "OK". */
static int lkc_rs_is_ok(const redisReply *reply)
{
	return reply->type == REDIS_REPLY_STATUS && reply->len == 2 && memcmp(reply->str, "OK", 2) == 0;
}

/* Opens a new connection, authenticates and selects the database. */
static lkc_rc lkc_rs_connect(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	const char *auth_argv[3], *select_argv[2];
	size_t auth_lens[3], select_lens[2];
	lkc_rs_cmd cmds[2];
	redisReply *replies[2];
	char db[16], text[160];
	int64_t ms = lkc_ms_left(op->deadline);
	int n = 0, auth = -1, select = -1;
	redisContext *ctx;
	lkc_rc rc = LKC_OK;

	op->sent = 0;
	if (ms == 0) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before connecting",
			(long long) s->cfg.timeout_ms);
	}
	if (s->cfg.socket_path != NULL) {
		ctx = redisConnectUnixWithTimeout(s->cfg.socket_path, lkc_rs_tv(ms));
	} else {
		ctx = redisConnectWithTimeout(s->cfg.host, s->cfg.port, lkc_rs_tv(ms));
	}
	if (ctx == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory connecting");
	}
	if (ctx->err != 0) {
		lkc_rs_quote_errstr(s, ctx->errstr, text, sizeof(text));
		lkc_rs_close(ctx);
		return lkc_rs_fail(s, err, LKC_ERR_IO, "cannot connect: %s", text);
	}
	if (s->cfg.socket_path == NULL) {
		/* Pooled connections sit idle for long: let the kernel notice a vanished peer. */
		redisEnableKeepAlive(ctx);
	}
	/*
	 * Our own polls bound every read and write by the operation's deadline, so the
	 * socket goes non-blocking and hiredis is told to treat EAGAIN as "later".
	 */
	if (fcntl(ctx->fd, F_SETFL, fcntl(ctx->fd, F_GETFL) | O_NONBLOCK) < 0) {
		int errnum = errno;

		lkc_rs_close(ctx);
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "cannot make the socket non-blocking: %s", strerror(errnum));
	}
	ctx->flags &= ~REDIS_BLOCK;
	s->ctx = ctx;
	s->ctx_pid = lkc_pid();

	if (s->cfg.password != NULL || s->cfg.username != NULL) {
		int argc = 0;

		auth_argv[argc] = "AUTH";
		auth_lens[argc++] = 4;
		if (s->cfg.username != NULL) {
			auth_argv[argc] = s->cfg.username;
			auth_lens[argc++] = strlen(s->cfg.username);
		}
		/* An ACL user without a password sends an empty one, which a nopass user accepts. */
		auth_argv[argc] = s->cfg.password != NULL ? s->cfg.password : "";
		auth_lens[argc] = strlen(auth_argv[argc]);
		argc++;
		auth = n;
		cmds[n++] = (lkc_rs_cmd) { argc, auth_argv, auth_lens };
	}
	if (s->cfg.database != 0) {
		snprintf(db, sizeof(db), "%d", s->cfg.database);
		select_argv[0] = "SELECT";
		select_lens[0] = 6;
		select_argv[1] = db;
		select_lens[1] = strlen(db);
		select = n;
		cmds[n++] = (lkc_rs_cmd) { 2, select_argv, select_lens };
	}
	if (n == 0) {
		return LKC_OK;
	}
	rc = lkc_rs_exchange(s, op, cmds, n, replies, err);
	if (rc != LKC_OK) {
		return rc;
	}
	if (auth >= 0 && !lkc_rs_is_ok(replies[auth])) {
		rc = replies[auth]->type == REDIS_REPLY_ERROR
			? lkc_rs_refused(s, "authentication", replies[auth], err)
			: lkc_rs_unexpected(s, "AUTH", replies[auth], err);
	} else if (select >= 0 && !lkc_rs_is_ok(replies[select])) {
		char what[48];

		snprintf(what, sizeof(what), "selecting database %d", s->cfg.database);
		rc = lkc_rs_unexpected(s, what, replies[select], err);
	}
	lkc_rs_free_replies(replies, n);
	if (rc != LKC_OK) {
		lkc_rs_discard(s);
	}
	return rc;
}

/*
 * Makes sure the store has a connection of this process: a context inherited
 * across fork() is closed unused, then an idle pooled one is taken, else a
 * new one is opened.
 */
static lkc_rc lkc_rs_ensure(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	if (s->ctx != NULL && s->ctx_pid != lkc_pid()) {
		lkc_rs_discard(s);
	}
	if (s->ctx != NULL) {
		return LKC_OK;
	}
	if (s->cfg.persistent) {
		s->ctx = lkc_rs_pool_take(s->pool_key, s->pool_key_len);
		if (s->ctx != NULL) {
			s->ctx_pid = lkc_pid();
			return LKC_OK;
		}
	}
	return lkc_rs_connect(s, op, err);
}

/* Connects when needed, then runs n commands once; a caller that may resend decides after a failure. */
static lkc_rc lkc_rs_send(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmds, int n,
	redisReply **replies, lkc_err *err)
{
	lkc_rc rc = lkc_rs_ensure(s, op, err);

	if (rc != LKC_OK) {
		return rc;
	}
	return lkc_rs_exchange(s, op, cmds, n, replies, err);
}

/* Runs one command that is safe to repeat: a failed one (a stale connection) is sent once more on a new connection. */
static lkc_rc lkc_rs_call(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmd, redisReply **reply, lkc_err *err)
{
	for (;;) {
		lkc_rc rc = lkc_rs_send(s, op, cmd, 1, reply, err);

		if (!lkc_rs_may_recover(op, rc)) {
			return rc;
		}
		op->recovered = 1;
	}
}

/* Who holds key: 1 owner, 0 nobody, -1 somebody else. */
static lkc_rc lkc_rs_owner_state(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len,
	const char *owner, int *state, lkc_err *err)
{
	const char *argv[2] = { "GET", key };
	size_t lens[2] = { 3, key_len };
	lkc_rs_cmd cmd = { 2, argv, lens };
	redisReply *reply;
	lkc_rc rc = lkc_rs_call(s, op, &cmd, &reply, err);

	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type == REDIS_REPLY_NIL) {
		*state = 0;
	} else if (reply->type == REDIS_REPLY_STRING) {
		*state = reply->len == LKC_TOKEN_LEN && memcmp(reply->str, owner, LKC_TOKEN_LEN) == 0 ? 1 : -1;
	} else {
		rc = lkc_rs_unexpected(s, "GET", reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/* Names every script by the SHA-1 of its body, once per process. */
static void lkc_rs_scripts_init(void)
{
	for (int i = 0; i < LKC_RS_NSCRIPTS; i++) {
		lkc_rs_sha1_hex(lkc_rs_scripts[i].body, strlen(lkc_rs_scripts[i].body), lkc_rs_scripts[i].sha);
	}
}

/* The keys of one resource, in the order the scripts read them as KEYS. */
enum { LKC_RS_K_LOCK, LKC_RS_K_QUEUE, LKC_RS_K_DEADLINES, LKC_RS_K_WATCHER, LKC_RS_K_WAKE, LKC_RS_NKEYS };

typedef struct {
	char *name[LKC_RS_NKEYS];
	size_t len[LKC_RS_NKEYS];
} lkc_rs_keys;

/* Frees what lkc_rs_keys_make built. */
static void lkc_rs_keys_free(lkc_rs_keys *keys)
{
	for (int i = 0; i < LKC_RS_NKEYS; i++) {
		free(keys->name[i]);
		keys->name[i] = NULL;
	}
}

/* Builds the first n keys of a resource (the wake list is owner's); 0, or -1 when out of memory. */
static int lkc_rs_keys_make(const lkc_rs_store *s, const char *resource, size_t len, const char *owner,
	int n, lkc_rs_keys *keys)
{
	char wake[LKC_TOKEN_LEN + 4];
	const char *suffix[LKC_RS_NKEYS] = { "", ":q", ":qd", ":ws", wake };

	memset(keys, 0, sizeof(*keys));
	if (n > LKC_RS_K_WAKE) {
		snprintf(wake, sizeof(wake), ":w:%s", owner);
	}
	for (int i = 0; i < n; i++) {
		keys->name[i] = lkc_rs_key(s, resource, len, suffix[i], &keys->len[i]);
		if (keys->name[i] == NULL) {
			lkc_rs_keys_free(keys);
			return -1;
		}
	}
	return 0;
}

/*
 * Runs a script on the first nkeys keys with nargs arguments, by its SHA-1,
 * loading it with EVAL when the server's script cache does not have it
 * (restart, SCRIPT FLUSH). *reply is the caller's to free.
 */
static lkc_rc lkc_rs_eval(lkc_rs_store *s, lkc_rs_op *op, int script, const lkc_rs_keys *keys, int nkeys,
	const char *const *args, int nargs, redisReply **reply, lkc_err *err)
{
	const lkc_rs_lua *lua = &lkc_rs_scripts[script];
	const char *argv[3 + LKC_RS_NKEYS + 8];
	size_t lens[3 + LKC_RS_NKEYS + 8];
	char nkeys_s[12];
	lkc_rs_cmd cmd = { 0, argv, lens };
	lkc_rc rc;

	snprintf(nkeys_s, sizeof(nkeys_s), "%d", nkeys);
	argv[0] = "EVALSHA";
	lens[0] = 7;
	argv[1] = lua->sha;
	lens[1] = 40;
	argv[2] = nkeys_s;
	lens[2] = strlen(nkeys_s);
	cmd.argc = 3;
	for (int i = 0; i < nkeys; i++, cmd.argc++) {
		argv[cmd.argc] = keys->name[i];
		lens[cmd.argc] = keys->len[i];
	}
	for (int i = 0; i < nargs; i++, cmd.argc++) {
		argv[cmd.argc] = args[i];
		lens[cmd.argc] = strlen(args[i]);
	}
	rc = lkc_rs_send(s, op, &cmd, 1, reply, err);
	if (rc != LKC_OK) {
		return rc;
	}
	if ((*reply)->type == REDIS_REPLY_ERROR && (*reply)->len >= 8 && memcmp((*reply)->str, "NOSCRIPT", 8) == 0) {
		/* The server refused before running anything, so sending the body is not a second run. */
		freeReplyObject(*reply);
		*reply = NULL;
		argv[0] = "EVAL";
		lens[0] = 4;
		argv[1] = lua->body;
		lens[1] = strlen(lua->body);
		rc = lkc_rs_send(s, op, &cmd, 1, reply, err);
		if (rc != LKC_OK) {
			return rc;
		}
	}
	if ((*reply)->type == REDIS_REPLY_ERROR) {
		rc = lkc_rs_unexpected(s, lua->name, *reply, err);
		freeReplyObject(*reply);
		*reply = NULL;
	}
	return rc;
}

/* As lkc_rs_eval, for a script that answers an integer. */
static lkc_rc lkc_rs_eval_int(lkc_rs_store *s, lkc_rs_op *op, int script, const lkc_rs_keys *keys, int nkeys,
	const char *const *args, int nargs, long long *result, lkc_err *err)
{
	redisReply *reply;
	lkc_rc rc = lkc_rs_eval(s, op, script, keys, nkeys, args, nargs, &reply, err);

	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type == REDIS_REPLY_INTEGER) {
		*result = reply->integer;
	} else {
		rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/* Maps a compare-and-act script's answer (1 ours, 0 absent, -1 another owner). */
static lkc_rc lkc_rs_script_result(const lkc_rs_store *s, const char *what, long long result, lkc_err *err)
{
	if (result == 1) {
		return LKC_OK;
	}
	if (result == 0) {
		return lkc_rs_fail(s, err, LKC_EXPIRED, "cannot %s: the lock had expired", what);
	}
	if (result == -1) {
		return lkc_rs_fail(s, err, LKC_LOST, "cannot %s: the lock expired and another owner holds it now", what);
	}
	return lkc_rs_fail(s, err, LKC_ERR_PROTOCOL, "unexpected answer %lld from the %s script", result, what);
}

/* One attempt at taking the lock: a plain SET NX, whether or not the caller goes on to wait. */
static lkc_rc lkc_rs_try_acquire(lkc_rs_store *s, const lkc_hold *hold, const lkc_rs_keys *keys,
	int64_t ttl_ms, lkc_err *err)
{
	const char *key = keys->name[LKC_RS_K_LOCK];
	size_t key_len = keys->len[LKC_RS_K_LOCK];
	char ttl[24];
	const char *argv[6] = { "SET", key, hold->owner, "NX", "PX", ttl };
	size_t lens[6] = { 3, key_len, LKC_TOKEN_LEN, 2, 2, 0 };
	lkc_rs_cmd cmd = { ttl_ms == LKC_TTL_NONE ? 4 : 6, argv, lens };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	snprintf(ttl, sizeof(ttl), "%lld", (long long) ttl_ms);
	lens[5] = strlen(ttl);
	lkc_rs_op_start(s, &op);
	for (;;) {
		int state;

		rc = lkc_rs_send(s, &op, &cmd, 1, &reply, err);
		if (rc == LKC_OK) {
			break;
		}
		if (!lkc_rs_may_recover(&op, rc)) {
			return rc;
		}
		op.recovered = 1;
		/* The SET may have run before the connection failed: the key tells whether we hold it. */
		rc = lkc_rs_owner_state(s, &op, key, key_len, hold->owner, &state, err);
		if (rc != LKC_OK) {
			return rc;
		}
		if (state == 1) {
			return LKC_OK;
		}
		if (state == -1) {
			return LKC_BUSY;
		}
		/* Nobody holds it, so our SET did not take effect and sending it again is safe. */
	}
	if (lkc_rs_is_ok(reply)) {
		rc = LKC_OK;
	} else if (reply->type == REDIS_REPLY_NIL) {
		rc = LKC_BUSY;
	} else {
		rc = lkc_rs_unexpected(s, "SET", reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/*
 * Runs one step of the wait script (how: "q", "l" or "i", see there). Sets
 * *taken, and *bound to the longest sleep before the next step when queued
 * (ms, -1 none).
 */
static lkc_rc lkc_rs_wait_step(lkc_rs_store *s, const lkc_hold *hold, const lkc_rs_keys *keys,
	int64_t ttl_ms, const char *how, int *taken, int64_t *bound, lkc_err *err)
{
	char ttl[24] = "", stay[24];
	const char *args[5] = { hold->owner, ttl, s->cfg.fair ? "1" : "0", stay, how };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	if (ttl_ms != LKC_TTL_NONE) {
		snprintf(ttl, sizeof(ttl), "%lld", (long long) ttl_ms);
	}
	/* A live waiter runs the script again within one sleep, two I/O timeouts and a margin. */
	snprintf(stay, sizeof(stay), "%lld", (long long) (LKC_RS_WAIT_CAP + 2 * s->cfg.timeout_ms + LKC_RS_SLACK));
	*taken = 0;
	*bound = -1;
	lkc_rs_op_start(s, &op);
	for (;;) {
		rc = lkc_rs_eval(s, &op, LKC_RS_WAIT, keys, LKC_RS_NKEYS, args, 5, &reply, err);
		if (rc == LKC_OK) {
			break;
		}
		/* Running the step twice ends as running it once, so one that may have run is simply sent again. */
		if (!lkc_rs_may_recover(&op, rc)) {
			return rc;
		}
		op.recovered = 1;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || reply->elements > 2
		|| reply->element[0]->type != REDIS_REPLY_INTEGER
		|| (reply->elements == 2 && reply->element[1]->type != REDIS_REPLY_INTEGER)) {
		rc = lkc_rs_unexpected(s, "the wait script", reply, err);
	} else {
		*taken = reply->element[0]->integer == 1;
		if (reply->elements == 2) {
			*bound = reply->element[1]->integer;
		}
	}
	freeReplyObject(reply);
	return rc;
}

/*
 * Sleeps in BLPOP on our wake list for at most ms; *why is the first byte of
 * the message that woke us, 0 when none came. A signal the host wants
 * handled ends the sleep (LKC_INTERRUPTED) and drops the connection, which
 * is blocked mid-command.
 */
static lkc_rc lkc_rs_sleep(lkc_rs_store *s, const lkc_rs_keys *keys, int64_t ms, char *why, lkc_err *err)
{
	char secs[32];
	const char *argv[3] = { "BLPOP", keys->name[LKC_RS_K_WAKE], secs };
	size_t lens[3] = { 5, keys->len[LKC_RS_K_WAKE], 0 };
	lkc_rs_cmd cmd = { 3, argv, lens };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	*why = 0;
	/* Redis 6 and later take fractions of a second; 0 would mean forever, so a sleep lasts 1 ms at least. */
	if (ms < 1) {
		ms = 1;
	}
	snprintf(secs, sizeof(secs), "%lld.%03lld", (long long) (ms / 1000), (long long) (ms % 1000));
	lens[2] = strlen(secs);
	op.deadline = lkc_rs_deadline(ms + s->cfg.timeout_ms);
	op.sent = 0;
	op.recovered = 0;
	s->abortable = 1;
	rc = lkc_rs_send(s, &op, &cmd, 1, &reply, err);
	s->abortable = 0;
	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_STRING
		&& reply->element[1]->len > 0) {
		*why = reply->element[1]->str[0];
	} else if (reply->type != REDIS_REPLY_NIL) {
		rc = lkc_rs_unexpected(s, "BLPOP", reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/*
 * Ends an interrupted wait: leaves the queue and hands on a lock handed to
 * us meanwhile. Best effort: when the server cannot be reached, our entry
 * dies with its liveness deadline and a lock handed to us with its grace.
 */
static lkc_rc lkc_rs_wait_interrupted(lkc_rs_store *s, const lkc_hold *hold, const lkc_rs_keys *keys,
	int64_t ttl_ms, int queued, lkc_err *err)
{
	if (queued) {
		lkc_err ignored;
		int64_t bound;
		int taken;

		lkc_rs_wait_step(s, hold, keys, ttl_ms, "i", &taken, &bound, &ignored);
	}
	return lkc_rs_fail(s, err, LKC_INTERRUPTED, "the wait for the lock was interrupted");
}

/*
 * Waits for the lock after a failed attempt: queue, sleep until woken or the
 * holder's TTL runs out, try again. LKC_OK, LKC_BUSY when wait_ms ran out,
 * LKC_INTERRUPTED, or an error; neither of the last two leaves an entry
 * behind when the server can still be reached.
 */
static lkc_rc lkc_rs_wait(lkc_rs_store *s, const lkc_hold *hold, const lkc_rs_keys *keys,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	uint64_t deadline = wait_ms > 0 ? lkc_rs_deadline(wait_ms) : 0;
	const char *how = "q";
	int queued = 0, step = 1, failed_sleep = 0;
	int64_t nap = 0;

	for (;;) {
		int64_t left;
		char why;
		lkc_rc rc;

		/* Also asked without a signal: one that came between two system calls ended none of them. */
		if (s->interrupted || lkc_interrupted()) {
			return lkc_rs_wait_interrupted(s, hold, keys, ttl_ms, queued, err);
		}
		if (step) {
			int64_t bound;
			int taken;

			rc = lkc_rs_wait_step(s, hold, keys, ttl_ms, how, &taken, &bound, err);
			if (rc != LKC_OK || taken) {
				return rc;
			}
			if (how[0] == 'l') {
				return LKC_BUSY;
			}
			queued = 1;
			if (s->interrupted) {
				return lkc_rs_wait_interrupted(s, hold, keys, ttl_ms, queued, err);
			}
			/* One millisecond past the holder's TTL, the key is gone for the next step. */
			nap = bound >= 0 && bound + 1 < LKC_RS_WAIT_CAP ? bound + 1 : LKC_RS_WAIT_CAP;
		}
		left = wait_ms < 0 ? INT64_MAX : lkc_ms_left(deadline);
		if (left == 0) {
			/* The last step still takes a lock handed to us in time, and else leaves the queue. */
			how = "l";
			step = 1;
			continue;
		}
		rc = lkc_rs_sleep(s, keys, nap < left ? nap : left, &why, err);
		if (rc == LKC_INTERRUPTED) {
			return lkc_rs_wait_interrupted(s, hold, keys, ttl_ms, queued, err);
		}
		if (rc != LKC_OK) {
			/* A "y" may have been lost with the connection: one step on a new one settles where we are. */
			if (rc != LKC_ERR_IO || failed_sleep++ > 0) {
				return rc;
			}
			step = 1;
			continue;
		}
		failed_sleep = 0;
		if (why == 'y') {
			/* Handed to us with our TTL by whoever freed it: the reply is the acquisition. */
			return LKC_OK;
		}
		/* We watch a hand-off: if it is not picked up within the grace, our next step breaks it. */
		step = why != 'w';
		if (!step) {
			nap = LKC_RS_GRACE + 1;
		}
	}
}

/* Takes the lock: one SET NX, then, when busy and allowed to wait, the queue. */
static lkc_rc lkc_rs_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_keys keys;
	lkc_rc rc;

	if (mode != LKC_MODE_EXCLUSIVE) {
		return lkc_rs_fail(s, err, LKC_ERR_UNSUPPORTED, "shared holds are not supported yet");
	}
	if (lkc_rs_keys_make(s, hold->resource, hold->resource_len, hold->owner,
		wait_ms != 0 ? LKC_RS_NKEYS : 1, &keys) != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->interrupted = 0;
	rc = lkc_rs_try_acquire(s, hold, &keys, ttl_ms, err);
	if (rc == LKC_BUSY && wait_ms != 0) {
		rc = lkc_rs_wait(s, hold, &keys, ttl_ms, wait_ms, err);
	}
	lkc_rs_keys_free(&keys);
	if (rc == LKC_OK) {
		hold->fence = -1;
	} else if (rc == LKC_BUSY) {
		lkc_rs_fail(s, err, LKC_BUSY, "the lock is held by another owner");
	}
	return rc;
}

/*
 * Drops a connection the server has closed while it sat idle (a restart), so
 * that the next command goes out on a fresh one: a release or refresh that
 * fails after sending cannot tell "our script ran" from "our key was lost".
 */
static void lkc_rs_drop_if_closed(lkc_rs_store *s)
{
	struct pollfd pfd;

	if (s->ctx == NULL || s->ctx_pid != lkc_pid()) {
		return;
	}
	pfd.fd = s->ctx->fd;
	pfd.events = POLLIN | POLLRDHUP;
	pfd.revents = 0;
	/* An idle connection has nothing to read: any event is a hang-up, an error or junk. */
	if (poll(&pfd, 1, 0) > 0) {
		lkc_rs_discard(s);
	}
}

/* Deletes the key and hands the lock to the waiters (or lets it live delay_ms more) if it is still ours. */
static lkc_rc lkc_rs_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	char delay[24];
	const char *args[3] = { hold->owner, delay, s->cfg.fair ? "1" : "0" };
	lkc_rs_keys keys;
	lkc_rs_op op;
	lkc_rc rc;

	if (lkc_rs_keys_make(s, hold->resource, hold->resource_len, NULL, 4, &keys) != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	snprintf(delay, sizeof(delay), "%lld", (long long) (delay_ms > 0 ? delay_ms : 0));
	lkc_rs_drop_if_closed(s);
	lkc_rs_op_start(s, &op);
	for (;;) {
		long long result = 0;
		int state;

		rc = lkc_rs_eval_int(s, &op, LKC_RS_RELEASE, &keys, 4, args, 3, &result, err);
		if (rc == LKC_OK) {
			rc = lkc_rs_script_result(s, "release", result, err);
			break;
		}
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
		/* The script may have run before the connection failed: ask whether the key is still ours. */
		rc = lkc_rs_owner_state(s, &op, keys.name[LKC_RS_K_LOCK], keys.len[LKC_RS_K_LOCK], hold->owner,
			&state, err);
		if (rc != LKC_OK) {
			break;
		}
		if (state != 1) {
			rc = LKC_OK;
			break;
		}
	}
	lkc_rs_keys_free(&keys);
	return rc;
}

/* Gives the key a new TTL (or none) if it is still ours. */
static lkc_rc lkc_rs_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	char ttl[24] = "";
	const char *args[2] = { hold->owner, ttl };
	lkc_rs_keys keys;
	lkc_rs_op op;
	lkc_rc rc;

	if (lkc_rs_keys_make(s, hold->resource, hold->resource_len, NULL, 2, &keys) != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	if (ttl_ms != LKC_TTL_NONE) {
		snprintf(ttl, sizeof(ttl), "%lld", (long long) ttl_ms);
	}
	lkc_rs_op_start(s, &op);
	for (;;) {
		long long result = 0;

		rc = lkc_rs_eval_int(s, &op, LKC_RS_REFRESH, &keys, 2, args, 2, &result, err);
		if (rc == LKC_OK) {
			rc = lkc_rs_script_result(s, "refresh", result, err);
			break;
		}
		/* Setting the same TTL twice does no harm, so a failed refresh is simply sent again. */
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
	}
	lkc_rs_keys_free(&keys);
	return rc;
}

/* Reads the key's owner: ours, nobody's or another's. */
static lkc_rc lkc_rs_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key = lkc_rs_key(s, hold->resource, hold->resource_len, "", &key_len);
	lkc_rs_op op;
	int state;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_owner_state(s, &op, key, key_len, hold->owner, &state, err);
	free(key);
	if (rc != LKC_OK) {
		return rc;
	}
	if (state == 0) {
		return lkc_rs_fail(s, err, LKC_EXPIRED, "the lock has expired");
	}
	if (state == -1) {
		return lkc_rs_fail(s, err, LKC_LOST, "the lock expired and another owner holds it now");
	}
	return LKC_OK;
}

/* Runs a one-key command safe to repeat (EXISTS) and returns its integer reply. */
static lkc_rc lkc_rs_key_command(lkc_rs_store *s, const char *command, const char *resource, size_t len,
	long long *result, lkc_err *err)
{
	size_t key_len;
	char *key = lkc_rs_key(s, resource, len, "", &key_len);
	const char *argv[2] = { command, key };
	size_t lens[2] = { strlen(command), key_len };
	lkc_rs_cmd cmd = { 2, argv, lens };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_call(s, &op, &cmd, &reply, err);
	free(key);
	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type == REDIS_REPLY_INTEGER) {
		*result = reply->integer;
	} else {
		rc = lkc_rs_unexpected(s, command, reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/* Whether the resource's lock key exists. */
static lkc_rc lkc_rs_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	long long n = 0;
	lkc_rc rc = lkc_rs_key_command((lkc_rs_store *) store, "EXISTS", resource, len, &n, err);

	if (rc == LKC_OK) {
		*locked = n > 0;
	}
	return rc;
}

/*
 * Deletes the resource's lock key, whoever holds it, and hands the lock to
 * the waiters. Sent again after an ambiguous failure: at worst that breaks
 * the waiter the first run handed the lock to, as forcing is meant to.
 */
static lkc_rc lkc_rs_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	const char *args[1] = { s->cfg.fair ? "1" : "0" };
	lkc_rs_keys keys;
	lkc_rs_op op;
	lkc_rc rc;

	if (lkc_rs_keys_make(s, resource, len, NULL, 4, &keys) != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	for (;;) {
		long long n = 0;

		rc = lkc_rs_eval_int(s, &op, LKC_RS_FORCE, &keys, 4, args, 1, &n, err);
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
	}
	lkc_rs_keys_free(&keys);
	return rc;
}

/* Forgets an inherited hold: nothing is sent, the parent keeps its key. */
static void lkc_rs_abandon(lkc_store *store, lkc_hold *hold)
{
	(void) store;
	(void) hold;
}

/* Frees the store; a healthy connection of a persistent store goes back to the pool. */
static void lkc_rs_destroy(lkc_store *store)
{
	lkc_rs_store *s = (lkc_rs_store *) store;

	if (s->ctx != NULL) {
		if (s->cfg.persistent && s->ctx_pid == lkc_pid() && s->ctx->err == 0) {
			lkc_rs_pool_put(s->pool_key, s->pool_key_len, s->ctx);
			s->ctx = NULL;
		} else {
			lkc_rs_discard(s);
		}
	}
	lkc_redis_config_free(&s->cfg);
	free(s->endpoint);
	free(s->pool_key);
	free(s);
}

static const lkc_store_ops lkc_rs_ops = {
	.name = "redis",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_FENCING,
	.acquire = lkc_rs_acquire,
	.release = lkc_rs_release,
	.refresh = lkc_rs_refresh,
	.check = lkc_rs_check,
	.is_locked = lkc_rs_is_locked,
	.force_release = lkc_rs_force_release,
	.abandon = lkc_rs_abandon,
	.destroy = lkc_rs_destroy,
};

/* Defaults: 127.0.0.1:6379, database 0, a one-second timeout, no prefix, no credentials, fair waiting. */
void lkc_redis_config_init(lkc_redis_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = strdup("127.0.0.1");
	cfg->port = 6379;
	cfg->timeout_ms = 1000;
	cfg->fair = 1;
}

/* Frees the config's strings and leaves them NULL. */
void lkc_redis_config_free(lkc_redis_config *cfg)
{
	free(cfg->host);
	cfg->host = NULL;
	free(cfg->socket_path);
	cfg->socket_path = NULL;
	free(cfg->username);
	cfg->username = NULL;
	free(cfg->password);
	cfg->password = NULL;
	free(cfg->prefix);
	cfg->prefix = NULL;
	cfg->prefix_len = 0;
}

/* A malloc'd printf. */
__attribute__((format(printf, 1, 2)))
static char *lkc_rs_format(const char *fmt, ...)
{
	va_list ap;
	char *out;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (out = malloc((size_t) n + 1)) == NULL) {
		return NULL;
	}
	va_start(ap, fmt);
	vsnprintf(out, (size_t) n + 1, fmt, ap);
	va_end(ap);
	return out;
}

/*
 * What a pooled connection must match: endpoint, user, database and a hash of
 * the password, each length-prefixed so that no two settings read alike.
 */
static char *lkc_rs_make_pool_key(const lkc_rs_store *s, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	char pw_hash[65] = "-";
	const char *user = s->cfg.username;
	char *key;

	if (s->cfg.password != NULL) {
		unsigned char digest[32];

		lkc_sha256(s->cfg.password, strlen(s->cfg.password), digest);
		for (int i = 0; i < 32; i++) {
			pw_hash[2 * i] = hex[digest[i] >> 4];
			pw_hash[2 * i + 1] = hex[digest[i] & 15];
		}
		pw_hash[64] = '\0';
	}
	key = lkc_rs_format("%s%zu:%s u%s%zu:%s d%d p%s", s->cfg.socket_path != NULL ? "unix" : "tcp",
		strlen(s->endpoint), s->endpoint,
		user != NULL ? "+" : "-", user != NULL ? strlen(user) : 0, user != NULL ? user : "",
		s->cfg.database, pw_hash);
	if (key != NULL) {
		*len = strlen(key);
	}
	return key;
}

/*
 * Validates cfg and makes a store that connects on first use. It always takes
 * cfg's strings; a unix socket path, when set, wins over host and port.
 */
lkc_rc lkc_redis_open(lkc_store **out, lkc_redis_config *cfg, lkc_err *err)
{
	lkc_rs_store *s = calloc(1, sizeof(*s));
	const char *problem = NULL;

	*out = NULL;
	if (s == NULL) {
		lkc_redis_config_free(cfg);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory");
	}
	s->base.ops = &lkc_rs_ops;
	s->cfg = *cfg;
	cfg->host = cfg->socket_path = cfg->username = cfg->password = cfg->prefix = NULL;
	cfg->prefix_len = 0;
	if (s->cfg.prefix == NULL) {
		s->cfg.prefix_len = 0;
	}

	if (s->cfg.socket_path == NULL && (s->cfg.host == NULL || s->cfg.host[0] == '\0')) {
		problem = "no host and no socket path given";
	} else if (s->cfg.socket_path != NULL
		&& (s->cfg.socket_path[0] == '\0' || strlen(s->cfg.socket_path) >= sizeof(((struct sockaddr_un *) 0)->sun_path))) {
		problem = "the socket path must be 1 to 107 bytes long";
	} else if (s->cfg.socket_path == NULL && (s->cfg.port < 1 || s->cfg.port > 65535)) {
		problem = "the port must be 1 to 65535";
	} else if (s->cfg.database < 0) {
		problem = "the database must be 0 or more";
	} else if (s->cfg.timeout_ms <= 0) {
		problem = "the timeout must be more than 0";
	}
	if (problem != NULL) {
		lkc_rs_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_INVALID, "Redis: %s", problem);
	}

	if (s->cfg.socket_path != NULL) {
		s->endpoint = strdup(s->cfg.socket_path);
	} else if (strchr(s->cfg.host, ':') != NULL) {
		s->endpoint = lkc_rs_format("[%s]:%d", s->cfg.host, s->cfg.port);
	} else {
		s->endpoint = lkc_rs_format("%s:%d", s->cfg.host, s->cfg.port);
	}
	if (s->endpoint != NULL) {
		s->pool_key = lkc_rs_make_pool_key(s, &s->pool_key_len);
	}
	if (s->pool_key == NULL) {
		lkc_rs_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory");
	}
	pthread_once(&lkc_rs_scripts_once, lkc_rs_scripts_init);
	*out = &s->base;
	return LKC_OK;
}

/* The endpoint that every message of this store names. */
const char *lkc_redis_endpoint(const lkc_store *store)
{
	return ((const lkc_rs_store *) store)->endpoint;
}

/* The hiredis this core was built against. */
const char *lkc_redis_hiredis_version(void)
{
	return LKC_RS_STR(HIREDIS_MAJOR) "." LKC_RS_STR(HIREDIS_MINOR) "." LKC_RS_STR(HIREDIS_PATCH);
}
