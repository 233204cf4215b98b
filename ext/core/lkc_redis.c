/*
 * The Redis store. Every key of a resource starts with its lock key,
 * prefix + "{" + tag + "}" (lkc_rs_lock_key), so all of them share one
 * braced hash tag and, on a cluster, one slot: a script may touch them all.
 *   P{R}            the writer's owner token, with the hold's TTL; or ""
 *                   (no owner is empty) while the readers' set below holds
 *                   anybody, expiring with its longest-lived member
 *   P{R}:r          the readers: a ZSET of owner tokens scored by their expiry
 *                   (ms of the server's TIME; LKC_RS_FOREVER for no TTL), and
 *                   the member "" while a release($delay) keeps the resource
 *                   blocked (the cooldown). Members whose time has passed are dead
 *                   and pruned by the scripts; the set expires with its
 *                   longest-lived member
 *   P{R}:f          the fencing counter (below)
 *   P{R}:q          the queue: a LIST of waiters' tokens in arrival order
 *   P{R}:qd         a HASH token -> "deadline:ttl:mode:ticket": the waiter's
 *                   liveness deadline (server ms), the TTL it asked for, what
 *                   it waits for (w the write hold, r a read hold, p the
 *                   promotion of its read hold) and its ticket (P{R}:t)
 *   P{R}:p          the reader whose promotion is pending, while it waits
 *   P{R}:h          a ZSET of the holds handed over (token -> server ms) that
 *                   their waiter may not have picked up yet; a record goes
 *                   when its holder releases, or when the grace has passed
 *                   and a script looks; it and a wake list with a hand-off
 *                   live as long as the hold handed over (see outlive)
 *   P{R}:m          the mailbox: a HASH token -> "ticket|state|ttl|message"
 *                   beside each record of P{R}:h: the wake list its "y" went
 *                   to (state d) or, when the script could not push it,
 *                   waits to go to (u, see "Declared keys" below)
 *   P{R}:ws         the watcher: the waiter that looks at hand-offs soon,
 *                   or "" (no owner is empty) while a "w" on P{R}:wl waits
 *                   for one to claim the watch
 *   P{R}:t          the ticket counter: each waiter's entry gets a ticket
 *                   (INCR), which names its wake list; a new counter jumps to
 *                   the clock in microseconds, as the fencing counter does,
 *                   so no ticket is given twice
 *   P{R}:w:TICKET   a waiter's wake LIST, on which it sleeps in BLPOP (with
 *                   P{R}:wl); a new entry in the queue gets a new ticket, so a
 *                   stale message in an old list reaches nobody
 *   P{R}:wl         the list every waiter also sleeps on: a "w" there tells
 *                   the one that has slept longest to watch the hand-offs
 *   P{R}:fw         the watchers: a SET of the tokens of waitUntilFree()
 *                   callers, all asleep on P{R}:fl; whoever leaves the
 *                   resource free (no lock key, nobody queued) pushes one "f"
 *                   there per watcher and deletes the set
 *   P{R}:fl         the watchers' wake list
 *
 * Declared keys. Every script declares each key it touches in KEYS, as
 * Redis asks (a cluster checks only that they are in the node's slots):
 * the lock key, the keys above that its --@keys line names, and the wake
 * lists of the tickets the caller knows (see wk in lib/core.lua, the one
 * place that names a list). A waiter knows its own ticket from its queued
 * answer. Whoever holds the resource knows whom its release will serve:
 * every answer that gives a hold, and every hand-off's "y", carries the
 * tickets of the first two waiters (or of the next two arrivals when fewer
 * wait), and a release or refresh declares their lists. In the FIFO case
 * the guess is right and a hand-off is still one script run. When it is
 * wrong (the head left, a promoter came first, a batch of readers, a hold
 * restored by its token), the script still makes the whole hand-off, but
 * leaves its "y" in the mailbox and answers the ticket; the caller then
 * runs the deliver script, which declares that list and pushes the "y"
 * unless the hand-off was taken back or picked up meanwhile. Should the
 * caller never send it, the waiter's own next step (within its liveness
 * deadline) finds the hold its own, or the waiter died and the hold is
 * broken then. Hints ("c", unfair "f") to a list not declared go the same
 * way, without the mailbox. A script that must read a list nobody could
 * guess (reap, force release: to tell whether a "y" was picked up, and to
 * take it back) first answers {"need", tickets}, having written nothing, and
 * is sent again with them. Scripts answer {result, guess, guess, hints...}
 * (lib/end.lua). Each call thus carries a dozen keys, which is over the ten
 * arguments Redis takes from a client before it authenticates: a
 * connection that sends no AUTH sends a PING with its first command, so
 * that a server that wants a password says NOAUTH rather than hang up.
 *
 * The lock key exists whenever anybody holds the resource, in any mode: a
 * single exclusive attempt is therefore MULTI, SET NX PX, INCR and PEXPIRE of
 * the fencing counter, EXISTS of the hand-off records, EXEC (one round trip, no script:
 * an EVALSHA costs the server several times a SET), and isLocked() is two
 * EXISTS. Only when the lock is taken while a hand-off is on record do they
 * run a script, which breaks a hold handed to a waiter that died (below). A release is one script
 * run that deletes the key when it holds our token and nobody waits, before
 * it defines anything else. Everything else (read holds, promotion, demotion,
 * waiting) is one run of the acquire script per step. Under contention the
 * server's time goes into two steps, the hand-off of a write hold and a
 * writer joining the queue; both scripts begin with a short way for the
 * common case of each, which ends as the general way would, in about half
 * its calls, and leaves everything else to it.
 *
 * Fencing: every exclusive take (a first acquisition, a hand-off, a promotion)
 * INCRs P{R}:f in the same transaction or script; a waiter handed the lock
 * gets the value in its wake message ("y<token>"). Each take also gives the
 * counter LKC_RS_FENCE_TTL to live (less for short holds), so that an idle
 * resource leaves nothing behind; nothing else deletes it, force_release
 * included. One found below 10^12 (new, expired, or lost: a restart without
 * persistence, an eviction, a flush) jumps to the
 * server's clock in microseconds, above every token handed out before as long
 * as the clock did not step back and fewer than a million holds a second were
 * taken. The jump needs a script: after a transaction that took the lock on a
 * new counter, one more round trip makes it (once per idle period). A failed
 * attempt burns a token; tokens only ever grow.
 *
 * Shared holds. Readers may hold together while nobody writes; a writer needs
 * no live reader. Writers are preferred: a reader does not join live readers
 * while a writer (or a promoting reader) waits in the queue ahead of it, in
 * either mode, so a stream of overlapping readers cannot starve a writer;
 * readers that come meanwhile queue behind it. When the resource comes free
 * for the queue, its head gets it: a writer alone, or every reader at the head
 * at once. The scripts see from the keys what an owner token holds, so a hold
 * restored by its token is found as writer or among the readers whatever mode
 * the restoring side assumed, and acquire() on a read hold promotes it,
 * acquireRead() on a write hold demotes it:
 *   - promotion: the only live reader converts at once. Otherwise it keeps its
 *     read hold and waits as a writer at the FRONT of the queue, so readers
 *     that come later cannot delay it. Only one promotion waits at a time
 *     (P{R}:p): another reader that tries to promote meanwhile is refused at
 *     once (LKC_BUSY) and keeps its read hold, since each would wait for the
 *     other to stop reading. That rule is what keeps two promoting readers
 *     from deadlocking; the first one still waits for the second to leave (or
 *     for its own timeout).
 *   - demotion: the writer becomes a reader in one step, and the readers at
 *     the head of the queue come in with it.
 * A cooldown (release with a delay) is the reader "": it keeps writers out
 * like any reader, and readers out as well. Owner tokens are 1 to 255 bytes,
 * so the empty string marks the readers and the cooldown where an owner
 * token stands, and no token, whatever its bytes, can pass for either.
 *
 * Waiting. A waiter runs the acquire script with "q" (take the hold if it can,
 * else join the queue and learn how long to sleep and its ticket), then
 * sleeps in BLPOP on its wake list and P{R}:wl for at most what blocks it lasts (the lock key's PTTL, a
 * cooldown's end) and LKC_RS_WAIT_CAP, so a holder that dies is taken over
 * when its TTL runs out and a lost wake-up costs at most that bound. It blocks
 * its own connection: no second connection, and nothing beyond the release
 * script's one EXISTS while nobody waits.
 *
 * Wake messages: "y@<t>#<a>:<b>" a read hold was handed to you,
 * "y<n>@<t>#<a>:<b>" the write hold was, with fencing token n (fair mode), t
 * the server's time of the hand-off in ms, a and b the guess of the tickets
 * your release will serve; "w<ticket>,..." (on P{R}:wl) watch the hand-offs
 * to those tickets (below); "c" check again now; "f" the resource may be free
 * for you (unfair mode), or (on P{R}:fl) for a waitUntilFree() caller.
 *
 * Fair mode (the default): whoever frees the resource (release, demotion,
 * force_release, or a waiter that finds it free) hands it in the same script
 * to the head of the live queue, as above, and pushes "y" to each one served,
 * whose BLPOP reply is then its acquisition without a further round trip. A
 * newcomer thus finds the resource taken while others wait, except in the
 * moments after a holder's TTL ran out or a dead waiter's grace ended, until
 * the waiters see it. A waiter blocked in BLPOP pops the "y" at once, so a "y"
 * still unread after LKC_RS_GRACE means its waiter died (or stalled that long
 * outside its sleep), and one never pushed (see "Declared keys") that the
 * waiter's liveness deadline passed means the same: the watcher, told by a
 * "w", sleeps the grace and then breaks that hold (P{R}:h lists the hand-offs to look at) and hands on. One
 * watcher serves every hand-off of its watch, so a busy queue does not wake a
 * second process per hand-off. A waiter that died therefore costs the others
 * LKC_RS_GRACE (and a round trip) when it reaches the head, and nothing once
 * its liveness deadline has passed (it is dropped unseen); should the watcher
 * die too, the others' own sleeps bound it by LKC_RS_WAIT_CAP. With nobody
 * left waiting, the next single attempt, isLocked() or check breaks such a
 * hold once its grace is over.
 *
 * Unfair mode (fair = 0): freeing the resource wakes the first live waiter
 * that could take it, which takes it if it still can (leaving the queue, and
 * waking the next) and stays queued otherwise; a newcomer may win. Stores of
 * both modes may share a resource safely; only the order is then not promised.
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
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lkc_redis_conn.h"
#include "lkc_redis_topo.h"

#define LKC_RS_STR2(x) #x
#define LKC_RS_STR(x) LKC_RS_STR2(x)

/* Longest single sleep of a waiter (ms), so that its liveness deadline stays fresh. */
#define LKC_RS_WAIT_CAP 2000
/*
 * How late a waiter's sleep may end (ms). Redis times a BLPOP out on its own
 * clock tick, up to 100 ms late on an idle server (hz 10); past this slack the
 * waiter drops the connection and takes its next step on a new one.
 */
#define LKC_RS_SLEEP_SLACK 10
/* How late Redis may end a BLPOP on an idle server (ms): its clock tick at hz 10. */
#define LKC_RS_REDIS_TICK 100
/* How deep calls may nest inside store I/O (signal handlers that use the store). */
#define LKC_RS_NEST_MAX 8
/* The budget of giving back what a failed acquire may have taken (ms), when the lock goes. */
#define LKC_RS_SETTLE_MS 50
/* Margin of a waiter's liveness deadline for its own round trips (ms), beyond its sleep and I/O timeouts. */
#define LKC_RS_SLACK 500
/* Idle connections a store keeps to the nodes of a cluster (or masters of a Sentinel) besides its current one. */
#define LKC_RS_IDLE_MAX 8
/* The most commands one exchange sends (the acquire transaction). */
#define LKC_RS_CMDS_MAX 7
/* The most wake lists one script call declares; a call that would need more goes without (see lkc_rs_run). */
#define LKC_RS_LISTS_MAX 16
/* Redirections (MOVED, ASK) one command may follow: a slot moves once or twice while a command is under way. */
#define LKC_RS_REDIRECTS_MAX 5
/*
 * How long a Sentinel store goes on with a master before it asks the sentinels
 * again (ms): a master cut off and back after a failover takes writes until
 * the sentinels demote it (about 10 s, see the README); a store that asks
 * again leaves it once the sentinels name the new one. A second's round trip
 * to a sentinel, shared by the stores of the process.
 */
#define LKC_RS_SENTINEL_RECHECK_MS 1000
/* The longest pause between two tries of a command the cluster asked to try again (TRYAGAIN, CLUSTERDOWN), ms. */
#define LKC_RS_RETRY_NAP_MAX 100

/*
 * The scripts, one per ext/core/lua/NAME.lua, each the C string lkc_rs_NAME_lua
 * made by scripts/gen-lua.sh (`scripts/gen-lua.sh --print NAME` prints one as
 * it is sent), and the constants they share with the code below.
 */
#include "lkc_redis_lua_const.h"
#include "lkc_redis_lua.h"

/*
 * A script, the SHA-1 Redis names it by in its cache, and the keys it
 * declares: the lock key, the suffixes of the lock key that follow it, and
 * whether wake lists may follow them (then it answers {result, guess, guess,
 * hints...}, see lib/end.lua).
 */
typedef struct {
	const char *name;
	const char *body;
	const char *const *keys;
	int lists;
	char sha[41];
} lkc_rs_lua;

enum {
	LKC_RS_ACQUIRE, LKC_RS_RELEASE, LKC_RS_REFRESH, LKC_RS_CHECK, LKC_RS_FENCE, LKC_RS_FORCE, LKC_RS_WATCH,
	LKC_RS_DELIVER, LKC_RS_NSCRIPTS
};

#define LKC_RS_LUA(name, what) { what, lkc_rs_##name##_lua, lkc_rs_##name##_keys, lkc_rs_##name##_lists, "" }

static lkc_rs_lua lkc_rs_scripts[LKC_RS_NSCRIPTS] = {
	[LKC_RS_ACQUIRE] = LKC_RS_LUA(acquire, "acquire"),
	[LKC_RS_RELEASE] = LKC_RS_LUA(release, "release"),
	[LKC_RS_REFRESH] = LKC_RS_LUA(refresh, "refresh"),
	[LKC_RS_CHECK] = LKC_RS_LUA(check, "check"),
	[LKC_RS_FENCE] = LKC_RS_LUA(fence, "fencing token"),
	[LKC_RS_FORCE] = LKC_RS_LUA(force, "force release"),
	[LKC_RS_WATCH] = LKC_RS_LUA(watch, "wait until free"),
	[LKC_RS_DELIVER] = LKC_RS_LUA(deliver, "deliver"),
};

/*
 * The wake lists a script call declares, by ticket: the caller's own, the
 * tickets its hold guessed would head the queue, those a watch message or a
 * "need" answer named. A script touches no other list (see wk in
 * lib/core.lua).
 */
typedef struct {
	int64_t ticket[LKC_RS_LISTS_MAX];
	int n;
} lkc_rs_lists;

static pthread_once_t lkc_rs_scripts_once = PTHREAD_ONCE_INIT;

typedef struct {
	lkc_store base;
	lkc_redis_config cfg;
	char *endpoint;          /* "host:port" or the socket path, for messages; Sentinel, Cluster: the seeds */
	char *label;             /* how messages begin: "Redis at host:port", "Redis Cluster at h1:p1,h2:p2", ... */
	char at[320];            /* Sentinel, Cluster: the server the last connection went to ("node h:p"), for messages */
	lkc_rtopo topo;          /* who gets a resource's commands */
	char *topo_key;          /* Sentinel, Cluster: what the process remembers of the topology is kept under */
	size_t topo_key_len;
	int recalled;            /* the process's memory of the topology was looked at */
	int conn_node;           /* the node of conn (topo), 0 for the one server */
	int demoted;             /* the last connect found a replica where the master was expected */
	lkc_rconn *idle[LKC_RS_IDLE_MAX]; /* idle connections to other nodes (Sentinel, Cluster) */
	int idle_node[LKC_RS_IDLE_MAX];
	int nidle;
	char *pool_key;          /* what a pooled connection must match to be reused */
	size_t pool_key_len;
	lkc_rtls *tls;           /* NULL: plain text */
	lkc_rconn *conn;         /* NULL until first use and after an I/O error */
	int interrupted;         /* a signal the host wants handled arrived during I/O */
	int abortable;           /* the current exchange is a sleep that such a signal ends */
	int busy;                /* conn is mid-exchange: sent, its replies not all read */
	lkc_rconn *parked[LKC_RS_NEST_MAX]; /* busy connections of outer calls (see lkc_rs_enter) */
	int parked_node[LKC_RS_NEST_MAX];
	int nparked;
	lkc_rconn *spare;        /* the idle connection of the last nested call, for the next one */
	int spare_node;
	uint64_t conn_gen;       /* counts the times conn was dropped or swapped */
	uint64_t write_gen;      /* conn_gen when the last commands were sent: WAIT covers only that connection's writes */
} lkc_rs_store;

/* What lkc_rs_enter set aside for the call's end. */
typedef struct {
	int parked;              /* the outer call's connection was parked */
	int interrupted;
	int abortable;
} lkc_rs_frame;

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
 * The lock key of a resource, prefix + "{" + tag + "}"; every other key of
 * the resource is the lock key and a suffix, so all of them share the hash
 * tag. The tag is the resource itself when it holds no brace. A brace would
 * end the tag early, or leave it empty (a resource starting with '}'), which
 * Redis reads as "hash the whole key" and which would scatter the keys of one
 * resource over a cluster's slots; such a resource is tagged "{" and the hex
 * SHA-256 of its bytes instead, which no brace-free resource can equal.
 * (lkc_redis_open refuses the one prefix that would empty the tag whatever
 * follows.)
 */
static char *lkc_rs_lock_key(const lkc_rs_store *s, const char *resource, size_t len, size_t *key_len)
{
	static const char hex[] = "0123456789abcdef";
	char hashed[1 + 64];
	const char *tag = resource;
	size_t tag_len = len, prefix_len = s->cfg.prefix_len;
	char *key;

	if (memchr(resource, '{', len) != NULL || memchr(resource, '}', len) != NULL) {
		unsigned char digest[32];

		lkc_sha256(resource, len, digest);
		hashed[0] = '{';
		for (int i = 0; i < 32; i++) {
			hashed[1 + 2 * i] = hex[digest[i] >> 4];
			hashed[2 + 2 * i] = hex[digest[i] & 15];
		}
		tag = hashed;
		tag_len = sizeof(hashed);
	}
	key = malloc(prefix_len + tag_len + 3);
	if (key == NULL) {
		return NULL;
	}
	if (prefix_len > 0) {
		memcpy(key, s->cfg.prefix, prefix_len);
	}
	key[prefix_len] = '{';
	memcpy(key + prefix_len + 1, tag, tag_len);
	key[prefix_len + 1 + tag_len] = '}';
	*key_len = prefix_len + tag_len + 2;
	key[*key_len] = '\0';
	return key;
}

/* A key of the resource: its lock key (key_len bytes, binary safe) and suffix; NULL when out of memory. */
static char *lkc_rs_subkey(const char *key, size_t key_len, const char *suffix, size_t *len)
{
	size_t suffix_len = strlen(suffix);
	char *sub = malloc(key_len + suffix_len + 1);

	if (sub != NULL) {
		memcpy(sub, key, key_len);
		memcpy(sub + key_len, suffix, suffix_len + 1);
		*len = key_len + suffix_len;
	}
	return sub;
}

/* Whether the prefix's first '{' is followed at once by '}': an empty hash tag, whatever comes after it. */
static int lkc_rs_prefix_empties_tag(const char *prefix, size_t len)
{
	const char *open = prefix != NULL ? memchr(prefix, '{', len) : NULL;

	return open != NULL && (size_t) (open - prefix) + 1 < len && open[1] == '}';
}

static char *lkc_rs_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fills err with the store's label ("Redis at ENDPOINT: "), the server when a topology has several, and the formatted cause; returns code. */
__attribute__((format(printf, 4, 5)))
static lkc_rc lkc_rs_fail(const lkc_rs_store *s, lkc_err *err, lkc_rc code, const char *fmt, ...)
{
	char cause[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	if (s->at[0] != '\0') {
		return lkc_err_set(err, code, "%s: %s: %s", s->label, s->at, cause);
	}
	return lkc_err_set(err, code, "%s: %s", s->label, cause);
}

/*
 * Copies text that came from the server or the system into out for a
 * message: control bytes become '?', and the password is masked wherever it
 * appears, so no reply can smuggle it into an error.
 */
static void lkc_rs_quote(const lkc_rs_store *s, const char *text, size_t len, char *out, size_t size)
{
	const char *pw = s->cfg.password, *spw = s->cfg.sentinel_password;
	size_t pw_len = pw != NULL ? strlen(pw) : 0, spw_len = spw != NULL ? strlen(spw) : 0, o = 0;

	for (size_t i = 0; i < len && o + 1 < size; ) {
		size_t hidden = pw_len > 0 && len - i >= pw_len && memcmp(text + i, pw, pw_len) == 0 ? pw_len
			: spw_len > 0 && len - i >= spw_len && memcmp(text + i, spw, spw_len) == 0 ? spw_len : 0;

		if (hidden > 0) {
			for (int k = 0; k < 3 && o + 1 < size; k++) {
				out[o++] = '*';
			}
			i += hidden;
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

/* Drops the store's connection; the next operation connects anew. */
static void lkc_rs_discard(lkc_rs_store *s)
{
	lkc_rconn_close(s->conn);
	s->conn = NULL;
	s->conn_node = -1;
	s->conn_gen++;
	s->busy = 0;
}

/* Closes every pooled connection; a forked child closes only its copies of the sockets. */
void lkc_redis_pool_shutdown(void)
{
	lkc_rconn_pool_shutdown();
	lkc_rtopo_cache_shutdown();
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
			/* Late to look (a busy machine): what came in time is still read. */
			return poll(&pfd, 1, 0) > 0 ? 1 : 0;
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

/*
 * Turns a failed step into an error and drops the connection: waited 0 timed
 * out, -1 a poll error (errnum), 1 the connection itself broke.
 */
static lkc_rc lkc_rs_io_fail(lkc_rs_store *s, int waited, int errnum, const char *doing, lkc_err *err)
{
	char cause[256];
	lkc_rc code = LKC_ERR_IO;

	if (waited == 0) {
		snprintf(cause, sizeof(cause), "timed out after %lld ms %s",
			(long long) s->cfg.timeout_ms, doing);
	} else {
		char text[160];
		const char *said = "";
		lkc_rconn_err kind = LKC_RCONN_ERR_IO;

		if (waited > 0 && s->conn != NULL) {
			kind = lkc_rconn_error(s->conn, &errnum, &said);
		}
		lkc_rs_quote_errstr(s, errnum != 0 ? strerror(errnum) : said, text, sizeof(text));
		switch (kind) {
			case LKC_RCONN_ERR_EOF:
				snprintf(cause, sizeof(cause), "connection closed by the server %s", doing);
				break;
			case LKC_RCONN_ERR_PROTOCOL:
				code = LKC_ERR_PROTOCOL;
				snprintf(cause, sizeof(cause), "protocol error %s: %s", doing, text);
				break;
			case LKC_RCONN_ERR_OOM:
				code = LKC_ERR_SYSTEM;
				snprintf(cause, sizeof(cause), "out of memory %s", doing);
				break;
			case LKC_RCONN_ERR_TLS:
				snprintf(cause, sizeof(cause), "%s", text);
				break;
			default:
				snprintf(cause, sizeof(cause), "connection error %s: %s", doing, text);
				break;
		}
	}
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, code, "%s", cause);
}

/* Waits for what a step of the connection wants: as lkc_rs_wait_fd. */
static int lkc_rs_wait_step(lkc_rs_store *s, lkc_rconn_step step, uint64_t deadline)
{
	int w = lkc_rs_wait_fd(s, lkc_rconn_fd(s->conn), step == LKC_RCONN_WANT_WRITE ? POLLOUT : POLLIN, deadline);

	/*
	 * A signal handler that ran in the wait may have forked: the child must not go
	 * on with its parent's exchange (it could read the parent's hand-off, or break
	 * its TLS session), so it drops its copy unused.
	 */
	return lkc_rconn_pid(s->conn) != lkc_pid() ? -3 : w;
}

/* Ends the call of a child forked inside it (lkc_rs_wait_step's -3), without touching the parent's connection. */
static lkc_rc lkc_rs_io_forked(lkc_rs_store *s, lkc_err *err)
{
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, LKC_ERR_STATE, "the process forked inside this call; the child cannot go on with it");
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
/* Fills err for an error reply to what; the server's words are quoted, never the password. */
static lkc_rc lkc_rs_refused(const lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err)
{
	char text[256];

	lkc_rs_quote(s, reply->str, reply->len, text, sizeof(text));
	return lkc_rs_fail(s, err, LKC_ERR_REFUSED, "%s failed: %s", what, text);
}

/* Reads one reply on the store's connection by op's deadline. */
static lkc_rc lkc_rs_read_reply(lkc_rs_store *s, lkc_rs_op *op, redisReply **reply, lkc_err *err)
{
	for (;;) {
		lkc_rconn_step step = lkc_rconn_reply(s->conn, reply);
		int w;

		if (step == LKC_RCONN_DONE) {
			return LKC_OK;
		}
		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_io_fail(s, 1, 0, "waiting for a reply", err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -2 || w == -3) {
			return w == -3 ? lkc_rs_io_forked(s, err) : lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_io_fail(s, w, errno, "waiting for a reply", err);
		}
	}
}

static lkc_rc lkc_rs_exchange(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmds, int n,
	redisReply **replies, lkc_err *err)
{
	static const char *ping_argv[1] = { "PING" };
	static const size_t ping_lens[1] = { 4 };
	lkc_rconn *conn = s->conn;
	lkc_rconn_step step;
	int got = 0, w, ping;

	op->sent = 0;
	for (int i = 0; i < n; i++) {
		replies[i] = NULL;
	}
	if (lkc_ms_left(op->deadline) == 0) {
		return lkc_rs_io_fail(s, 0, 0, "before sending a command", err);
	}
	ping = lkc_rconn_take_ping(conn);
	if (ping && !lkc_rconn_append(conn, 1, ping_argv, ping_lens)) {
		lkc_rs_discard(s);
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
	}
	for (int i = 0; i < n; i++) {
		if (!lkc_rconn_append(conn, cmds[i].argc, cmds[i].argv, cmds[i].lens)) {
			lkc_rs_discard(s);
			return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
		}
	}
	op->sent = 1;
	s->write_gen = s->conn_gen;
	/*
	 * From the first byte sent until the last reply is read the connection is
	 * busy: a bailout in between (a fatal error in a signal handler that runs
	 * in our waits) leaves it so, and then it is closed, never reused.
	 */
	s->busy = 1;
	/* The socket is non-blocking: write first, and wait only when the kernel's buffer is full. */
	while ((step = lkc_rconn_flush(conn)) != LKC_RCONN_DONE) {
		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_io_fail(s, 1, 0, "sending a command", err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -3) {
			return lkc_rs_io_forked(s, err);
		}
		if (w == -2) {
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_io_fail(s, w, errno, "sending a command", err);
		}
	}
	if (ping) {
		redisReply *pong;
		lkc_rc rc = lkc_rs_read_reply(s, op, &pong, err);

		if (rc != LKC_OK) {
			return rc;
		}
		if (pong->type == REDIS_REPLY_ERROR) {
			/* NOAUTH: what follows was refused before it ran, and the server may hang up. */
			rc = lkc_rs_refused(s, "PING", pong, err);
			freeReplyObject(pong);
			lkc_rs_discard(s);
			return rc;
		}
		freeReplyObject(pong);
	}
	while (got < n) {
		lkc_rc rc = lkc_rs_read_reply(s, op, &replies[got], err);

		if (rc != LKC_OK) {
			lkc_rs_free_replies(replies, got);
			return rc;
		}
		got++;
	}
	s->busy = 0;
	return LKC_OK;
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

/* Reports a connect or TLS handshake that failed (waited as lkc_rs_io_fail), and drops the connection. */
static lkc_rc lkc_rs_connect_failed(lkc_rs_store *s, int waited, int errnum, lkc_err *err)
{
	char text[160];
	const char *said = "";
	lkc_rconn_err kind = LKC_RCONN_ERR_IO;

	if (waited == 0) {
		int handshake = s->conn != NULL && lkc_rconn_in_handshake(s->conn);

		lkc_rs_discard(s);
		/* A plain server behind rediss:// waits for the rest of a "command" that never ends. */
		return lkc_rs_fail(s, err, LKC_ERR_IO, "cannot connect: timed out after %lld ms%s",
			(long long) s->cfg.timeout_ms,
			handshake ? " in the TLS handshake (does the server speak TLS on this port?)" : "");
	}
	if (waited > 0) {
		kind = lkc_rconn_error(s->conn, &errnum, &said);
	}
	lkc_rs_quote_errstr(s, errnum != 0 ? strerror(errnum) : said, text, sizeof(text));
	lkc_rs_discard(s);
	if (kind == LKC_RCONN_ERR_OOM) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory connecting");
	}
	return lkc_rs_fail(s, err, LKC_ERR_IO, "cannot connect: %s", text);
}

/* Who a new connection talks to, which says how it logs in. */
typedef enum {
	LKC_RS_TO_SERVER,        /* the one server, or a cluster's node: the DSN's credentials and database */
	LKC_RS_TO_MASTER,        /* a Sentinel's master: as a server, then ROLE must say master */
	LKC_RS_TO_SENTINEL       /* a sentinel: its own credentials, no database */
} lkc_rs_peer;

/*
 * Opens a new connection to node (the one server when the store has one),
 * authenticates and selects the database, all within the operation's
 * deadline; a Sentinel's master must also say it is one (else s->demoted).
 */
static lkc_rc lkc_rs_connect(lkc_rs_store *s, lkc_rs_op *op, int node, lkc_rs_peer peer, lkc_err *err)
{
	const char *auth_argv[3], *select_argv[2], *role_argv[1] = { "ROLE" };
	size_t auth_lens[3], select_lens[2], role_lens[1] = { 4 };
	const char *user = peer == LKC_RS_TO_SENTINEL ? s->cfg.sentinel_username : s->cfg.username;
	const char *password = peer == LKC_RS_TO_SENTINEL ? s->cfg.sentinel_password : s->cfg.password;
	int database = peer == LKC_RS_TO_SENTINEL ? 0 : s->cfg.database;
	lkc_rconn_target target = { .host = s->cfg.host, .port = s->cfg.port, .socket_path = s->cfg.socket_path, .tls = s->tls,
		.deadline = op->deadline };
	lkc_rs_cmd cmds[3];
	redisReply *replies[3];
	char db[16];
	int n = 0, auth = -1, select = -1, role = -1;
	lkc_rconn_step step;
	lkc_rc rc = LKC_OK;

	op->sent = 0;
	s->demoted = 0;
	if (s->topo.kind != LKC_REDIS_SINGLE) {
		target.host = s->topo.nodes[node].host;
		target.port = s->topo.nodes[node].port;
		target.socket_path = NULL;
	}
	if (lkc_ms_left(op->deadline) == 0) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before connecting",
			(long long) s->cfg.timeout_ms);
	}
	s->conn = lkc_rconn_open(&target, &step);
	if (s->conn == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory connecting");
	}
	s->conn_node = node;
	/* The connect and any TLS handshake run within the operation's deadline, as every command does. */
	while (step != LKC_RCONN_DONE) {
		int w;

		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_connect_failed(s, 1, 0, err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -3) {
			return lkc_rs_io_forked(s, err);
		}
		if (w == -2) {
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_connect_failed(s, w, errno, err);
		}
		step = lkc_rconn_handshake(s->conn);
	}

	if (password != NULL || user != NULL) {
		int argc = 0;

		auth_argv[argc] = "AUTH";
		auth_lens[argc++] = 4;
		if (user != NULL) {
			auth_argv[argc] = user;
			auth_lens[argc++] = strlen(user);
		}
		/* An ACL user without a password sends an empty one, which a nopass user accepts. */
		auth_argv[argc] = password != NULL ? password : "";
		auth_lens[argc] = strlen(auth_argv[argc]);
		argc++;
		auth = n;
		cmds[n++] = (lkc_rs_cmd) { argc, auth_argv, auth_lens };
	}
	if (database != 0) {
		snprintf(db, sizeof(db), "%d", database);
		select_argv[0] = "SELECT";
		select_lens[0] = 6;
		select_argv[1] = db;
		select_lens[1] = strlen(db);
		select = n;
		cmds[n++] = (lkc_rs_cmd) { 2, select_argv, select_lens };
	}
	if (peer == LKC_RS_TO_MASTER) {
		role = n;
		cmds[n++] = (lkc_rs_cmd) { 1, role_argv, role_lens };
	}
	if (n == 0) {
		/* Script calls are long (see "Declared keys"); a sentinel gets short commands only. */
		if (peer != LKC_RS_TO_SENTINEL) {
			lkc_rconn_mark_ping(s->conn);
		}
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

		snprintf(what, sizeof(what), "selecting database %d", database);
		rc = lkc_rs_unexpected(s, what, replies[select], err);
	} else if (role >= 0 && !lkc_rtopo_is_master(replies[role])) {
		/* The sentinels named a server that is a replica now: a failover under way, or a sentinel behind. */
		s->demoted = 1;
		rc = replies[role]->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "ROLE", replies[role], err)
			: lkc_rs_fail(s, err, LKC_ERR_REFUSED, "the server the sentinels named is not a master (ROLE)");
	}
	lkc_rs_free_replies(replies, n);
	if (rc != LKC_OK) {
		lkc_rs_discard(s);
	}
	return rc;
}

/* The pool key of a connection to node: the store's settings and the node's address. NULL when out of memory. */
static const char *lkc_rs_node_pool_key(lkc_rs_store *s, int node, size_t *len)
{
	lkc_rtopo_node *n;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		*len = s->pool_key_len;
		return s->pool_key;
	}
	n = &s->topo.nodes[node];
	if (n->pool_key == NULL) {
		n->pool_key = lkc_rs_format("%s n%zu:%s", s->pool_key, strlen(n->name), n->name);
		if (n->pool_key == NULL) {
			return NULL;
		}
		n->pool_key_len = strlen(n->pool_key);
	}
	*len = n->pool_key_len;
	return n->pool_key;
}

/* Lets go of a connection to node: pooled when the store is persistent and it is healthy and idle, else closed. */
static void lkc_rs_put_back(lkc_rs_store *s, lkc_rconn *c, int node)
{
	const char *key;
	size_t key_len;

	if (c != NULL && s->cfg.persistent && node >= 0 && lkc_rconn_pid(c) == lkc_pid() && lkc_rconn_idle(c)
		&& (key = lkc_rs_node_pool_key(s, node, &key_len)) != NULL) {
		lkc_rconn_pool_put(key, key_len, c);
		return;
	}
	lkc_rconn_close(c);
}

/* Sets the current connection aside among the idle ones (Sentinel, Cluster), so that it serves its node again later. */
static void lkc_rs_shelve(lkc_rs_store *s)
{
	if (s->conn == NULL) {
		return;
	}
	if (s->busy || s->conn_node < 0 || s->topo.kind == LKC_REDIS_SINGLE) {
		lkc_rs_discard(s);
		return;
	}
	if (s->nidle == LKC_RS_IDLE_MAX) {
		/* The oldest goes. */
		lkc_rs_put_back(s, s->idle[0], s->idle_node[0]);
		memmove(s->idle, s->idle + 1, (LKC_RS_IDLE_MAX - 1) * sizeof(s->idle[0]));
		memmove(s->idle_node, s->idle_node + 1, (LKC_RS_IDLE_MAX - 1) * sizeof(s->idle_node[0]));
		s->nidle--;
	}
	s->idle[s->nidle] = s->conn;
	s->idle_node[s->nidle++] = s->conn_node;
	s->conn = NULL;
	s->conn_node = -1;
	s->conn_gen++;
}

/* Takes an idle connection of this process to node from the store's set, or NULL. */
static lkc_rconn *lkc_rs_unshelve(lkc_rs_store *s, int node)
{
	for (int i = 0; i < s->nidle; i++) {
		lkc_rconn *c = s->idle[i];

		if (s->idle_node[i] != node) {
			continue;
		}
		s->nidle--;
		memmove(s->idle + i, s->idle + i + 1, (size_t) (s->nidle - i) * sizeof(s->idle[0]));
		memmove(s->idle_node + i, s->idle_node + i + 1, (size_t) (s->nidle - i) * sizeof(s->idle_node[0]));
		if (lkc_rconn_pid(c) == lkc_pid() && lkc_rconn_idle(c)) {
			return c;
		}
		lkc_rconn_close(c);
		return NULL;
	}
	return NULL;
}

/* Names the node of the coming connection in messages. */
static void lkc_rs_at(lkc_rs_store *s, const char *role, int node)
{
	snprintf(s->at, sizeof(s->at), "%s %s", role, s->topo.nodes[node].name);
}

/*
 * Makes s->conn a connection of this process to node: the current one, an
 * idle one of the store's, a pooled one, or a new one (see lkc_rs_connect).
 */
static lkc_rc lkc_rs_use(lkc_rs_store *s, lkc_rs_op *op, int node, lkc_rs_peer peer, lkc_err *err)
{
	if (s->conn != NULL && lkc_rconn_pid(s->conn) != lkc_pid()) {
		lkc_rs_discard(s);
	}
	if (s->conn != NULL && s->conn_node == node) {
		return LKC_OK;
	}
	if (s->topo.kind != LKC_REDIS_SINGLE) {
		lkc_rs_shelve(s);
		lkc_rs_at(s, peer == LKC_RS_TO_SENTINEL ? "sentinel" : peer == LKC_RS_TO_MASTER ? "master" : "node", node);
		if (peer == LKC_RS_TO_SENTINEL) {
			return lkc_rs_connect(s, op, node, peer, err);
		}
		s->conn = lkc_rs_unshelve(s, node);
	}
	if (s->conn == NULL && s->cfg.persistent) {
		size_t key_len;
		const char *key = lkc_rs_node_pool_key(s, node, &key_len);

		s->conn = key != NULL ? lkc_rconn_pool_take(key, key_len) : NULL;
	}
	if (s->conn != NULL) {
		s->conn_node = node;
		return LKC_OK;
	}
	return lkc_rs_connect(s, op, node, peer, err);
}

/* Sleeps ms, or less when the operation's deadline comes first. */
static void lkc_rs_nap(const lkc_rs_op *op, int64_t ms)
{
	int64_t left = lkc_ms_left(op->deadline);
	struct timespec ts;

	if (left < ms) {
		ms = left;
	}
	ts.tv_sec = (time_t) (ms / 1000);
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/*
 * Asks the sentinels, in the order given, for the master's address, each
 * within its share of what is left of the operation's time; the answer is
 * the topology's master. LKC_ERR_IO names every sentinel tried when none
 * named it.
 */
static lkc_rc lkc_rs_ask_sentinels(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	const char *argv[3] = { "SENTINEL", "get-master-addr-by-name", s->cfg.master_name };
	size_t lens[3] = { 8, 23, strlen(s->cfg.master_name) };
	lkc_rs_cmd cmd = { 3, argv, lens };
	char tried[sizeof(err->msg)];
	size_t used = 0, skip = strlen(s->label) + 2;
	lkc_rc last = LKC_ERR_IO;

	tried[0] = '\0';
	lkc_rs_shelve(s);
	for (int i = 0; i < s->topo.nseeds; i++) {
		lkc_rs_op sub = { .deadline = op->deadline };
		int64_t left = lkc_ms_left(op->deadline);
		redisReply *reply;
		lkc_rc rc;

		if (left == 0) {
			break;
		}
		/* A sentinel that does not answer leaves time for the others. */
		if (i + 1 < s->topo.nseeds) {
			sub.deadline = lkc_rs_deadline(left / (s->topo.nseeds - i) > 0 ? left / (s->topo.nseeds - i) : 1);
		}
		rc = lkc_rs_use(s, &sub, i, LKC_RS_TO_SENTINEL, err);
		if (rc == LKC_OK) {
			rc = lkc_rs_exchange(s, &sub, &cmd, 1, &reply, err);
		}
		if (rc == LKC_OK) {
			if (lkc_rtopo_read_master(&s->topo, reply) >= 0) {
				s->topo.checked_ns = lkc_now_ns();
				freeReplyObject(reply);
				lkc_rs_discard(s);
				s->at[0] = '\0';
				return LKC_OK;
			}
			rc = reply->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "SENTINEL get-master-addr-by-name", reply, err)
				: lkc_rs_fail(s, err, LKC_ERR_IO, "does not know master \"%s\"", s->cfg.master_name);
			freeReplyObject(reply);
		}
		lkc_rs_discard(s);
		if (rc == LKC_ERR_SYSTEM) {
			return rc;
		}
		last = rc == LKC_ERR_REFUSED ? LKC_ERR_REFUSED : last;
		/* err reads "LABEL: sentinel h:p: cause": the part after the label goes into the list. */
		if (strlen(err->msg) > skip && used + 2 < sizeof(tried)) {
			used += (size_t) snprintf(tried + used, sizeof(tried) - used, "%s%s", used > 0 ? "; " : "", err->msg + skip);
			if (used >= sizeof(tried)) {
				used = sizeof(tried) - 1;
			}
		}
	}
	s->at[0] = '\0';
	if (used == 0) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before a sentinel could be asked",
			(long long) s->cfg.timeout_ms);
	}
	return lkc_rs_fail(s, err, last, "no sentinel named the master (%s)", tried);
}

/*
 * Reads the cluster's slot map (CLUSTER SLOTS) from the first node that
 * answers, the seeds first, then the nodes the last map named.
 */
static lkc_rc lkc_rs_read_map(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	const char *argv[2] = { "CLUSTER", "SLOTS" };
	size_t lens[2] = { 7, 5 };
	lkc_rs_cmd cmd = { 2, argv, lens };
	int nnodes = s->topo.nnodes;
	/* LKC_OK until a node was asked: none was when the time was up first. */
	lkc_rc rc = LKC_OK;

	for (int k = 0; k < nnodes; k++) {
		/* The node the store is connected to answers first: no connect. */
		int i = k == 0 && s->conn != NULL && s->conn_node >= 0 ? s->conn_node : k;
		lkc_rs_op sub = { .deadline = op->deadline };
		int64_t left = lkc_ms_left(op->deadline);
		redisReply *reply;

		if (k > 0 && i == s->conn_node) {
			continue;
		}
		if (left == 0) {
			break;
		}
		if (k + 1 < nnodes) {
			sub.deadline = lkc_rs_deadline(left / 2 > 0 ? left / 2 : 1);
		}
		rc = lkc_rs_use(s, &sub, i, LKC_RS_TO_SERVER, err);
		if (rc == LKC_OK) {
			rc = lkc_rs_exchange(s, &sub, &cmd, 1, &reply, err);
		}
		if (rc == LKC_OK) {
			if (lkc_rtopo_read_slots(&s->topo, reply, i) == 0) {
				freeReplyObject(reply);
				return LKC_OK;
			}
			rc = reply->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "CLUSTER SLOTS", reply, err)
				: lkc_rs_fail(s, err, LKC_ERR_PROTOCOL, "CLUSTER SLOTS answered no slot map");
			freeReplyObject(reply);
		}
		if (rc == LKC_ERR_SYSTEM) {
			return rc;
		}
	}
	if (rc == LKC_OK) {
		rc = lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before the slot map was read",
			(long long) s->cfg.timeout_ms);
	}
	return rc;
}

/*
 * Asks the sentinels again whether the master is still the one in use, within
 * a quarter of the timeout: a master they no longer name is left now (the
 * next command goes to the new one). When none answers, the store goes on
 * with the master it has and asks again a period later.
 */
static void lkc_rs_recheck_master(lkc_rs_store *s, lkc_rs_op *op)
{
	int was = s->topo.master;
	int64_t quarter = s->cfg.timeout_ms / 4 > 0 ? s->cfg.timeout_ms / 4 : 1;
	lkc_rs_op sub = *op;
	uint64_t by = lkc_rs_deadline(quarter);
	lkc_err ignored;

	if (by < sub.deadline) {
		sub.deadline = by;
	}
	s->topo.master = -1;
	if (lkc_rs_ask_sentinels(s, &sub, &ignored) != LKC_OK) {
		s->topo.master = was;
		s->topo.checked_ns = lkc_now_ns();
		return;
	}
	lkc_rtopo_remember(&s->topo, s->topo_key, s->topo_key_len);
}

/*
 * Makes s->conn the connection to the server that gets the commands of key:
 * the one server, a Sentinel's master, or the master of key's slot in a
 * cluster. Once that is known it costs a lookup; else the sentinels are
 * asked or the slot map is read, and a master that cannot be reached or is
 * a replica now is looked for again until the operation's deadline.
 */
static lkc_rc lkc_rs_ensure(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, lkc_err *err)
{
	int64_t nap = 10;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		if (s->conn != NULL && lkc_rconn_pid(s->conn) != lkc_pid()) {
			lkc_rs_discard(s);
		}
		if (s->conn != NULL) {
			return LKC_OK;
		}
		return lkc_rs_use(s, op, 0, LKC_RS_TO_SERVER, err);
	}
	if (s->topo.kind == LKC_REDIS_SENTINEL && s->topo.master >= 0
		&& lkc_now_ns() - s->topo.checked_ns > (uint64_t) LKC_RS_SENTINEL_RECHECK_MS * 1000000u) {
		lkc_rs_recheck_master(s, op);
	}
	for (int tries = 0; ; tries++) {
		int node = lkc_rtopo_target(&s->topo, key, key_len);
		lkc_rc rc = LKC_OK;

		if (node >= 0 && s->conn != NULL && s->conn_node == node && lkc_rconn_pid(s->conn) == lkc_pid()) {
			return LKC_OK;
		}
		if (node < 0 && !s->recalled) {
			/* Another store of this process may have found it out: a hint, checked by using it. */
			s->recalled = 1;
			if (lkc_rtopo_recall(&s->topo, s->topo_key, s->topo_key_len) == 0) {
				node = lkc_rtopo_target(&s->topo, key, key_len);
			}
		}
		if (node < 0) {
			rc = s->topo.kind == LKC_REDIS_SENTINEL ? lkc_rs_ask_sentinels(s, op, err) : lkc_rs_read_map(s, op, err);
			if (rc == LKC_OK) {
				lkc_rtopo_remember(&s->topo, s->topo_key, s->topo_key_len);
			}
			node = rc == LKC_OK ? lkc_rtopo_target(&s->topo, key, key_len) : -1;
			if (rc == LKC_OK && node < 0) {
				s->at[0] = '\0';
				return lkc_rs_fail(s, err, LKC_ERR_IO, "no master serves slot %u in the cluster's slot map",
					lkc_rtopo_slot(key, key_len));
			}
		}
		if (rc == LKC_OK) {
			rc = lkc_rs_use(s, op, node, s->topo.kind == LKC_REDIS_SENTINEL ? LKC_RS_TO_MASTER : LKC_RS_TO_SERVER, err);
		}
		/* Nobody to ask (no sentinel answered, no node gave a map) ends it; a master that went is looked for again. */
		if (rc == LKC_OK || node < 0 || (rc != LKC_ERR_IO && !s->demoted) || lkc_ms_left(op->deadline) == 0) {
			return rc;
		}
		/* The master went (or is a replica now): find it again, pausing while a failover runs. */
		lkc_rtopo_forget(&s->topo);
		if (tries > 0) {
			lkc_rs_nap(op, nap);
			nap = nap * 2 < LKC_RS_RETRY_NAP_MAX ? nap * 2 : LKC_RS_RETRY_NAP_MAX;
		}
	}
}

/*
 * Connects when needed, then runs n commands once on the server that gets
 * key's commands; a caller that may resend decides after a failure. On a
 * Sentinel or a cluster, what certainly did not run is sent again within
 * the operation's deadline: after MOVED to the node named (the map updated),
 * after ASK once to the node named behind ASKING, after TRYAGAIN or
 * CLUSTERDOWN after a pause, after READONLY (a demoted master) once to the
 * master found anew. A dropped connection makes the store find the master
 * (or read the map) again before its next command.
 */
static lkc_rc lkc_rs_send(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, const lkc_rs_cmd *cmds,
	int n, redisReply **replies, lkc_err *err)
{
	static const char *asking_argv[1] = { "ASKING" };
	static const size_t asking_lens[1] = { 6 };
	lkc_rs_cmd with_asking[2 * LKC_RS_CMDS_MAX];
	redisReply *asked[2 * LKC_RS_CMDS_MAX];
	int at[LKC_RS_CMDS_MAX];
	int ask = -1, redirects = 0, readonly = 0, migrating = 0;
	int64_t nap = 5;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		lkc_rc rc = lkc_rs_ensure(s, op, key, key_len, err);

		return rc != LKC_OK ? rc : lkc_rs_exchange(s, op, cmds, n, replies, err);
	}
	for (;;) {
		lkc_rtopo_redirect redirect = LKC_RTOPO_HERE;
		const redisReply *said = NULL;
		int node = -1;
		lkc_rc rc;

		if (ask >= 0 && n <= LKC_RS_CMDS_MAX) {
			int m = 0, in_multi = 0;

			/* ASKING holds for the next command only, or for a whole transaction when it precedes MULTI. */
			for (int i = 0; i < n; i++) {
				if (!in_multi) {
					with_asking[m++] = (lkc_rs_cmd) { 1, asking_argv, asking_lens };
				}
				if (cmds[i].lens[0] == 5 && strncasecmp(cmds[i].argv[0], "MULTI", 5) == 0) {
					in_multi = 1;
				} else if (cmds[i].lens[0] == 4 && strncasecmp(cmds[i].argv[0], "EXEC", 4) == 0) {
					in_multi = 0;
				}
				at[i] = m;
				with_asking[m++] = cmds[i];
			}
			rc = lkc_rs_use(s, op, ask, LKC_RS_TO_SERVER, err);
			if (rc == LKC_OK) {
				rc = lkc_rs_exchange(s, op, with_asking, m, asked, err);
			}
			if (rc == LKC_OK) {
				for (int i = 0, k = 0; k < m; k++) {
					if (i < n && at[i] == k) {
						replies[i++] = asked[k];
					} else {
						freeReplyObject(asked[k]);
					}
				}
			}
		} else {
			rc = lkc_rs_ensure(s, op, key, key_len, err);
			if (rc == LKC_OK) {
				rc = lkc_rs_exchange(s, op, cmds, n, replies, err);
			}
		}
		if (rc != LKC_OK) {
			if (rc == LKC_ERR_IO || rc == LKC_ERR_PROTOCOL) {
				lkc_rtopo_forget(&s->topo);
			}
			if (migrating && lkc_ms_left(op->deadline) == 0) {
				return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out retrying for slot %u, which is being migrated",
					lkc_rtopo_slot(key, key_len));
			}
			return rc;
		}
		for (int i = 0; i < n && redirect == LKC_RTOPO_HERE; i++) {
			redirect = lkc_rtopo_redirect_of(&s->topo, replies[i], &node);
			said = replies[i];
		}
		if (redirect == LKC_RTOPO_HERE) {
			return LKC_OK;
		}
		if (redirect == LKC_RTOPO_SPLIT) {
			char text[256];

			/* Not sent again: the script may have run in part (see the README on resharding). */
			lkc_rs_quote(s, said->str, said->len, text, sizeof(text));
			lkc_rs_free_replies(replies, n);
			return lkc_rs_fail(s, err, LKC_ERR_REFUSED, "slot %u is being migrated: %s", lkc_rtopo_slot(key, key_len), text);
		}
		/*
		 * A node importing a slot serves a command over several keys (a script,
		 * which declares every key it touches; a transaction) only once it has
		 * them all: that is no redirection, but a wait for the migration's end.
		 */
		if (redirect == LKC_RTOPO_TRYAGAIN && ask >= 0) {
			redirects--;
			migrating = 1;
		}
		ask = -1;
		/* The command did not run: it goes again, or the reply is the error. */
		if (lkc_ms_left(op->deadline) == 0 || (redirect == LKC_RTOPO_READONLY && readonly > 0)
			|| ((redirect == LKC_RTOPO_MOVED || redirect == LKC_RTOPO_ASK) && redirects >= LKC_RS_REDIRECTS_MAX)) {
			char text[256];

			lkc_rs_quote(s, said->str, said->len, text, sizeof(text));
			lkc_rs_free_replies(replies, n);
			return lkc_rs_fail(s, err, redirect == LKC_RTOPO_TRYAGAIN ? LKC_ERR_IO : LKC_ERR_REFUSED,
				"%s for slot %u%s: %s", redirect == LKC_RTOPO_TRYAGAIN ? "timed out retrying"
				: redirect == LKC_RTOPO_READONLY ? "no writable master" : "too many redirections",
				lkc_rtopo_slot(key, key_len), migrating ? ", which is being migrated" : "", text);
		}
		lkc_rs_free_replies(replies, n);
		switch (redirect) {
			case LKC_RTOPO_MOVED:
				redirects++;
				break;
			case LKC_RTOPO_ASK:
				redirects++;
				ask = node;
				break;
			case LKC_RTOPO_READONLY:
				readonly++;
				lkc_rtopo_forget(&s->topo);
				break;
			default:
				lkc_rs_nap(op, nap);
				nap = nap * 2 < LKC_RS_RETRY_NAP_MAX ? nap * 2 : LKC_RS_RETRY_NAP_MAX;
				/* A cluster down for long may have failed over: its map is read again (a migration is no failover). */
				if (nap == LKC_RS_RETRY_NAP_MAX && !migrating) {
					lkc_rtopo_forget(&s->topo);
				}
				break;
		}
	}
}

/* Names every script by the SHA-1 of its body, once per process. */
static void lkc_rs_scripts_init(void)
{
	for (int i = 0; i < LKC_RS_NSCRIPTS; i++) {
		lkc_rs_sha1_hex(lkc_rs_scripts[i].body, strlen(lkc_rs_scripts[i].body), lkc_rs_scripts[i].sha);
	}
}

/*
 * Runs a script on a resource's lock key with nargs arguments, by its SHA-1,
 * loading it with EVAL when the server's script cache does not have it
 * (restart, SCRIPT FLUSH). The keys it gets are the lock key, the keys the
 * script declares after it, and the wake lists of lists (NULL: none).
 * arg_lens gives the arguments' lengths (an owner chosen by the caller may
 * hold NUL bytes), NULL when all are text. *reply is the caller's to free.
 */
static lkc_rc lkc_rs_eval(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	const lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, redisReply **reply,
	lkc_err *err)
{
	const lkc_rs_lua *lua = &lkc_rs_scripts[script];
	int nfixed = 1, nlists = lua->lists && lists != NULL ? lists->n : 0, argc, at = 3;
	size_t size = 24;
	const char **argv;
	size_t *lens;
	char *mem, *next;
	lkc_rs_cmd cmd;
	lkc_rc rc;

	while (lua->keys[nfixed - 1] != NULL) {
		size += key_len + strlen(lua->keys[nfixed - 1]);
		nfixed++;
	}
	size += (size_t) nlists * (key_len + 3 + 21);
	argc = 3 + nfixed + nlists + nargs;
	/* One allocation for the arguments, their lengths and the keys built from the lock key. */
	mem = malloc((size_t) argc * (sizeof(*argv) + sizeof(*lens)) + size);
	if (mem == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
	}
	argv = (const char **) (void *) mem;
	lens = (size_t *) (void *) (mem + (size_t) argc * sizeof(*argv));
	next = mem + (size_t) argc * (sizeof(*argv) + sizeof(*lens));
	argv[0] = "EVALSHA";
	lens[0] = 7;
	argv[1] = lua->sha;
	lens[1] = 40;
	argv[2] = next;
	lens[2] = (size_t) sprintf(next, "%d", nfixed + nlists);
	next += lens[2] + 1;
	argv[at] = key;
	lens[at++] = key_len;
	for (int i = 0; lua->keys[i] != NULL; i++) {
		size_t n = strlen(lua->keys[i]);

		memcpy(next, key, key_len);
		memcpy(next + key_len, lua->keys[i], n);
		argv[at] = next;
		lens[at++] = key_len + n;
		next += key_len + n;
	}
	for (int i = 0; i < nlists; i++) {
		memcpy(next, key, key_len);
		argv[at] = next;
		lens[at++] = key_len + (size_t) sprintf(next + key_len, ":w:%lld", (long long) lists->ticket[i]);
		next += lens[at - 1] + 1;
	}
	for (int i = 0; i < nargs; i++) {
		argv[at] = args[i];
		lens[at++] = arg_lens != NULL ? arg_lens[i] : strlen(args[i]);
	}
	cmd = (lkc_rs_cmd) { argc, argv, lens };
	rc = lkc_rs_send(s, op, key, key_len, &cmd, 1, reply, err);
	if (rc == LKC_OK && (*reply)->type == REDIS_REPLY_ERROR && (*reply)->len >= 8
		&& memcmp((*reply)->str, "NOSCRIPT", 8) == 0) {
		/* The server refused before running anything, so sending the body is not a second run. */
		freeReplyObject(*reply);
		*reply = NULL;
		argv[0] = "EVAL";
		lens[0] = 4;
		argv[1] = lua->body;
		lens[1] = strlen(lua->body);
		rc = lkc_rs_send(s, op, key, key_len, &cmd, 1, reply, err);
	}
	free(mem);
	if (rc == LKC_OK && (*reply)->type == REDIS_REPLY_ERROR) {
		rc = lkc_rs_unexpected(s, lua->name, *reply, err);
		freeReplyObject(*reply);
		*reply = NULL;
	}
	return rc;
}

/* Adds ticket to lists unless it is there; 0, or -1 when lists is full. */
static int lkc_rs_lists_add(lkc_rs_lists *lists, int64_t ticket)
{
	for (int i = 0; i < lists->n; i++) {
		if (lists->ticket[i] == ticket) {
			return 0;
		}
	}
	if (lists->n == LKC_RS_LISTS_MAX) {
		return -1;
	}
	lists->ticket[lists->n++] = ticket;
	return 0;
}

/* A ticket a script answered (a bulk string of digits), 0 when it is none. */
static int64_t lkc_rs_ticket_of(const redisReply *reply)
{
	char digits[24];
	char *end;
	long long n;

	if (reply->type != REDIS_REPLY_STRING || reply->len == 0 || reply->len >= sizeof(digits)) {
		return 0;
	}
	memcpy(digits, reply->str, reply->len);
	digits[reply->len] = '\0';
	n = strtoll(digits, &end, 10);
	return *end == '\0' && n > 0 ? n : 0;
}

/*
 * Pushes the wake-ups a script left to us (hints: "y<ticket>", "c<ticket>",
 * "f<ticket>", see the deliver script) with the deliver script, which
 * declares their lists. Best effort: a hand-off it does not push is taken
 * by its waiter's own next step, a hint only saves a waiter some sleep.
 */
static void lkc_rs_deliver(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len,
	const redisReply *const *hints, int n)
{
	const char *args[LKC_RS_LISTS_MAX];
	size_t lens[LKC_RS_LISTS_MAX];
	lkc_rs_lists lists = { .n = 0 };
	redisReply *reply = NULL;
	lkc_err ignored;
	int nargs = 0;

	for (int i = 0; i < n && nargs < LKC_RS_LISTS_MAX; i++) {
		int64_t ticket;

		if (hints[i]->type != REDIS_REPLY_STRING || hints[i]->len < 2) {
			continue;
		}
		ticket = strtoll(hints[i]->str + 1, NULL, 10);
		if (ticket > 0 && lkc_rs_lists_add(&lists, ticket) == 0) {
			args[nargs] = hints[i]->str;
			lens[nargs++] = hints[i]->len;
		}
	}
	if (nargs > 0 && lkc_rs_eval(s, op, LKC_RS_DELIVER, key, key_len, &lists, args, lens, nargs, &reply, &ignored)
		== LKC_OK) {
		freeReplyObject(reply);
	}
}

/*
 * Runs a script as lkc_rs_eval does, and reads the answer of one that takes
 * wake lists (see lib/end.lua): a "need" (the script wrote nothing) is sent
 * again with the lists it names added to lists (NULL: the call declares none
 * of its own); the hints are pushed (lkc_rs_deliver); heads (NULL: not
 * wanted) gets the guess of the next tickets, 0 when the answer has none.
 * *result is the script's own result, inside *reply, which is the caller's
 * to free.
 */
static lkc_rc lkc_rs_run(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	redisReply **reply, const redisReply **result, lkc_err *err)
{
	lkc_rs_lists none = { .n = 0 };

	if (lists == NULL) {
		lists = &none;
	}
	for (int tries = 0;; tries++) {
		const redisReply *r;
		lkc_rc rc = lkc_rs_eval(s, op, script, key, key_len, lists, args, arg_lens, nargs, reply, err);

		if (rc != LKC_OK) {
			return rc;
		}
		r = *reply;
		*result = r;
		if (!lkc_rs_scripts[script].lists) {
			return LKC_OK;
		}
		if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 && r->element[0]->type == REDIS_REPLY_STRING
			&& r->element[0]->len == 4 && memcmp(r->element[0]->str, "need", 4) == 0) {
			int full = 0;

			for (size_t i = 1; i < r->elements; i++) {
				int64_t ticket = lkc_rs_ticket_of(r->element[i]);

				full |= ticket == 0 || lkc_rs_lists_add(lists, ticket) != 0;
			}
			if (full || tries == 3) {
				rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
				freeReplyObject(*reply);
				*reply = NULL;
				return rc;
			}
			freeReplyObject(*reply);
			*reply = NULL;
			continue;
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements < 3) {
			rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
			freeReplyObject(*reply);
			*reply = NULL;
			return rc;
		}
		*result = r->element[0];
		if (heads != NULL) {
			heads[0] = lkc_rs_ticket_of(r->element[1]);
			heads[1] = lkc_rs_ticket_of(r->element[2]);
		}
		if (r->elements > 3) {
			lkc_rs_deliver(s, op, key, key_len, (const redisReply *const *) r->element + 3, (int) r->elements - 3);
		}
		return LKC_OK;
	}
}

/* As lkc_rs_run, for a script that answers an integer, sent again on a new connection when a failure leaves it unknown whether it ran. */
static lkc_rc lkc_rs_eval_int(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	long long *result, lkc_err *err)
{
	redisReply *reply;
	const redisReply *r;
	lkc_rc rc;

	for (;;) {
		rc = lkc_rs_run(s, op, script, key, key_len, lists, args, arg_lens, nargs, heads, &reply, &r, err);
		if (!lkc_rs_may_recover(op, rc)) {
			break;
		}
		op->recovered = 1;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	if (r->type == REDIS_REPLY_INTEGER) {
		*result = r->integer;
	} else {
		rc = lkc_rs_unexpected(s, lkc_rs_scripts[script].name, r, err);
	}
	freeReplyObject(reply);
	return rc;
}

/* Who holds the resource, per the check script: 1 owner as writer, 2 owner as reader, 0 nobody, -1 somebody else. */
static lkc_rc lkc_rs_state(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, const char *owner,
	size_t owner_len, long long *state, lkc_err *err)
{
	const char *args[2] = { owner, s->cfg.fair ? "1" : "0" };
	const size_t lens[2] = { owner_len, 1 };

	return lkc_rs_eval_int(s, op, LKC_RS_CHECK, key, key_len, NULL, args, lens, 2, NULL, state, err);
}

/*
 * Maps a script's answer about our hold (1 write hold, 2 read hold, 0 none
 * and nobody holds it, -1 somebody else does); sets the hold's mode to what
 * the server says it is, which a hold restored by its token cannot know.
 */
static lkc_rc lkc_rs_hold_result(const lkc_rs_store *s, lkc_hold *hold, const char *what, long long result, lkc_err *err)
{
	if (result == 1 || result == 2) {
		hold->mode = result == 1 ? LKC_MODE_EXCLUSIVE : LKC_MODE_SHARED;
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

/* What one acquire call sends with every step: the keys and the arguments that stay the same. */
typedef struct {
	char *key;               /* the lock key */
	size_t key_len;
	char *wake;              /* our wake list, P{R}:w:<ticket>, once we have a ticket (room for any) */
	size_t wake_len;
	char *shared;            /* the list we also sleep on: P{R}:wl (a waiter), P{R}:fl (a waitUntilFree() caller) */
	size_t shared_len;
	int64_t ticket;          /* the ticket our wake list is named by, 0 none yet */
	char ticket_arg[24];     /* as text, "" none */
	lkc_rs_lists lists;      /* what a step declares: our list, and those a watch message named */
	const char *owner;       /* the hold's owner, owner_len bytes */
	size_t owner_len;
	char ttl[24];            /* ms, "" for none */
	char want;               /* 'w' the write hold, 'r' a read hold */
	char held;               /* what the caller holds now: 'w', 'r' or 'n' */
	char fair;               /* '1' or '0' */
	char stay[24];           /* how long a waiter's liveness deadline lasts (ms) */
} lkc_rs_req;

/* What a step of the acquire script answered. */
typedef enum {
	LKC_RS_TAKEN,            /* the hold is ours; fence is its token for a write hold, else -1 */
	LKC_RS_REFUSED,          /* not taken, not queued (or left the queue) */
	LKC_RS_PROMOTING,        /* not taken: another reader's promotion is pending */
	LKC_RS_QUEUED            /* queued: sleep bound ms at most (-1 no bound) */
} lkc_rs_outcome;

typedef struct {
	lkc_rs_outcome outcome;
	int64_t fence;
	int64_t bound;
	uint64_t sent_ns;        /* monotonic time the step was first sent: before it ran */
	int64_t server_ms;       /* the server's time when it ran (queued answers), -1 unknown */
	int64_t heads[2];        /* taken: the tickets a release is guessed to serve (see heads in lib/core.lua) */
} lkc_rs_answer;

/* Frees what lkc_rs_req_init allocated. */
static void lkc_rs_req_free(lkc_rs_req *req)
{
	free(req->key);
	free(req->wake);
	free(req->shared);
	req->key = req->wake = req->shared = NULL;
}

/* Names our wake list by ticket (0: none yet); a step declares it first. */
static void lkc_rs_req_ticket(lkc_rs_req *req, int64_t ticket)
{
	req->ticket = ticket;
	req->lists.n = 0;
	req->ticket_arg[0] = '\0';
	req->wake_len = 0;
	if (ticket > 0) {
		snprintf(req->ticket_arg, sizeof(req->ticket_arg), "%lld", (long long) ticket);
		req->wake_len = req->key_len + (size_t) sprintf(req->wake + req->key_len, ":w:%s", req->ticket_arg);
		req->lists.ticket[req->lists.n++] = ticket;
	}
}

/*
 * Prepares the steps of an acquire in mode; the wake lists only when
 * waiting (shared: the suffix of the list slept on besides our own). 0, or
 * -1 when out of memory.
 */
static int lkc_rs_req_init(const lkc_rs_store *s, lkc_rs_req *req, const lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, const char *shared)
{
	memset(req, 0, sizeof(*req));
	req->key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &req->key_len);
	if (req->key == NULL) {
		return -1;
	}
	if (shared != NULL) {
		req->wake = malloc(req->key_len + 3 + 21);
		req->shared = lkc_rs_subkey(req->key, req->key_len, shared, &req->shared_len);
		if (req->wake == NULL || req->shared == NULL) {
			lkc_rs_req_free(req);
			return -1;
		}
		memcpy(req->wake, req->key, req->key_len);
	}
	req->owner = hold->owner;
	req->owner_len = hold->owner_len;
	if (ttl_ms != LKC_TTL_NONE) {
		snprintf(req->ttl, sizeof(req->ttl), "%lld", (long long) ttl_ms);
	}
	req->want = mode == LKC_MODE_EXCLUSIVE ? 'w' : 'r';
	req->held = hold->mode == LKC_MODE_EXCLUSIVE ? 'w' : hold->mode == LKC_MODE_SHARED ? 'r' : 'n';
	req->fair = s->cfg.fair ? '1' : '0';
	/* A live waiter runs the script again within one sleep, two I/O timeouts and a margin. */
	snprintf(req->stay, sizeof(req->stay), "%lld", (long long) (LKC_RS_WAIT_CAP + 2 * s->cfg.timeout_ms + LKC_RS_SLACK));
	return 0;
}

/* Reads the acquire script's result (see there). */
static lkc_rc lkc_rs_read_answer(lkc_rs_store *s, const redisReply *reply, lkc_rs_answer *ans, lkc_err *err)
{
	ans->fence = -1;
	ans->bound = -1;
	ans->server_ms = -1;
	if (reply->type == REDIS_REPLY_INTEGER && reply->integer >= -2) {
		if (reply->integer >= 0) {
			ans->outcome = LKC_RS_TAKEN;
			ans->fence = reply->integer > 0 ? reply->integer : -1;
		} else {
			ans->outcome = reply->integer == -1 ? LKC_RS_REFUSED : LKC_RS_PROMOTING;
		}
		return LKC_OK;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 4
		&& reply->element[0]->type == REDIS_REPLY_INTEGER && reply->element[0]->integer == -3
		&& reply->element[1]->type == REDIS_REPLY_INTEGER && reply->element[2]->type == REDIS_REPLY_INTEGER
		&& lkc_rs_ticket_of(reply->element[3]) > 0) {
		ans->outcome = LKC_RS_QUEUED;
		ans->bound = reply->element[1]->integer;
		ans->server_ms = reply->element[2]->integer;
		return LKC_OK;
	}
	return lkc_rs_unexpected(s, "the acquire script", reply, err);
}

/*
 * Runs one step of the acquire script (how: 't', 'q', 'l' or 'i', see
 * there); a queued answer names our wake list by its ticket.
 */
static lkc_rc lkc_rs_step(lkc_rs_store *s, lkc_rs_req *req, char how, lkc_rs_answer *ans, lkc_err *err)
{
	char flags[5] = { req->want, how, req->fair, req->held, '\0' };
	const char *args[5] = { req->owner, req->ttl, flags, req->stay, req->ticket_arg };
	const size_t lens[5] = { req->owner_len, strlen(req->ttl), 4, strlen(req->stay), strlen(req->ticket_arg) };
	redisReply *reply;
	const redisReply *result;
	lkc_rs_op op;
	lkc_rc rc;
	uint64_t sent = lkc_now_ns();

	lkc_rs_op_start(s, &op);
	for (;;) {
		rc = lkc_rs_run(s, &op, LKC_RS_ACQUIRE, req->key, req->key_len, &req->lists, args, lens, 5, ans->heads,
			&reply, &result, err);
		if (rc == LKC_OK) {
			break;
		}
		/* Running a step twice ends as running it once, so one that may have run is simply sent again. */
		if (!lkc_rs_may_recover(&op, rc)) {
			return rc;
		}
		op.recovered = 1;
	}
	rc = lkc_rs_read_answer(s, result, ans, err);
	ans->sent_ns = sent;
	if (rc == LKC_OK && ans->outcome == LKC_RS_QUEUED && req->wake != NULL) {
		lkc_rs_req_ticket(req, lkc_rs_ticket_of(result->element[3]));
	} else if (rc == LKC_OK && req->wake != NULL) {
		/* What a watch message named was for this step. */
		req->lists.n = req->ticket > 0 ? 1 : 0;
	}
	freeReplyObject(reply);
	return rc;
}

/* Reads "<n>" or "<n>:<m>" after a message's '#' into heads, 0 for what is not there. */
static void lkc_rs_read_heads(const char *text, int64_t heads[2])
{
	char *end;

	heads[0] = strtoll(text, &end, 10);
	heads[1] = *end == ':' ? strtoll(end + 1, NULL, 10) : 0;
	for (int i = 0; i < 2; i++) {
		heads[i] = heads[i] > 0 ? heads[i] : 0;
	}
}

/* What woke a sleep (see the top of this file). */
typedef struct {
	char why;                /* the message's first byte, 0 when none came */
	int64_t fence;           /* "y<n>": n, else -1 */
	int64_t at;              /* "y...@<t>": the server's time of the hand-off, else -1 */
	int64_t heads[2];        /* "y...#<a>:<b>": the tickets the hold's release is guessed to serve */
	lkc_rs_lists watch;      /* "w<t>,<t>...": the hand-offs to look at */
} lkc_rs_woken;

/* Reads a wake message of len bytes. */
static void lkc_rs_read_woken(const char *msg, size_t len, lkc_rs_woken *woken)
{
	char text[256];
	char *end, *p;
	long long n;

	woken->why = msg[0];
	if (len >= sizeof(text)) {
		return;
	}
	memcpy(text, msg, len);
	text[len] = '\0';
	if (woken->why == 'w') {
		for (p = text + 1; *p != '\0'; p = *end == ',' ? end + 1 : end) {
			n = strtoll(p, &end, 10);
			if (end == p || n <= 0 || lkc_rs_lists_add(&woken->watch, n) != 0) {
				break;
			}
		}
		return;
	}
	if (woken->why != 'y') {
		return;
	}
	n = strtoll(text + 1, &end, 10);
	if ((*end == '\0' || *end == '@' || *end == '#') && n > 0) {
		woken->fence = n;
	}
	if (*end == '@') {
		n = strtoll(end + 1, &end, 10);
		if ((*end == '\0' || *end == '#') && n > 0) {
			woken->at = n;
		}
	}
	if (*end == '#') {
		lkc_rs_read_heads(end + 1, woken->heads);
	}
}

/*
 * Sleeps in BLPOP on our wake list and the shared one for at most ms (and
 * LKC_RS_SLEEP_SLACK, after which the connection goes), asking Redis for
 * ask ms (<= ms: a sleep whose end need not be precise asks for less, so
 * that Redis's late tick ends it before our deadline); *woken says what
 * woke us. A signal the host wants handled ends the sleep
 * (LKC_INTERRUPTED) and drops the connection, which is blocked mid-command.
 */
static lkc_rc lkc_rs_sleep(lkc_rs_store *s, const lkc_rs_req *req, int64_t ask, int64_t ms, lkc_rs_woken *woken,
	lkc_err *err)
{
	char secs[32];
	const char *argv[4] = { "BLPOP" };
	size_t lens[4] = { 5 };
	lkc_rs_cmd cmd = { 1, argv, lens };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	memset(woken, 0, sizeof(*woken));
	woken->fence = -1;
	woken->at = -1;
	if (req->wake_len > 0) {
		argv[cmd.argc] = req->wake;
		lens[cmd.argc++] = req->wake_len;
	}
	argv[cmd.argc] = req->shared;
	lens[cmd.argc++] = req->shared_len;
	/* Redis 6 and later take fractions of a second; 0 would mean forever, so a sleep lasts 1 ms at least. */
	if (ms < 1) {
		ms = 1;
	}
	if (ask < 1 || ask > ms) {
		ask = ms;
	}
	snprintf(secs, sizeof(secs), "%lld.%03lld", (long long) (ask / 1000), (long long) (ask % 1000));
	argv[cmd.argc] = secs;
	lens[cmd.argc++] = strlen(secs);
	op.deadline = lkc_rs_deadline(ms + LKC_RS_SLEEP_SLACK);
	op.sent = 0;
	op.recovered = 0;
	s->abortable = 1;
	rc = lkc_rs_send(s, &op, req->key, req->key_len, &cmd, 1, &reply, err);
	s->abortable = 0;
	if (rc == LKC_ERR_IO && op.sent && lkc_ms_left(op.deadline) == 0) {
		/* Our sleep is over and Redis has not said so yet: it ends as if nobody woke us (the connection went). */
		return LKC_OK;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_STRING
		&& reply->element[1]->len > 0) {
		lkc_rs_read_woken(reply->element[1]->str, reply->element[1]->len, woken);
	} else if (reply->type != REDIS_REPLY_NIL) {
		rc = lkc_rs_unexpected(s, "BLPOP", reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/*
 * Ends an interrupted wait: leaves the queue and gives back what was handed
 * to us meanwhile. Best effort: when the server cannot be reached, our entry
 * dies with its liveness deadline and a hold handed to us with its grace.
 */
static lkc_rc lkc_rs_wait_interrupted(lkc_rs_store *s, lkc_rs_req *req, int queued, lkc_err *err)
{
	if (queued) {
		lkc_err ignored;
		lkc_rs_answer ans;

		lkc_rs_step(s, req, 'i', &ans, &ignored);
	}
	return lkc_rs_fail(s, err, LKC_INTERRUPTED, "the wait for the lock was interrupted");
}

/* Fills err for an acquire that did not get the hold. */
static lkc_rc lkc_rs_busy(const lkc_rs_store *s, lkc_rs_outcome outcome, lkc_err *err)
{
	if (outcome == LKC_RS_PROMOTING) {
		return lkc_rs_fail(s, err, LKC_BUSY,
			"another reader waits to promote its hold: two promotions would wait for each other");
	}
	return lkc_rs_fail(s, err, LKC_BUSY, "the lock is held by another owner");
}

/*
 * When, on our clock, a hand-off at the server's time at (ms) happened, given
 * the step that queued us last: the hand-off came after that step ran (which
 * emptied our wake list), so it maps the server's clock to ours; rounding and
 * a drift of 0.1% count against us, so our view of the hold never outlives the
 * server's. Never before that step was sent, never after now.
 */
static uint64_t lkc_rs_granted_at(const lkc_rs_answer *queued, int64_t at)
{
	uint64_t now = lkc_now_ns(), t = queued->sent_ns;
	int64_t ms;

	if (at < 0 || queued->server_ms < 0 || at <= queued->server_ms) {
		return t;
	}
	ms = at - queued->server_ms;
	ms -= 1 + ms / 1000;
	if (ms > 0) {
		t += (uint64_t) ms * 1000000u;
	}
	return t < now ? t : now;
}

/*
 * Waits for the hold after the first step (queued) queued us: sleep until
 * woken or what blocks us runs out, step again. LKC_OK, LKC_BUSY when wait_ms
 * ran out, LKC_INTERRUPTED, or an error; neither of the last two leaves an
 * entry behind when the server can still be reached. The hold's granted_ns
 * says when it was granted.
 */
static lkc_rc lkc_rs_wait(lkc_rs_store *s, lkc_hold *hold, lkc_rs_req *req, const lkc_rs_answer *queued,
	int64_t wait_ms, lkc_err *err)
{
	lkc_rs_answer last = *queued;
	int64_t bound = queued->bound;
	uint64_t deadline = wait_ms > 0 ? lkc_rs_deadline(wait_ms) : 0;
	char how = 'q';
	int step = 0, failed_sleep = 0;
	/* One millisecond past what blocks us, it is gone for the next step. */
	int64_t nap = bound >= 0 && bound + 1 < LKC_RS_WAIT_CAP ? bound + 1 : LKC_RS_WAIT_CAP;

	for (;;) {
		int64_t left, ms;
		lkc_rs_woken woken;
		lkc_rc rc;

		/* Also asked without a signal: one that came between two system calls ended none of them. */
		if (s->interrupted || lkc_interrupted()) {
			return lkc_rs_wait_interrupted(s, req, 1, err);
		}
		if (step) {
			lkc_rs_answer ans;

			rc = lkc_rs_step(s, req, how, &ans, err);
			if (rc != LKC_OK) {
				return rc;
			}
			if (ans.outcome == LKC_RS_TAKEN) {
				hold->fence = ans.fence;
				hold->granted_ns = ans.sent_ns;
				memcpy(hold->next, ans.heads, sizeof(hold->next));
				return LKC_OK;
			}
			if (ans.outcome != LKC_RS_QUEUED) {
				return lkc_rs_busy(s, ans.outcome, err);
			}
			last = ans;
			/* The step worked (after a dropped sleep: on a new connection), so a drop before it is settled. */
			failed_sleep = 0;
			if (s->interrupted) {
				return lkc_rs_wait_interrupted(s, req, 1, err);
			}
			nap = ans.bound >= 0 && ans.bound + 1 < LKC_RS_WAIT_CAP ? ans.bound + 1 : LKC_RS_WAIT_CAP;
		}
		left = wait_ms < 0 ? INT64_MAX : lkc_ms_left(deadline);
		if (left == 0) {
			/* The last step still takes a hold handed to us in time, and else leaves the queue. */
			how = 'l';
			step = 1;
			continue;
		}
		/*
		 * A sleep at the cap ends neither the wait nor what blocks us: it asks
		 * Redis for one tick less, so that Redis, which times BLPOP out on its
		 * own tick (up to LKC_RS_REDIS_TICK late), ends it before our
		 * deadline, and a long wait keeps its connection.
		 */
		ms = nap < left ? nap : left;
		rc = lkc_rs_sleep(s, req, ms == LKC_RS_WAIT_CAP && ms < left ? ms - LKC_RS_REDIS_TICK : ms, ms, &woken, err);
		if (rc == LKC_INTERRUPTED) {
			return lkc_rs_wait_interrupted(s, req, 1, err);
		}
		if (rc != LKC_OK) {
			/*
			 * A "y" may have been lost with the connection: one step on a new one
			 * settles where we are. Only when that step fails too (or the sleep
			 * failed twice with no step between) does the wait end.
			 */
			if (rc != LKC_ERR_IO || failed_sleep++ > 0) {
				lkc_err ignored;
				lkc_rs_answer ans;

				/* Giving up while the server may still answer: leave the queue, so that nothing is handed to us. */
				lkc_rs_step(s, req, 'i', &ans, &ignored);
				return rc;
			}
			step = 1;
			continue;
		}
		failed_sleep = 0;
		if (woken.why == 'y') {
			/* Handed to us by whoever freed it: the reply is the acquisition, with its fencing token. */
			hold->fence = req->want == 'w' ? woken.fence : -1;
			hold->granted_ns = lkc_rs_granted_at(&last, woken.at);
			memcpy(hold->next, woken.heads, sizeof(hold->next));
			return LKC_OK;
		}
		/* We watch a hand-off: if it is not picked up within the grace, our next step breaks it. */
		step = woken.why != 'w';
		if (!step) {
			nap = LKC_RS_GRACE + 1;
			for (int i = 0; i < woken.watch.n; i++) {
				lkc_rs_lists_add(&req->lists, woken.watch.ticket[i]);
			}
		}
	}
}

/* Whether a reply is the simple status text. */
static int lkc_rs_is_status(const redisReply *reply, const char *text)
{
	size_t len = strlen(text);

	return reply->type == REDIS_REPLY_STATUS && reply->len == len && memcmp(reply->str, text, len) == 0;
}

/*
 * The fencing token of our write hold, from the fence script (which also
 * makes a new counter jump, see the top of this file).
 */
static lkc_rc lkc_rs_fence_of(lkc_rs_store *s, const char *key, size_t key_len, lkc_hold *hold,
	int64_t *fence, lkc_err *err)
{
	const char *args[1] = { hold->owner };
	const size_t lens[1] = { hold->owner_len };
	long long result = 0;
	lkc_rs_op op;
	lkc_rc rc;

	lkc_rs_op_start(s, &op);
	rc = lkc_rs_eval_int(s, &op, LKC_RS_FENCE, key, key_len, NULL, args, lens, 1, NULL, &result, err);
	if (rc != LKC_OK) {
		return rc;
	}
	if (result > 0) {
		*fence = result;
		return LKC_OK;
	}
	if (result == -2) {
		hold->mode = LKC_MODE_SHARED;
		return lkc_rs_fail(s, err, LKC_ERR_STATE, "a read hold has no fencing token");
	}
	return lkc_rs_hold_result(s, hold, "get a fencing token", result, err);
}

/*
 * One attempt at the write hold by a hold that has none: MULTI, SET NX PX,
 * INCR of the fencing counter, EXEC, in one write and one round trip. The
 * lock key exists whenever anybody holds the resource in any mode, so SET NX
 * is the whole check, and the transaction hands out the token atomically
 * with the take. A failed attempt burns a token. An ambiguous failure is
 * settled by asking who holds the resource, and the attempt is sent again
 * only when nobody does.
 */
static lkc_rc lkc_rs_try_write(lkc_rs_store *s, lkc_hold *hold, lkc_rs_req *req, lkc_err *err)
{
	static const char *names[7] = { "MULTI", "SET", "INCR", "PEXPIRE", "EXISTS", "GET", "EXEC" };
	/* The fencing counter, the hand-off records and the tickets, in one allocation: this is every single attempt's path. */
	size_t sub_len = req->key_len + 2;
	char *keys = malloc(3 * (sub_len + 1));
	char *counter = keys, *handed = keys != NULL ? keys + sub_len + 1 : NULL;
	char *tickets = keys != NULL ? keys + 2 * (sub_len + 1) : NULL;
	const char *multi[1] = { "MULTI" }, *exec[1] = { "EXEC" };
	const char *set[6] = { "SET", req->key, hold->owner, "NX", "PX", req->ttl };
	char keep[24];
	const char *incr[2] = { "INCR", counter }, *exists[2] = { "EXISTS", handed }, *get[2] = { "GET", tickets };
	const char *expire[3] = { "PEXPIRE", counter, keep };
	size_t multi_len[1] = { 5 }, exec_len[1] = { 4 };
	size_t set_len[6] = { 3, req->key_len, req->owner_len, 2, 2, strlen(req->ttl) };
	size_t incr_len[2] = { 4, sub_len }, exists_len[2] = { 6, sub_len }, get_len[2] = { 3, sub_len };
	size_t expire_len[3] = { 7, sub_len, 0 };
	lkc_rs_cmd cmds[7] = {
		{ 1, multi, multi_len }, { req->ttl[0] != '\0' ? 6 : 4, set, set_len }, { 2, incr, incr_len },
		{ 3, expire, expire_len }, { 2, exists, exists_len }, { 2, get, get_len }, { 1, exec, exec_len },
	};
	redisReply *replies[7], *outcome;
	long long ttl = req->ttl[0] != '\0' ? strtoll(req->ttl, NULL, 10) : 0;
	lkc_rs_op op;
	lkc_rc rc;
	int stale = 0;

	if (keys == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	memcpy(counter, req->key, req->key_len);
	memcpy(counter + req->key_len, ":f", 3);
	memcpy(handed, req->key, req->key_len);
	memcpy(handed + req->key_len, ":h", 3);
	memcpy(tickets, req->key, req->key_len);
	memcpy(tickets + req->key_len, ":t", 3);
	/* The counter's life, as the scripts' bump() gives it. */
	snprintf(keep, sizeof(keep), "%lld", ttl > 0 && ttl < LKC_RS_FENCE_TTL / LKC_RS_FENCE_TTLS
		? ttl * LKC_RS_FENCE_TTLS : (long long) LKC_RS_FENCE_TTL);
	expire_len[2] = strlen(keep);
	lkc_rs_op_start(s, &op);
	for (;;) {
		long long state;

		rc = lkc_rs_send(s, &op, req->key, req->key_len, cmds, 7, replies, err);
		if (rc == LKC_OK) {
			break;
		}
		if (!lkc_rs_may_recover(&op, rc)) {
			free(keys);
			return rc;
		}
		op.recovered = 1;
		/* The transaction may have run before the connection failed: the keys tell whether we hold the lock. */
		rc = lkc_rs_state(s, &op, req->key, req->key_len, hold->owner, hold->owner_len, &state, err);
		if (rc != LKC_OK || state != 0) {
			free(keys);
			if (rc == LKC_OK && state == 1) {
				/* Ours, with a token we never read: lkc_fence asks for it when it is wanted. */
				hold->fence = -1;
				return LKC_OK;
			}
			return rc != LKC_OK ? rc : lkc_rs_busy(s, LKC_RS_REFUSED, err);
		}
		/* Nobody holds it, so the transaction did not take it and sending it again is safe. */
	}
	free(keys);
	outcome = replies[6];
	rc = LKC_OK;
	/* A refusal (NOAUTH, OOM, READONLY) shows first on the command that met it. */
	for (int i = 0; i < 7 && rc == LKC_OK; i++) {
		if (replies[i]->type == REDIS_REPLY_ERROR) {
			rc = lkc_rs_refused(s, names[i], replies[i], err);
		}
	}
	for (int i = 1; i < 6 && rc == LKC_OK; i++) {
		if (!lkc_rs_is_status(replies[i], "QUEUED")) {
			rc = lkc_rs_unexpected(s, "the acquire transaction", replies[i], err);
		}
	}
	if (rc == LKC_OK && (!lkc_rs_is_ok(replies[0]) || outcome->type != REDIS_REPLY_ARRAY || outcome->elements != 5
		|| outcome->element[1]->type != REDIS_REPLY_INTEGER || outcome->element[3]->type != REDIS_REPLY_INTEGER)) {
		rc = lkc_rs_unexpected(s, "the acquire transaction", outcome, err);
	} else if (rc == LKC_OK && lkc_rs_is_ok(outcome->element[0])) {
		int64_t last = lkc_rs_ticket_of(outcome->element[4]);

		hold->fence = outcome->element[1]->integer;
		/* Nobody was queued (the lock key was free), so the next two arrivals will head the queue. */
		hold->next[0] = last > 0 ? last + 1 : 0;
		hold->next[1] = last > 0 ? last + 2 : 0;
	} else if (rc == LKC_OK && outcome->element[0]->type == REDIS_REPLY_NIL) {
		rc = lkc_rs_busy(s, LKC_RS_REFUSED, err);
		stale = outcome->element[3]->integer > 0;
	} else if (rc == LKC_OK) {
		rc = lkc_rs_unexpected(s, "SET", outcome->element[0], err);
	}
	lkc_rs_free_replies(replies, 7);
	if (stale) {
		lkc_rs_answer ans;

		/*
		 * The lock was handed to a waiter lately: should that waiter have died
		 * before picking it up, only the script sees it (and breaks the hold).
		 */
		rc = lkc_rs_step(s, req, 't', &ans, err);
		if (rc == LKC_OK && ans.outcome == LKC_RS_TAKEN) {
			hold->fence = ans.fence;
			memcpy(hold->next, ans.heads, sizeof(hold->next));
		} else if (rc == LKC_OK) {
			rc = lkc_rs_busy(s, ans.outcome, err);
		}
		return rc;
	}
	if (rc == LKC_OK && hold->fence < 1000000000000LL) {
		lkc_err ignored;

		/* A new counter: its jump takes the fence script. Should that fail, lkc_fence asks again later. */
		if (lkc_rs_fence_of(s, req->key, req->key_len, hold, &hold->fence, &ignored) != LKC_OK) {
			hold->fence = -1;
		}
	}
	return rc;
}

static lkc_rc lkc_rs_release_io(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err);

/*
 * With replicas > 0: waits until that many replicas have every write this
 * connection made so far (WAIT covers the server's whole replication stream
 * up to our last write, so a hold handed to us, which our BLPOP popped, is
 * covered too). LKC_OK when they have, else an I/O error saying how many did.
 */
static lkc_rc lkc_rs_replicated(lkc_rs_store *s, const char *what, lkc_err *err)
{
	char n[16], ms[24];
	const char *argv[3] = { "WAIT", n, ms };
	size_t lens[3] = { 4, 0, 0 };
	lkc_rs_cmd cmd = { 3, argv, lens };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	if (s->cfg.replicas <= 0) {
		return LKC_OK;
	}
	if (s->conn == NULL || s->write_gen != s->conn_gen) {
		/* WAIT on another connection would count replicas that never saw our write. */
		return lkc_rs_fail(s, err, LKC_ERR_IO, "%s the connection that made it was lost before WAIT could ask %d replica%s",
			what, s->cfg.replicas, s->cfg.replicas == 1 ? "" : "s");
	}
	lens[1] = (size_t) snprintf(n, sizeof(n), "%d", s->cfg.replicas);
	lens[2] = (size_t) snprintf(ms, sizeof(ms), "%lld", (long long) s->cfg.replicas_timeout_ms);
	/* The command's own budget is the timeout plus what WAIT may take. */
	op.deadline = lkc_rs_deadline(s->cfg.timeout_ms + s->cfg.replicas_timeout_ms);
	op.sent = 0;
	op.recovered = 1;
	/* On the connection that wrote, wherever the key's commands go now. */
	rc = lkc_rs_exchange(s, &op, &cmd, 1, &reply, err);
	if (rc != LKC_OK) {
		return rc;
	}
	if (reply->type != REDIS_REPLY_INTEGER) {
		rc = lkc_rs_unexpected(s, "WAIT", reply, err);
	} else if (reply->integer < s->cfg.replicas) {
		rc = lkc_rs_fail(s, err, LKC_ERR_IO, "%s not acknowledged by %d replica%s within %lld ms (%lld did)",
			what, s->cfg.replicas, s->cfg.replicas == 1 ? "" : "s", (long long) s->cfg.replicas_timeout_ms,
			reply->integer);
	}
	freeReplyObject(reply);
	return rc;
}

/* The wake lists our hold's release or refresh declares: those of the tickets it guessed would head the queue. */
static void lkc_rs_guessed(const lkc_hold *hold, lkc_rs_lists *lists)
{
	lists->n = 0;
	for (int i = 0; i < 2; i++) {
		if (hold->next[i] > 0) {
			lkc_rs_lists_add(lists, hold->next[i]);
		}
	}
}

/*
 * Takes the hold in mode, or converts the one we have (promotion, demotion):
 * one step of the acquire script, then, when busy and allowed to wait, the
 * queue.
 */
static lkc_rc lkc_rs_take(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_answer ans;
	lkc_rs_req req;
	lkc_rc rc;

	if (lkc_rs_req_init(s, &req, hold, mode, ttl_ms, wait_ms != 0 ? ":wl" : NULL) != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->interrupted = 0;
	/*
	 * After an attempt whose answer was lost the server may hold our token,
	 * which SET NX would take for somebody else's hold: the script knows it.
	 */
	if (wait_ms == 0 && mode == LKC_MODE_EXCLUSIVE && hold->mode == LKC_MODE_NONE && !hold->unsure) {
		rc = lkc_rs_try_write(s, hold, &req, err);
		hold->unsure = rc != LKC_OK && rc != LKC_BUSY;
		lkc_rs_req_free(&req);
		return rc;
	}
	rc = lkc_rs_step(s, &req, wait_ms != 0 ? 'q' : 't', &ans, err);
	if (rc == LKC_OK) {
		if (ans.outcome == LKC_RS_TAKEN) {
			hold->fence = ans.fence;
			memcpy(hold->next, ans.heads, sizeof(hold->next));
		} else if (ans.outcome == LKC_RS_QUEUED) {
			rc = lkc_rs_wait(s, hold, &req, &ans, wait_ms, err);
		} else {
			rc = lkc_rs_busy(s, ans.outcome, err);
		}
	}
	hold->unsure = rc != LKC_OK && rc != LKC_BUSY;
	lkc_rs_req_free(&req);
	return rc;
}

/*
 * Takes the hold as lkc_rs_take does; with replicas > 0 it counts only once
 * the replicas have it: one that is not acknowledged in time is given back.
 */
static lkc_rc lkc_rs_acquire_io(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_mode before = hold->mode;
	lkc_rc rc = lkc_rs_take(store, hold, mode, ttl_ms, wait_ms, err);

	if (rc != LKC_OK || s->cfg.replicas <= 0) {
		return rc;
	}
	rc = lkc_rs_replicated(s, "the hold was taken but", err);
	if (rc != LKC_OK && before != LKC_MODE_NONE) {
		/* A conversion the server made stays made: the hold says so, in doubt as the message says. */
		hold->mode = mode;
	} else if (rc != LKC_OK) {
		lkc_err ignored;

		/* Never half-held: a hold a failover could lose is no hold. */
		if (lkc_rs_release_io(store, hold, 0, &ignored) == LKC_OK) {
			char said[sizeof(err->msg)];

			hold->mode = LKC_MODE_NONE;
			snprintf(said, sizeof(said), "%s", err->msg);
			lkc_err_set(err, rc, "%s, so it was given back", said);
		} else {
			hold->unsure = 1;
		}
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
	if (s->conn == NULL || lkc_rconn_pid(s->conn) != lkc_pid()) {
		return;
	}
	/* An idle connection has nothing to read: anything is a hang-up, an error or junk. */
	if (!lkc_rconn_idle(s->conn)) {
		lkc_rs_discard(s);
	}
}

/* Gives up our hold, write or read, and hands the resource to the waiters (or keeps it blocked delay_ms more). */
static lkc_rc lkc_rs_release_io(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	char delay[24];
	const char *args[3] = { hold->owner, delay, s->cfg.fair ? "1" : "0" };
	size_t lens[3] = { hold->owner_len, 0, 1 };
	size_t key_len;
	char *key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	lkc_rs_lists lists;
	lkc_rs_op op;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lens[1] = (size_t) snprintf(delay, sizeof(delay), "%lld", (long long) (delay_ms > 0 ? delay_ms : 0));
	lkc_rs_drop_if_closed(s);
	lkc_rs_op_start(s, &op);
	lkc_rs_guessed(hold, &lists);
	for (;;) {
		redisReply *reply;
		const redisReply *result;
		long long state;

		rc = lkc_rs_run(s, &op, LKC_RS_RELEASE, key, key_len, &lists, args, lens, 3, NULL, &reply, &result, err);
		if (rc == LKC_OK) {
			if (result->type == REDIS_REPLY_INTEGER && (result->integer == 0 || result->integer == -1) && hold->unsure
				&& hold->expires_ns != 0 && lkc_now_ns() < hold->expires_ns) {
				/* Our hold cannot have run out yet: it went with our last release, whose answer was lost. */
				rc = LKC_OK;
			} else if (result->type == REDIS_REPLY_INTEGER) {
				rc = lkc_rs_hold_result(s, hold, "release", result->integer, err);
			} else {
				rc = lkc_rs_unexpected(s, "the release script", result, err);
			}
			freeReplyObject(reply);
			break;
		}
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
		/* The script may have run before the connection failed: ask whether the hold is still ours. */
		rc = lkc_rs_state(s, &op, key, key_len, hold->owner, hold->owner_len, &state, err);
		if (rc != LKC_OK) {
			break;
		}
		if (state != 1 && state != 2) {
			rc = LKC_OK;
			break;
		}
	}
	hold->unsure = rc == LKC_ERR_IO;
	free(key);
	return rc;
}

/*
 * The settle op: a release within LKC_RS_SETTLE_MS at most, so that dropping
 * a lock whose acquire met a dead server does not wait a second timeout.
 */
static void lkc_rs_settle_io(lkc_store *store, lkc_hold *hold)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	int64_t timeout_ms = s->cfg.timeout_ms;
	lkc_err ignored;

	if (timeout_ms > LKC_RS_SETTLE_MS) {
		s->cfg.timeout_ms = LKC_RS_SETTLE_MS;
	}
	lkc_rs_release_io(store, hold, 0, &ignored);
	s->cfg.timeout_ms = timeout_ms;
}

/* Gives our hold, write or read, a new TTL (or none) if it is still ours. */
static lkc_rc lkc_rs_refresh_io(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	char ttl[24] = "";
	const char *args[2] = { hold->owner, ttl };
	size_t lens[2] = { hold->owner_len, 0 };
	size_t key_len;
	char *key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	long long result = 0;
	lkc_rs_lists lists;
	lkc_rs_op op;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	if (ttl_ms != LKC_TTL_NONE) {
		snprintf(ttl, sizeof(ttl), "%lld", (long long) ttl_ms);
	}
	lens[1] = strlen(ttl);
	lkc_rs_op_start(s, &op);
	lkc_rs_guessed(hold, &lists);
	/* Setting the same TTL twice does no harm, so a failed refresh is simply sent again. */
	rc = lkc_rs_eval_int(s, &op, LKC_RS_REFRESH, key, key_len, &lists, args, lens, 2, hold->next, &result, err);
	if (rc == LKC_OK) {
		rc = lkc_rs_hold_result(s, hold, "refresh", result, err);
	}
	if (rc == LKC_OK) {
		rc = lkc_rs_replicated(s, "the refresh was made but", err);
	}
	free(key);
	return rc;
}

/* Whether our hold, write or read, is still ours. */
static lkc_rc lkc_rs_check_io(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key;
	long long state = 0;
	lkc_rs_op op;
	lkc_rc rc;

	key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_state(s, &op, key, key_len, hold->owner, hold->owner_len, &state, err);
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
	return lkc_rs_hold_result(s, hold, "check", state, err);
}

/*
 * Whether anybody holds the resource in any mode: the lock key exists exactly
 * then, unless it is a hold handed over to a waiter that died, which only the
 * check script can tell (and breaks); it runs only while a hand-off is on record.
 */
static lkc_rc lkc_rs_is_locked_io(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key = lkc_rs_lock_key(s, resource, len, &key_len);
	size_t handed_len = 0;
	char *handed = key != NULL ? lkc_rs_subkey(key, key_len, ":h", &handed_len) : NULL;
	const char *argv_lock[2] = { "EXISTS", key }, *argv_handed[2] = { "EXISTS", handed };
	size_t lens_lock[2] = { 6, key_len }, lens_handed[2] = { 6, handed_len };
	lkc_rs_cmd cmds[2] = { { 2, argv_lock, lens_lock }, { 2, argv_handed, lens_handed } };
	redisReply *replies[2];
	lkc_rs_op op;
	lkc_rc rc;

	if (handed == NULL) {
		free(key);
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	for (;;) {
		rc = lkc_rs_send(s, &op, key, key_len, cmds, 2, replies, err);
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
	}
	free(handed);
	if (rc == LKC_OK) {
		if (replies[0]->type != REDIS_REPLY_INTEGER || replies[1]->type != REDIS_REPLY_INTEGER) {
			rc = lkc_rs_unexpected(s, "EXISTS", replies[0]->type != REDIS_REPLY_INTEGER ? replies[0] : replies[1], err);
		} else if (replies[0]->integer > 0 && replies[1]->integer > 0) {
			long long state = 0;

			lkc_rs_free_replies(replies, 2);
			/* No owner token is "-": the answer is 0 (nobody) or -1 (somebody). */
			rc = lkc_rs_state(s, &op, key, key_len, "-", 1, &state, err);
			*locked = state != 0;
			free(key);
			return rc;
		} else {
			*locked = replies[0]->integer > 0;
		}
		lkc_rs_free_replies(replies, 2);
	}
	free(key);
	return rc;
}

/*
 * Breaks whoever holds the resource, writer or readers, and hands it to the
 * waiters. Sent again after an ambiguous failure: at worst that breaks the
 * waiter the first run handed the resource to, as forcing is meant to.
 */
static lkc_rc lkc_rs_force_release_io(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	const char *args[1] = { s->cfg.fair ? "1" : "0" };
	size_t key_len;
	char *key = lkc_rs_lock_key(s, resource, len, &key_len);
	long long n = 0;
	lkc_rs_op op;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_eval_int(s, &op, LKC_RS_FORCE, key, key_len, NULL, args, NULL, 1, NULL, &n, err);
	free(key);
	return rc;
}

/* The fencing token of a write hold whose acquisition did not bring it (a restored hold, an ambiguous reply). */
static lkc_rc lkc_rs_fence_io(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key;
	lkc_rc rc;

	key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	rc = lkc_rs_fence_of(s, key, key_len, hold, fence, err);
	free(key);
	return rc;
}

/*
 * One step of a waitUntilFree() caller (how: 'w' watch, 'l' leave): *free is
 * set when nobody holds the resource nor waits for it, else the caller is
 * registered as a watcher and *bound is how long it may sleep before it looks
 * again, *handed whether a hand-off is on record.
 */
static lkc_rc lkc_rs_watch_step(lkc_rs_store *s, const lkc_rs_req *req, char how, int *free_now, int64_t *bound,
	int *handed, lkc_err *err)
{
	const char flag[2] = { how, '\0' };
	const char *args[3] = { req->owner, req->stay, flag };
	redisReply *reply;
	lkc_rs_op op;
	lkc_rc rc;

	lkc_rs_op_start(s, &op);
	for (;;) {
		/* Registering or leaving twice ends as doing it once: a step that may have run is sent again. */
		rc = lkc_rs_eval(s, &op, LKC_RS_WATCH, req->key, req->key_len, NULL, args, NULL, 3, &reply, err);
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	*free_now = 0;
	*bound = -1;
	*handed = 0;
	if (reply->type == REDIS_REPLY_INTEGER && (reply->integer == -1 || reply->integer == 0)) {
		*free_now = reply->integer == -1;
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 && reply->element[0]->type == REDIS_REPLY_INTEGER
		&& reply->element[1]->type == REDIS_REPLY_INTEGER) {
		*bound = reply->element[0]->integer;
		*handed = reply->element[1]->integer == 1;
	} else {
		rc = lkc_rs_unexpected(s, lkc_rs_scripts[LKC_RS_WATCH].name, reply, err);
	}
	freeReplyObject(reply);
	return rc;
}

/*
 * Waits until nobody holds the resource and nobody is queued for it, taking
 * nothing: the caller registers as a watcher and sleeps in BLPOP on a wake
 * list of its own, which whoever leaves the resource free pushes to; every
 * sleep is bounded by the lock key's PTTL (a holder that dies) and
 * LKC_RS_WAIT_CAP. A hand-off on record is looked at with isLocked()'s check
 * once its grace is over, which breaks a hold handed to a waiter that died.
 */
static lkc_rc lkc_rs_wait_free_io(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_rs_deadline(wait_ms) : 0;
	lkc_hold watcher;
	lkc_rs_req req;
	lkc_rc rc;
	int watching = 0;

	memset(&watcher, 0, sizeof(watcher));
	watcher.resource = (char *) resource;
	watcher.resource_len = len;
	if (lkc_token_new(watcher.owner, err) != LKC_OK) {
		return err->code;
	}
	watcher.owner_len = LKC_TOKEN_LEN;
	if (wait_ms == 0) {
		int locked = 0;

		/* One look, as isLocked() takes it (which sees through a dead waiter's hand-off). */
		rc = lkc_rs_is_locked_io(store, resource, len, &locked, err);
		return rc == LKC_OK && locked ? lkc_rs_fail(s, err, LKC_BUSY, "the resource is held") : rc;
	}
	if (lkc_rs_req_init(s, &req, &watcher, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, ":fl") != 0) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	for (;;) {
		int64_t bound, left, nap;
		int free_now, handed, locked;
		lkc_rs_woken woken;

		if (s->interrupted || lkc_interrupted()) {
			rc = lkc_rs_fail(s, err, LKC_INTERRUPTED, "the wait for the resource to be free was interrupted");
			break;
		}
		rc = lkc_rs_watch_step(s, &req, 'w', &free_now, &bound, &handed, err);
		if (rc != LKC_OK || free_now) {
			watching = 0;
			break;
		}
		watching = 1;
		left = wait_ms < 0 ? INT64_MAX : lkc_ms_left(deadline);
		if (left == 0) {
			rc = lkc_rs_fail(s, err, LKC_BUSY, "the resource was still held when the wait ended");
			break;
		}
		/* One millisecond past what holds it, or the grace of a hand-off on record, it is worth a look. */
		nap = handed ? LKC_RS_GRACE + 1 : bound >= 0 && bound + 1 < LKC_RS_WAIT_CAP ? bound + 1 : LKC_RS_WAIT_CAP;
		nap = nap < left ? nap : left;
		rc = lkc_rs_sleep(s, &req, nap == LKC_RS_WAIT_CAP && nap < left ? nap - LKC_RS_REDIS_TICK : nap, nap,
			&woken, err);
		if (rc != LKC_OK && rc != LKC_ERR_IO) {
			break;
		}
		if (handed && woken.why == 0) {
			/* The grace is over: isLocked()'s check breaks a hold handed to a waiter that died. */
			rc = lkc_rs_is_locked_io(store, resource, len, &locked, err);
			if (rc != LKC_OK) {
				break;
			}
		}
	}
	if (watching) {
		int free_now, handed;
		int64_t bound;
		lkc_err ignored;

		/* Leaving is best effort: an entry left behind only costs a push into a list that expires. */
		lkc_rs_watch_step(s, &req, 'l', &free_now, &bound, &handed, &ignored);
	}
	lkc_rs_req_free(&req);
	return rc;
}

/* Forgets an inherited hold: nothing is sent, the parent keeps its key. */
static void lkc_rs_abandon(lkc_store *store, lkc_hold *hold)
{
	(void) store;
	(void) hold;
}

/* Lets go of the store's connection: pooled when it is persistent, healthy and idle, else closed. */
static void lkc_rs_let_go(lkc_rs_store *s)
{
	if (s->conn != NULL && !s->busy) {
		lkc_rs_put_back(s, s->conn, s->conn_node);
		s->conn = NULL;
	}
	lkc_rs_discard(s);
}

/*
 * Starts a store call. User code runs inside our I/O (a signal handler that
 * the host runs while we wait), and it may call the same store: when the
 * connection is mid-exchange, it is parked for the outer call, and this one
 * takes a connection of its own (lkc_rs_leave puts things back). Parked
 * connections of calls that never came back (a bailout) are closed with the
 * store.
 */
static lkc_rc lkc_rs_enter(lkc_rs_store *s, lkc_rs_frame *f, lkc_err *err)
{
	f->parked = 0;
	f->interrupted = s->interrupted;
	f->abortable = s->abortable;
	if (s->conn != NULL && s->busy) {
		if (s->nparked >= LKC_RS_NEST_MAX) {
			return lkc_rs_fail(s, err, LKC_ERR_STATE, "store calls nested %d deep inside its own I/O", LKC_RS_NEST_MAX);
		}
		s->parked_node[s->nparked] = s->conn_node;
		s->parked[s->nparked++] = s->conn;
		f->parked = 1;
		s->conn = NULL;
		s->conn_node = -1;
		s->conn_gen++;
		s->busy = 0;
		/* A heartbeat in a handler calls again and again: the last nested call's connection serves the next. */
		if (s->spare != NULL && lkc_rconn_pid(s->spare) == lkc_pid() && lkc_rconn_idle(s->spare)) {
			s->conn = s->spare;
			s->conn_node = s->spare_node;
		} else {
			lkc_rconn_close(s->spare);
		}
		s->spare = NULL;
	}
	s->interrupted = 0;
	s->abortable = 0;
	return LKC_OK;
}

/* Ends a store call begun by lkc_rs_enter: the outer call gets its connection back. */
static void lkc_rs_leave(lkc_rs_store *s, const lkc_rs_frame *f)
{
	if (f->parked) {
		if (s->conn != NULL && s->spare == NULL && !s->busy && lkc_rconn_pid(s->conn) == lkc_pid()
			&& lkc_rconn_idle(s->conn)) {
			s->spare = s->conn;
			s->spare_node = s->conn_node;
			s->conn = NULL;
		}
		lkc_rs_let_go(s);
		s->conn = s->parked[--s->nparked];
		s->conn_node = s->parked_node[s->nparked];
		s->conn_gen++;
		s->busy = 1;
	}
	s->interrupted = f->interrupted;
	s->abortable = f->abortable;
}

/* Frees the store; a healthy, idle connection of a persistent store goes back to the pool. */
static void lkc_rs_destroy(lkc_store *store)
{
	lkc_rs_store *s = (lkc_rs_store *) store;

	lkc_rs_let_go(s);
	if (s->spare != NULL) {
		s->conn = s->spare;
		s->conn_node = s->spare_node;
		s->spare = NULL;
		lkc_rs_let_go(s);
	}
	while (s->nidle > 0) {
		s->nidle--;
		lkc_rs_put_back(s, s->idle[s->nidle], s->idle_node[s->nidle]);
	}
	while (s->nparked > 0) {
		lkc_rconn_close(s->parked[--s->nparked]);
	}
	lkc_rtls_unref(s->tls);
	lkc_rtopo_free(&s->topo);
	lkc_redis_config_free(&s->cfg);
	free(s->endpoint);
	free(s->label);
	free(s->topo_key);
	free(s->pool_key);
	free(s);
}

/*
 * The store's operations: each runs its I/O between lkc_rs_enter and
 * lkc_rs_leave, so that a call made by user code inside another call's I/O
 * never touches that call's connection.
 */
#define LKC_RS_ENTER(s, f, err) \
	do { \
		lkc_rc enter_rc_ = lkc_rs_enter((s), (f), (err)); \
		if (enter_rc_ != LKC_OK) { \
			return enter_rc_; \
		} \
	} while (0)

static lkc_rc lkc_rs_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_acquire_io(store, hold, mode, ttl_ms, wait_ms, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_release_io(store, hold, delay_ms, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_refresh_io(store, hold, ttl_ms, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_check_io(store, hold, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_is_locked_io(store, resource, len, locked, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_force_release_io(store, resource, len, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_fence_io(store, hold, fence, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static lkc_rc lkc_rs_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_wait_free_io(store, resource, len, wait_ms, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static void lkc_rs_settle(lkc_store *store, lkc_hold *hold)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_err ignored;

	if (lkc_rs_enter(s, &f, &ignored) == LKC_OK) {
		lkc_rs_settle_io(store, hold);
		lkc_rs_leave(s, &f);
	}
}

/*
 * The server's run_id (INFO server): the same whatever name or address reached it.
 * A cluster has no one name for itself: there only the seeds as spelled tell.
 */
static lkc_rc lkc_rs_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	static const char *argv[2] = { "INFO", "server" };
	static const size_t lens[2] = { 4, 6 };
	static const lkc_rs_cmd cmd = { 2, argv, lens };
	lkc_rs_store *s = (lkc_rs_store *) store;
	redisReply *reply;
	lkc_rs_frame f;
	lkc_rs_op op;
	lkc_rc rc;

	*id = NULL;
	*len = 0;
	if (s->cfg.topology == LKC_REDIS_CLUSTER) {
		return lkc_err_set(err, LKC_ERR_UNSUPPORTED, "a Redis Cluster has no name of its own");
	}
	LKC_RS_ENTER(s, &f, err);
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_send(s, &op, "", 0, &cmd, 1, &reply, err);
	if (rc == LKC_OK) {
		const char *at = reply->type == REDIS_REPLY_STRING ? strstr(reply->str, "run_id:") : NULL;

		if (at == NULL) {
			rc = lkc_rs_unexpected(s, "INFO server", reply, err);
		} else {
			at += 7;
			*len = strcspn(at, "\r\n");
			*id = strndup(at, *len);
			if (*id == NULL) {
				rc = lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
			}
		}
		lkc_rs_free_replies(&reply, 1);
	}
	lkc_rs_leave(s, &f);
	return rc;
}

static const lkc_store_ops lkc_rs_ops = {
	.name = "redis",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING,
	.acquire = lkc_rs_acquire,
	.release = lkc_rs_release,
	.refresh = lkc_rs_refresh,
	.check = lkc_rs_check,
	.is_locked = lkc_rs_is_locked,
	.force_release = lkc_rs_force_release,
	.abandon = lkc_rs_abandon,
	.destroy = lkc_rs_destroy,
	.fence = lkc_rs_fence,
	.settle = lkc_rs_settle,
	.wait_free = lkc_rs_wait_free,
	.server_id = lkc_rs_server_id,
};

/* Defaults: 127.0.0.1:6379, database 0, a one-second timeout, no prefix, no credentials, fair waiting. */
void lkc_redis_config_init(lkc_redis_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = strdup("127.0.0.1");
	cfg->port = 6379;
	cfg->timeout_ms = 1000;
	cfg->fair = 1;
	cfg->tls_verify = 1;
	cfg->replicas_timeout_ms = 1000;
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
	for (size_t i = 0; i < cfg->nseeds; i++) {
		free(cfg->seeds[i].host);
	}
	free(cfg->seeds);
	cfg->seeds = NULL;
	cfg->nseeds = 0;
	char **strings[] = { &cfg->master_name, &cfg->sentinel_username, &cfg->sentinel_password,
		&cfg->tls_ca_file, &cfg->tls_ca_dir, &cfg->tls_cert, &cfg->tls_key, &cfg->tls_server_name };
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		free(*strings[i]);
		*strings[i] = NULL;
	}
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
	if (key != NULL && s->cfg.tls) {
		/* A TLS connection is reused only with the very settings that verified it. */
		const char *tls[] = { s->cfg.tls_ca_file, s->cfg.tls_ca_dir, s->cfg.tls_cert, s->cfg.tls_key, s->cfg.tls_server_name };
		char *with = key;

		for (size_t i = 0; with != NULL && i < sizeof(tls) / sizeof(tls[0]); i++) {
			key = lkc_rs_format("%s t%zu:%s", with, tls[i] != NULL ? strlen(tls[i]) : 0, tls[i] != NULL ? tls[i] : "");
			free(with);
			with = key;
		}
		if (key != NULL) {
			key = lkc_rs_format("%s tls v%d", with, s->cfg.tls_verify);
			free(with);
		}
	}
	if (key != NULL) {
		*len = strlen(key);
	}
	return key;
}

/* What is wrong with a Sentinel's or a Cluster's settings, or NULL. */
static const char *lkc_rs_topology_problem(const lkc_redis_config *cfg)
{
	if (cfg->nseeds == 0) {
		return cfg->topology == LKC_REDIS_SENTINEL ? "no sentinel given" : "no cluster node given";
	}
	for (size_t i = 0; i < cfg->nseeds; i++) {
		if (cfg->seeds[i].host == NULL || cfg->seeds[i].host[0] == '\0') {
			return "a seed has no host";
		}
		if (cfg->seeds[i].port < 1 || cfg->seeds[i].port > 65535) {
			return "the port must be 1 to 65535";
		}
	}
	if (cfg->nseeds > LKC_RTOPO_NODES_MAX / 2) {
		return "too many seeds (128 at most)";
	}
	if (cfg->topology == LKC_REDIS_SENTINEL && (cfg->master_name == NULL || cfg->master_name[0] == '\0')) {
		return "no master name given for the sentinels";
	}
	if (cfg->topology == LKC_REDIS_CLUSTER && cfg->database != 0) {
		return "a cluster has database 0 only";
	}
	return NULL;
}

/* The seeds as "h1:p1,h2:p2" for messages; NULL when out of memory. */
static char *lkc_rs_seed_list(const lkc_redis_config *cfg)
{
	size_t size = 1;
	char *list;

	for (size_t i = 0; i < cfg->nseeds; i++) {
		size += strlen(cfg->seeds[i].host) + 16;
	}
	list = malloc(size);
	if (list != NULL) {
		size_t used = 0;

		list[0] = '\0';
		for (size_t i = 0; i < cfg->nseeds; i++) {
			int v6 = strchr(cfg->seeds[i].host, ':') != NULL;

			used += (size_t) snprintf(list + used, size - used, v6 ? "%s[%s]:%d" : "%s%s:%d", i > 0 ? "," : "",
				cfg->seeds[i].host, cfg->seeds[i].port);
		}
	}
	return list;
}

/*
 * Validates cfg and makes a store that connects on first use. It always takes
 * cfg's strings; a unix socket path, when set, wins over host and port.
 */
lkc_rc lkc_redis_open(lkc_store **out, lkc_redis_config *cfg, lkc_err *err)
{
	lkc_rs_store *s;
	const char *problem = NULL;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		lkc_redis_config_free(cfg);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory");
	}
	s->base.ops = &lkc_rs_ops;
	s->cfg = *cfg;
	/* Every string, the new ones of issue 12 too, is the store's now. */
	memset(cfg, 0, sizeof(*cfg));
	if (s->cfg.prefix == NULL) {
		s->cfg.prefix_len = 0;
	}

	if (s->cfg.topology != LKC_REDIS_SINGLE) {
		problem = lkc_rs_topology_problem(&s->cfg);
	} else if (s->cfg.socket_path == NULL && (s->cfg.host == NULL || s->cfg.host[0] == '\0')) {
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
	} else if (lkc_rs_prefix_empties_tag(s->cfg.prefix, s->cfg.prefix_len)) {
		problem = "the prefix must not open its first '{' with '}' at once: Redis would read that empty hash tag "
			"as none and scatter the keys of one resource over the slots of a cluster";
	}
	if (problem != NULL) {
		lkc_rs_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_INVALID, "Redis: %s", problem);
	}
	if (s->cfg.tls) {
		lkc_rc rc = lkc_rtls_new(&s->cfg, &s->tls, err);

		if (rc != LKC_OK) {
			lkc_rs_destroy(&s->base);
			return rc;
		}
	}

	if (s->cfg.topology != LKC_REDIS_SINGLE) {
		s->endpoint = lkc_rs_seed_list(&s->cfg);
	} else if (s->cfg.socket_path != NULL) {
		s->endpoint = strdup(s->cfg.socket_path);
	} else if (strchr(s->cfg.host, ':') != NULL) {
		s->endpoint = lkc_rs_format("[%s]:%d", s->cfg.host, s->cfg.port);
	} else {
		s->endpoint = lkc_rs_format("%s:%d", s->cfg.host, s->cfg.port);
	}
	if (s->endpoint != NULL) {
		s->pool_key = lkc_rs_make_pool_key(s, &s->pool_key_len);
		s->label = s->cfg.topology == LKC_REDIS_SENTINEL
			? lkc_rs_format("Redis master \"%s\" via sentinels %s", s->cfg.master_name, s->endpoint)
			: s->cfg.topology == LKC_REDIS_CLUSTER ? lkc_rs_format("Redis Cluster at %s", s->endpoint)
			: lkc_rs_format("Redis at %s", s->endpoint);
	}
	if (s->pool_key != NULL && s->cfg.topology != LKC_REDIS_SINGLE) {
		static const char hex[] = "0123456789abcdef";
		const char *name = s->cfg.master_name != NULL ? s->cfg.master_name : "";
		const char *user = s->cfg.sentinel_username != NULL ? s->cfg.sentinel_username : "";
		char pw_hash[65] = "-";

		/* Only a store that could ask the sentinels itself starts from what another one found out. */
		if (s->cfg.sentinel_password != NULL) {
			unsigned char digest[32];

			lkc_sha256(s->cfg.sentinel_password, strlen(s->cfg.sentinel_password), digest);
			for (int i = 0; i < 32; i++) {
				pw_hash[2 * i] = hex[digest[i] >> 4];
				pw_hash[2 * i + 1] = hex[digest[i] & 15];
			}
			pw_hash[64] = '\0';
		}
		s->topo_key = lkc_rs_format("%s k%d m%zu:%s su%d%zu:%s sp%s", s->pool_key, (int) s->cfg.topology, strlen(name),
			name, s->cfg.sentinel_username != NULL, strlen(user), user, pw_hash);
		s->topo_key_len = s->topo_key != NULL ? strlen(s->topo_key) : 0;
	}
	if (s->pool_key == NULL || s->label == NULL || (s->cfg.topology != LKC_REDIS_SINGLE && s->topo_key == NULL)
		|| lkc_rtopo_init(&s->topo, &s->cfg, err) != LKC_OK) {
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
