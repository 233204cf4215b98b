/*
 * The Memcached store: token-owned, expiring holds on one or more memcached
 * servers through libmemcached, over the text protocol.
 *
 * A hold is one item: key = prefix + the encoded resource (lkc_memcached_key),
 * value = 'o' + the owner token, expiry = the TTL in whole seconds. Acquire is
 * `add` (stored only when the key is absent). Refresh and release read the item
 * with `gets` (value and cas id), compare the value with our token, and then
 * write with `cas`: a refresh writes our token with the new expiry, a release
 * writes it with a negative expiry, which memcached documents as "expired at
 * once" and which is therefore a delete that happens only if the cas id still
 * matches.
 *
 * Why a release never deletes another owner's hold: between our `gets` and our
 * `cas`, our item may expire (or be evicted, or broken by forceRelease) and
 * another owner may `add` a new one. A new item gets a new cas id, and ids of
 * one server only grow while it runs, so our `cas` answers EXISTS (or NOT_FOUND)
 * and we read again: the other owner's token means LOST, nothing means EXPIRED.
 * A server restart resets the ids, but it also cuts the connection that our
 * `gets` went out on; both commands must run on that one connection (its local
 * port is checked before the `cas`), so a `cas` after a restart is never sent.
 * A plain `delete` after a `gets` would have exactly the race we avoid
 * (Laravel's memcached lock has it).
 *
 * A take whose answer was lost (a timeout, a cut connection) may still run
 * on the server at any later time, storing our value for nobody. The store
 * remembers it (key and value) until it knows (lkc_mc_sweep): at the lock's
 * give-back, at the start of every later call and, for a bounded time, at the
 * store's end, it deletes the item if it holds our value (a cas: another
 * owner's is never touched). A hold without TTL is first written with an
 * expiry (lkc_mc_provisional) and made permanent by a cas once the add is
 * answered, so an add that lands after the store stopped looking runs out by
 * itself, as one with a TTL does.
 *
 * What the store cannot promise: memcached may evict any item under memory
 * pressure, a hold included, and then another owner can take the resource
 * while the first still works. A server started with -M answers "out of
 * memory" instead of evicting: that is a StorageException, never a lost hold.
 *
 * Distribution: a resource always goes to the same server (libketama's
 * consistent hashing over the list given), failed servers are never ejected
 * and keys never re-hashed to another server: a server that is down is an
 * error within the timeout, not a second holder elsewhere.
 *
 * Waiting: memcached cannot notify, so a waiter polls with `add` after a
 * jittered backoff (LKC_MC_BACKOFF_MIN_MS doubling to LKC_MC_BACKOFF_MAX_MS,
 * each sleep a random time in the upper half of the step), bounded by the wait's
 * deadline and ended early by an interrupt the host wants handled. Signals
 * are held off during the I/O itself (lkc_mc_io_begin says why).
 *
 * The settings (server lists, keys) are in lkc_memcached_conf.c.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"
#include "lkc_pool.h"

#include <libmemcached/memcached.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Relative expiries above this many seconds are read by memcached as a unix time. */
#define LKC_MC_RELATIVE_MAX 2592000
/*
 * memcached's clock ticks once a second and counts whole seconds, so an item
 * given N seconds lives between N - 1 and N seconds (one more second of slack
 * covers a late tick): the server gets the TTL rounded up plus this, never less.
 */
#define LKC_MC_CLOCK_SLACK 2
#define LKC_MC_BACKOFF_MIN_MS 5
#define LKC_MC_BACKOFF_MAX_MS 100
/*
 * Giving back a take whose answer was lost (lkc_mc_sweep): each command of a
 * settle gets at most LKC_MC_SETTLE_MS, one at the start of another call at most
 * LKC_MC_SWEEP_MS (the call keeps its own timeout), the store's destruction waits
 * at most LKC_MC_SETTLE_WAIT_MS in all. A take found absent is known not to come
 * once the server has answered for LKC_MC_SETTLE_GRACE_MS: what it had queued
 * before has run by then. At most LKC_MC_UNSETTLED_MAX are remembered.
 */
#define LKC_MC_SETTLE_MS 200
#define LKC_MC_SWEEP_MS 50
#define LKC_MC_SETTLE_WAIT_MS 1000
#define LKC_MC_SETTLE_GRACE_MS 500
#define LKC_MC_UNSETTLED_MAX 64
/* A hold without expiry is first written with at least this many seconds (lkc_mc_provisional). */
#define LKC_MC_PROVISIONAL_MIN_S 5
/* Idle persistent connections kept per process. */
#define LKC_MC_POOL_MAX 16
/* A cas that keeps meeting a changed item gives up after this many reads. */
#define LKC_MC_CAS_TRIES 8

/* The first byte of a value: a hold's owner token follows, or a release's cooldown. */
#define LKC_MC_TAG_OWNER 'o'
#define LKC_MC_TAG_COOLDOWN 'c'

/*
 * A take whose answer was lost: an add that the server may run at any time
 * later, storing value under key for nobody. Kept until known (lkc_mc_sweep).
 */
typedef struct lkc_mc_unsettled {
	struct lkc_mc_unsettled *next;
	char *key;
	size_t key_len;
	char value[LKC_OWNER_MAX + 1];
	size_t value_len;
	pid_t pid;               /* the process that sent the add: only it settles */
	uint64_t answered_ns;    /* when the server first answered a settle without our item, 0 before */
} lkc_mc_unsettled;

typedef struct {
	lkc_store base;
	lkc_memcached_config cfg;
	memcached_st *mc;        /* NULL until first used */
	pid_t mc_pid;            /* process that made mc */
	char *pool_key;          /* what tells persistent connections apart */
	size_t pool_key_len;
	char endpoints[256];     /* "h1:11211,h2:11211", for messages */
	uint64_t rng;            /* backoff jitter */
	/*
	 * Store calls under way: a bailout (a hard time limit) inside libmemcached's
	 * I/O leaves it above 0, and such a handle is freed, never pooled mid-reply.
	 */
	unsigned busy;
	/* While a call runs: the signal mask to sleep with (the caller's), NULL outside calls. */
	const sigset_t *caller_mask;
	lkc_mc_unsettled *unsettled; /* takes whose answer was lost, newest first */
	unsigned nunsettled;
} lkc_mc_store;

/* Handles inherited across fork(): never freed (libmemcached would shut the parent's sockets down). */
typedef struct lkc_mc_orphaned {
	memcached_st *mc;
	struct lkc_mc_orphaned *next;
} lkc_mc_orphaned;

static lkc_mc_orphaned *lkc_mc_orphans;
static pthread_mutex_t lkc_mc_orphans_lock = PTHREAD_MUTEX_INITIALIZER;

/* The store's key of a resource; NULL when out of memory. */
static char *lkc_mc_key(const lkc_mc_store *s, const char *resource, size_t len, size_t *key_len)
{
	return lkc_memcached_key(s->cfg.prefix, s->cfg.prefix_len, resource, len, key_len);
}

/* "host:port" of the server a key goes to, into out. */
static void lkc_mc_server_of(lkc_mc_store *s, const char *key, size_t key_len, char *out, size_t size)
{
	memcached_return_t rc;
	const memcached_instance_st *inst = NULL;

	if (s->mc != NULL && key != NULL) {
		inst = memcached_server_by_key(s->mc, key, key_len, &rc);
	}
	if (inst != NULL) {
		const char *name = memcached_server_name(inst);
		snprintf(out, size, strchr(name, ':') != NULL ? "[%s]:%u" : "%s:%u", name, (unsigned) memcached_server_port(inst));
	} else {
		snprintf(out, size, "%s", s->endpoints);
	}
}

static void lkc_mc_orphan(memcached_st *mc);

/*
 * Drops the store's handle after a failure: the next call starts afresh. A
 * connection cut mid-reply is never reused, and libmemcached's memory of a
 * failed server (it refuses to try it again within the same second) goes too,
 * so a server that came back is used at once.
 */
static void lkc_mc_discard(lkc_mc_store *s)
{
	if (s->mc == NULL) {
		return;
	}
	if (s->mc_pid == lkc_pid()) {
		memcached_free(s->mc);
	} else {
		lkc_mc_orphan(s->mc);
	}
	s->mc = NULL;
}

/*
 * What libmemcached said of the last failure, without its decorations:
 * "(0x...) CONNECTION FAILURE(Connection refused),  host: ... -> file:line"
 * becomes "connection failure (Connection refused)".
 */
static void lkc_mc_cause(lkc_mc_store *s, memcached_return_t rc, char *out, size_t size)
{
	const char *msg = s->mc != NULL && memcached_last_error(s->mc) == rc ? memcached_last_error_message(s->mc) : NULL;
	const char *end;
	size_t used = 0;

	if (msg == NULL || msg[0] == '\0') {
		msg = memcached_strerror(s->mc, rc);
	}
	if (msg[0] == '(' && (end = strchr(msg, ')')) != NULL && end[1] == ' ') {
		msg = end + 2;
	}
	end = strstr(msg, ",  host:");
	if (end == NULL) {
		end = msg + strlen(msg);
	}
	for (const char *c = msg; c < end && used + 2 < size; c++) {
		unsigned char ch = (unsigned char) *c;

		if (ch == '(' && used > 0 && out[used - 1] != ' ') {
			out[used++] = ' ';
		}
		/* libmemcached shouts its names: "CONNECTION FAILURE" reads better in a sentence; the errno text keeps its case. */
		if (ch >= 'A' && ch <= 'Z' && memchr(msg, '(', (size_t) (c - msg)) == NULL) {
			ch = (unsigned char) (ch - 'A' + 'a');
		}
		out[used++] = (ch >= 0x20 && ch < 0x7f) ? (char) ch : '?';
	}
	out[used] = '\0';
}

/* Fills err with "Memcached at SERVER: " and what libmemcached said of rc; returns the result code. */
static lkc_rc lkc_mc_fail(lkc_mc_store *s, const char *key, size_t key_len, memcached_return_t rc,
	const char *doing, lkc_err *err)
{
	char where[300];
	char what[160];
	lkc_rc code = LKC_ERR_IO;
	int errnum = s->mc != NULL ? memcached_last_error_errno(s->mc) : 0;

	lkc_mc_server_of(s, key, key_len, where, sizeof(where));
	switch (rc) {
		case MEMCACHED_TIMEOUT:
			snprintf(what, sizeof(what), "timed out after %lld ms", (long long) s->cfg.timeout_ms);
			break;
		case MEMCACHED_SERVER_ERROR:
		case MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE:
		case MEMCACHED_E2BIG:
			code = LKC_ERR_REFUSED;
			snprintf(what, sizeof(what), "the server refused: %s", memcached_strerror(s->mc, rc));
			break;
		case MEMCACHED_PROTOCOL_ERROR:
		case MEMCACHED_CLIENT_ERROR:
		case MEMCACHED_ERROR:
		case MEMCACHED_UNKNOWN_READ_FAILURE:
			code = LKC_ERR_PROTOCOL;
			snprintf(what, sizeof(what), "protocol error: %s", memcached_strerror(s->mc, rc));
			break;
		case MEMCACHED_MEMORY_ALLOCATION_FAILURE:
			code = LKC_ERR_SYSTEM;
			snprintf(what, sizeof(what), "out of memory");
			break;
		default:
			if (errnum == ETIMEDOUT || errnum == EAGAIN) {
				snprintf(what, sizeof(what), "timed out after %lld ms", (long long) s->cfg.timeout_ms);
			} else {
				lkc_mc_cause(s, rc, what, sizeof(what));
			}
			break;
	}
	lkc_err_set(err, code, "Memcached at %s: %s (%s)", where, what, doing);
	if (code == LKC_ERR_IO || code == LKC_ERR_PROTOCOL) {
		lkc_mc_discard(s);
	}
	return code;
}

/* Sets the timeouts of mc to ms. */
static void lkc_mc_set_timeouts(memcached_st *mc, int64_t ms)
{
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, (uint64_t) ms);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t) ms);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_RCV_TIMEOUT, (uint64_t) ms * 1000u);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SND_TIMEOUT, (uint64_t) ms * 1000u);
}

/* A new, unconnected handle on the store's servers; NULL when out of memory. */
static memcached_st *lkc_mc_create(const lkc_mc_store *s)
{
	memcached_st *mc = memcached_create(NULL);

	if (mc == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < s->cfg.nservers; i++) {
		if (memcached_server_add(mc, s->cfg.servers[i].host, (in_port_t) s->cfg.servers[i].port) != MEMCACHED_SUCCESS) {
			memcached_free(mc);
			return NULL;
		}
	}
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 0);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NO_BLOCK, 1);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
	/* One fixed map from keys to servers (libketama), which a failure never changes. */
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA, 1);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 0);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, 0);
	/* A server that failed is tried again by the next call, not skipped for seconds. */
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0);
	memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, 0);
	lkc_mc_set_timeouts(mc, s->cfg.timeout_ms);
	return mc;
}

/* Whether peer may be the server named name: its address when name is a numeric one, else any. */
static int lkc_mc_same_peer(const struct sockaddr_storage *peer, const char *name)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (name == NULL) {
		return 1;
	}
	if (inet_pton(AF_INET, name, &a4) == 1) {
		return peer->ss_family == AF_INET && memcmp(&((const struct sockaddr_in *) peer)->sin_addr, &a4, sizeof(a4)) == 0;
	}
	if (inet_pton(AF_INET6, name, &a6) == 1) {
		return peer->ss_family == AF_INET6 && memcmp(&((const struct sockaddr_in6 *) peer)->sin6_addr, &a6, sizeof(a6)) == 0;
	}
	return 1;
}

/*
 * Closes, in a forked child, the child's copies of mc's sockets, found by
 * their addresses (libmemcached does not give them out), and keeps mc
 * itself unfreed: memcached_free() would shut the parent's connections down.
 */
static void lkc_mc_orphan(memcached_st *mc)
{
	lkc_mc_orphaned *o = calloc(1, sizeof(*o));
	uint32_t n = memcached_server_count(mc);
	DIR *dir;

	if (n > 0 && (dir = opendir("/proc/self/fd")) != NULL) {
		struct dirent *ent;
		int self = dirfd(dir);

		while ((ent = readdir(dir)) != NULL) {
			struct sockaddr_storage local, peer;
			socklen_t llen = sizeof(local), plen = sizeof(peer);
			int fd = atoi(ent->d_name);
			in_port_t lport, pport;

			if (ent->d_name[0] < '0' || ent->d_name[0] > '9' || fd == self
				|| getsockname(fd, (struct sockaddr *) &local, &llen) != 0
				|| getpeername(fd, (struct sockaddr *) &peer, &plen) != 0) {
				continue;
			}
			if (local.ss_family == AF_INET) {
				lport = ntohs(((struct sockaddr_in *) &local)->sin_port);
				pport = ntohs(((struct sockaddr_in *) &peer)->sin_port);
			} else if (local.ss_family == AF_INET6) {
				lport = ntohs(((struct sockaddr_in6 *) &local)->sin6_port);
				pport = ntohs(((struct sockaddr_in6 *) &peer)->sin6_port);
			} else {
				continue;
			}
			for (uint32_t i = 0; i < n; i++) {
				const memcached_instance_st *inst = memcached_server_instance_by_position(mc, i);

				/* The local port, the server's port and (when it is written as one) its address name one connection. */
				if (inst != NULL && memcached_server_srcport(inst) == lport && memcached_server_port(inst) == pport
					&& lkc_mc_same_peer(&peer, memcached_server_name(inst))) {
					close(fd);
					break;
				}
			}
		}
		closedir(dir);
	}
	pthread_mutex_lock(&lkc_mc_orphans_lock);
	if (o != NULL) {
		o->mc = mc;
		o->next = lkc_mc_orphans;
		lkc_mc_orphans = o;
	}
	pthread_mutex_unlock(&lkc_mc_orphans_lock);
}

/* A pooled handle goes: freed when ours, orphaned when a parent's. */
static void lkc_mc_unpool(void *mc, int ours)
{
	if (ours) {
		memcached_free(mc);
	} else {
		lkc_mc_orphan(mc);
	}
}

/* Idle persistent handles, for the next store of this process with the same settings. */
static lkc_pool lkc_mc_pool = LKC_POOL_INIT(NULL, lkc_mc_unpool, LKC_MC_POOL_MAX);

void lkc_memcached_pool_shutdown(void)
{
	lkc_pool_shutdown(&lkc_mc_pool);
}

/* The store's handle for this process: a forked child leaves its parent's alone and makes its own. */
static lkc_rc lkc_mc_conn(lkc_mc_store *s, lkc_err *err)
{
	if (s->mc != NULL && s->mc_pid != lkc_pid()) {
		lkc_mc_orphan(s->mc);
		s->mc = NULL;
	}
	if (s->mc == NULL) {
		if (s->cfg.persistent) {
			s->mc = lkc_pool_take(&lkc_mc_pool, s->pool_key, s->pool_key_len);
		}
		if (s->mc == NULL) {
			s->mc = lkc_mc_create(s);
		}
		if (s->mc == NULL) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
		}
		s->mc_pid = lkc_pid();
	}
	return LKC_OK;
}

/* The expiry memcached is sent for ttl_ms: whole seconds rounded up, plus the clock's slack; a unix time past 30 days. */
static lkc_rc lkc_mc_exptime(lkc_mc_store *s, int64_t ttl_ms, time_t *exptime, lkc_err *err)
{
	int64_t secs;

	if (ttl_ms == LKC_TTL_NONE) {
		*exptime = 0;
		return LKC_OK;
	}
	secs = ttl_ms / 1000 + (ttl_ms % 1000 != 0) + LKC_MC_CLOCK_SLACK;
	if (secs <= LKC_MC_RELATIVE_MAX) {
		*exptime = (time_t) secs;
		return LKC_OK;
	}
	/* memcached reads a larger number as a unix time of its own clock, which is 32 bits wide. */
	if (secs > INT32_MAX - (int64_t) time(NULL)) {
		return lkc_err_set(err, LKC_ERR_INVALID, "Memcached at %s: a TTL of %lld seconds ends after 2038, past memcached's clock",
			s->endpoints, (long long) (ttl_ms / 1000));
	}
	*exptime = time(NULL) + (time_t) secs;
	return LKC_OK;
}

/* The value of a hold of owner: the tag byte, then the token; out holds LKC_OWNER_MAX + 1 bytes. */
static size_t lkc_mc_value(const lkc_hold *hold, char *out)
{
	out[0] = LKC_MC_TAG_OWNER;
	memcpy(out + 1, hold->owner, hold->owner_len);
	return hold->owner_len + 1;
}

/* What a read found: nothing, our hold, another owner's (or a cooldown). */
typedef enum { LKC_MC_ABSENT, LKC_MC_OURS, LKC_MC_THEIRS } lkc_mc_found;

/* Reads key with gets: what it holds compared with value, and its cas id. */
static lkc_rc lkc_mc_gets(lkc_mc_store *s, const char *key, size_t key_len, const char *value, size_t value_len,
	lkc_mc_found *found, uint64_t *cas, lkc_err *err)
{
	const char *keys[1] = { key };
	size_t lens[1] = { key_len };
	memcached_result_st *res;
	memcached_return_t rc;

	*found = LKC_MC_ABSENT;
	*cas = 0;
	rc = memcached_mget(s->mc, keys, lens, 1);
	if (rc != MEMCACHED_SUCCESS) {
		return lkc_mc_fail(s, key, key_len, rc, "reading the lock", err);
	}
	while ((res = memcached_fetch_result(s->mc, NULL, &rc)) != NULL) {
		const char *got = memcached_result_value(res);
		size_t got_len = memcached_result_length(res);

		*found = got_len == value_len && memcmp(got, value, value_len) == 0 ? LKC_MC_OURS : LKC_MC_THEIRS;
		*cas = memcached_result_cas(res);
		memcached_result_free(res);
	}
	if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && rc != MEMCACHED_SUCCESS) {
		return lkc_mc_fail(s, key, key_len, rc, "reading the lock", err);
	}
	return LKC_OK;
}

/* The local port of the connection to key's server, 0 when not connected. */
static in_port_t lkc_mc_srcport(lkc_mc_store *s, const char *key, size_t key_len)
{
	memcached_return_t rc;
	const memcached_instance_st *inst = memcached_server_by_key(s->mc, key, key_len, &rc);

	return inst != NULL ? memcached_server_srcport(inst) : 0;
}

/*
 * Rewrites the item under key with value and exptime (negative: gone at once)
 * if it still holds ours: LKC_OK, LKC_EXPIRED (absent), LKC_LOST (another
 * value) or an error.
 */
static lkc_rc lkc_mc_rewrite_key(lkc_mc_store *s, const char *key, size_t key_len, const char *ours, size_t ours_len,
	const char *value, size_t value_len, time_t exptime, const char *doing, lkc_err *err)
{
	if (lkc_mc_conn(s, err) != LKC_OK) {
		return err->code;
	}
	for (int tries = 0;; tries++) {
		lkc_mc_found found;
		uint64_t cas;
		in_port_t port;
		memcached_return_t rc;

		if (lkc_mc_gets(s, key, key_len, ours, ours_len, &found, &cas, err) != LKC_OK) {
			return err->code;
		}
		if (found == LKC_MC_ABSENT) {
			return lkc_err_set(err, LKC_EXPIRED, "the lock has expired");
		}
		if (found == LKC_MC_THEIRS) {
			return lkc_err_set(err, LKC_LOST, "the lock expired and another owner holds it now");
		}
		if (tries >= LKC_MC_CAS_TRIES) {
			return lkc_mc_fail(s, key, key_len, MEMCACHED_DATA_EXISTS, doing, err);
		}
		/* The cas id is only good on the connection that read it: a new one may reach a restarted server. */
		port = lkc_mc_srcport(s, key, key_len);
		if (port == 0) {
			return lkc_mc_fail(s, key, key_len, MEMCACHED_CONNECTION_FAILURE, doing, err);
		}
		rc = memcached_cas(s->mc, key, key_len, value, value_len, exptime, 0, cas);
		if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_STORED) {
			if (lkc_mc_srcport(s, key, key_len) != port) {
				return lkc_mc_fail(s, key, key_len, MEMCACHED_CONNECTION_FAILURE, doing, err);
			}
			return LKC_OK;
		}
		if (rc != MEMCACHED_DATA_EXISTS && rc != MEMCACHED_NOTFOUND) {
			return lkc_mc_fail(s, key, key_len, rc, doing, err);
		}
		/* The item changed under us: read again to tell expired from lost. */
	}
}

/* Rewrites our hold with value and exptime if it is still ours: see lkc_mc_rewrite_key. */
static lkc_rc lkc_mc_rewrite(lkc_mc_store *s, const lkc_hold *hold, const char *value, size_t value_len,
	time_t exptime, const char *doing, lkc_err *err)
{
	char ours[LKC_OWNER_MAX + 1];
	size_t ours_len = lkc_mc_value(hold, ours);
	size_t key_len;
	char *key = lkc_mc_key(s, hold->resource, hold->resource_len, &key_len);
	lkc_rc rc;

	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	rc = lkc_mc_rewrite_key(s, key, key_len, ours, ours_len, value, value_len, exptime, doing, err);
	free(key);
	return rc;
}

/* The remembered take of value under key, by this process; NULL when none. */
static lkc_mc_unsettled **lkc_mc_unsettled_find(lkc_mc_store *s, const char *key, size_t key_len,
	const char *value, size_t value_len)
{
	for (lkc_mc_unsettled **link = &s->unsettled; *link != NULL; link = &(*link)->next) {
		const lkc_mc_unsettled *u = *link;

		if (u->pid == lkc_pid() && u->key_len == key_len && memcmp(u->key, key, key_len) == 0
			&& u->value_len == value_len && memcmp(u->value, value, value_len) == 0) {
			return link;
		}
	}
	return NULL;
}

/* Unlinks and frees *link. */
static void lkc_mc_unsettled_drop(lkc_mc_store *s, lkc_mc_unsettled **link)
{
	lkc_mc_unsettled *u = *link;

	*link = u->next;
	s->nunsettled--;
	free(u->key);
	free(u);
}

/*
 * Remembers an add of value under key whose answer was lost, until it is known
 * (lkc_mc_sweep). When the list is full (or memory short) the oldest is let go:
 * what it may store still runs out with the expiry it was sent with.
 */
static void lkc_mc_remember(lkc_mc_store *s, const char *key, size_t key_len, const char *value, size_t value_len)
{
	lkc_mc_unsettled **found = lkc_mc_unsettled_find(s, key, key_len, value, value_len);
	lkc_mc_unsettled *u;

	if (found != NULL) {
		/* Sent again: the server's answers so far tell nothing of the new one. */
		(*found)->answered_ns = 0;
		return;
	}
	if (s->nunsettled >= LKC_MC_UNSETTLED_MAX) {
		lkc_mc_unsettled **link = &s->unsettled;

		while ((*link)->next != NULL) {
			link = &(*link)->next;
		}
		lkc_mc_unsettled_drop(s, link);
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL || (u->key = malloc(key_len)) == NULL) {
		free(u);
		return;
	}
	memcpy(u->key, key, key_len);
	u->key_len = key_len;
	memcpy(u->value, value, value_len);
	u->value_len = value_len;
	u->pid = lkc_pid();
	u->next = s->unsettled;
	s->unsettled = u;
	s->nunsettled++;
}

/* Forgets a remembered take of value under key: a take of it succeeded since, and its item is a hold. */
static void lkc_mc_forget(lkc_mc_store *s, const char *key, size_t key_len, const char *value, size_t value_len)
{
	lkc_mc_unsettled **found;

	if (s->unsettled != NULL && (found = lkc_mc_unsettled_find(s, key, key_len, value, value_len)) != NULL) {
		lkc_mc_unsettled_drop(s, found);
	}
}

/*
 * Settles what it can of the remembered takes, each command within cmd_ms, in
 * about budget_ms at most: an item of ours is deleted if it is still ours (a
 * cas, so another owner's is never touched), and the take is then known. A
 * take not found is known once the server has answered for
 * LKC_MC_SETTLE_GRACE_MS: an add it had queued would have run. A server that
 * does not answer ends the sweep; the takes stay for the next one. Takes of
 * another process (a parent's, in a forked child) are forgotten here: theirs
 * to settle.
 */
static void lkc_mc_sweep(lkc_mc_store *s, int64_t cmd_ms, int64_t budget_ms)
{
	uint64_t start = lkc_now_ns();
	lkc_err ignored;

	if (cmd_ms > s->cfg.timeout_ms) {
		cmd_ms = s->cfg.timeout_ms;
	}
	for (lkc_mc_unsettled **link = &s->unsettled; *link != NULL;) {
		lkc_mc_unsettled *u = *link;
		lkc_rc rc;

		if (u->pid != lkc_pid()) {
			lkc_mc_unsettled_drop(s, link);
			continue;
		}
		if (lkc_now_ns() - start >= (uint64_t) budget_ms * 1000000u || lkc_mc_conn(s, &ignored) != LKC_OK) {
			break;
		}
		lkc_mc_set_timeouts(s->mc, cmd_ms);
		rc = lkc_mc_rewrite_key(s, u->key, u->key_len, u->value, u->value_len, "", 0, -1,
			"giving back a take whose answer was lost", &ignored);
		if (rc == LKC_OK) {
			lkc_mc_unsettled_drop(s, link);
			continue;
		}
		if (rc != LKC_EXPIRED && rc != LKC_LOST) {
			break;
		}
		if (u->answered_ns == 0) {
			u->answered_ns = lkc_now_ns();
		}
		if (lkc_now_ns() - u->answered_ns >= (uint64_t) LKC_MC_SETTLE_GRACE_MS * 1000000u) {
			lkc_mc_unsettled_drop(s, link);
			continue;
		}
		link = &u->next;
	}
	/* A failure dropped the handle; a new one gets the store's timeouts. */
	if (s->mc != NULL) {
		lkc_mc_set_timeouts(s->mc, s->cfg.timeout_ms);
	}
}

/*
 * The expiry a hold without one is first written with, before it is made
 * permanent: long enough for the add, the read and the cas that follow it
 * (each within the timeout), so that an add whose answer was lost, run late,
 * leaves an item that runs out by itself.
 */
static time_t lkc_mc_provisional(const lkc_mc_store *s)
{
	int64_t secs = (3 * s->cfg.timeout_ms + 999) / 1000 + LKC_MC_CLOCK_SLACK;

	if (secs < LKC_MC_PROVISIONAL_MIN_S) {
		return LKC_MC_PROVISIONAL_MIN_S;
	}
	return secs > LKC_MC_RELATIVE_MAX ? LKC_MC_RELATIVE_MAX : (time_t) secs;
}

/*
 * Makes the item we just found or stored under key ours with exptime (0: for
 * ever): LKC_OK taken, LKC_BUSY another owner's now, LKC_EXPIRED gone before
 * (add again), or an error, after which the take is remembered as unsettled.
 */
static lkc_rc lkc_mc_confirm(lkc_mc_store *s, lkc_hold *hold, const char *key, size_t key_len,
	const char *value, size_t value_len, time_t exptime, lkc_err *err)
{
	lkc_rc rc = lkc_mc_rewrite_key(s, key, key_len, value, value_len, value, value_len, exptime, "taking the lock", err);

	if (rc == LKC_LOST) {
		return LKC_BUSY;
	}
	if (rc != LKC_OK && rc != LKC_EXPIRED) {
		/* Ours with the first expiry, or made permanent with the answer lost: given back later. */
		hold->unsure = 1;
		lkc_mc_remember(s, key, key_len, value, value_len);
	}
	return rc;
}

/* One attempt at the hold: add our value; LKC_OK, LKC_BUSY or an error. */
static lkc_rc lkc_mc_try(lkc_mc_store *s, lkc_hold *hold, const char *key, size_t key_len, time_t exptime, lkc_err *err)
{
	char value[LKC_OWNER_MAX + 1];
	size_t value_len = lkc_mc_value(hold, value);
	/* A hold without expiry is written with one first: an add that runs late never stays for ever. */
	time_t first = exptime == 0 ? lkc_mc_provisional(s) : exptime;
	memcached_return_t rc;
	lkc_rc result;

	if (lkc_mc_conn(s, err) != LKC_OK) {
		return err->code;
	}
	for (int tries = 0;; tries++) {
		if (tries > LKC_MC_CAS_TRIES) {
			char where[300];

			lkc_mc_server_of(s, key, key_len, where, sizeof(where));
			return lkc_err_set(err, LKC_ERR_IO, "Memcached at %s: the hold kept running out before it was made permanent (taking the lock)", where);
		}
		rc = memcached_add(s->mc, key, key_len, value, value_len, first, 0);
		if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_STORED) {
			result = first == exptime ? LKC_OK : lkc_mc_confirm(s, hold, key, key_len, value, value_len, exptime, err);
		} else if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
			lkc_mc_found found = LKC_MC_THEIRS;
			uint64_t cas;

			/* Our last add may have been stored with its answer lost: that item is ours. */
			if (hold->unsure && lkc_mc_gets(s, key, key_len, value, value_len, &found, &cas, err) != LKC_OK) {
				return err->code;
			}
			if (found == LKC_MC_ABSENT) {
				continue;
			}
			result = found == LKC_MC_OURS ? lkc_mc_confirm(s, hold, key, key_len, value, value_len, exptime, err) : LKC_BUSY;
		} else {
			/* Sent, maybe stored, answer lost: the store gives it back once it knows (lkc_mc_sweep). */
			hold->unsure = 1;
			lkc_mc_remember(s, key, key_len, value, value_len);
			return lkc_mc_fail(s, key, key_len, rc, "taking the lock", err);
		}
		if (result == LKC_EXPIRED) {
			continue;
		}
		if (result == LKC_OK || result == LKC_BUSY) {
			hold->unsure = 0;
			if (result == LKC_OK) {
				lkc_mc_forget(s, key, key_len, value, value_len);
			}
		}
		return result;
	}
}

/* A random number for the backoff's jitter (xorshift64*). */
static uint64_t lkc_mc_random(lkc_mc_store *s)
{
	if (s->rng == 0) {
		s->rng = lkc_now_ns() ^ ((uint64_t) lkc_pid() << 32) ^ (uint64_t) (uintptr_t) s;
		s->rng |= 1;
	}
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

/*
 * Sleeps one step of the backoff (*step_ms, then doubled up to the maximum),
 * no later than deadline_ns (0: none): LKC_OK, or LKC_INTERRUPTED when a
 * signal came that the host wants handled.
 */
static lkc_rc lkc_mc_backoff(lkc_mc_store *s, int64_t *step_ms, uint64_t deadline_ns, lkc_err *err)
{
	int64_t step = *step_ms;
	uint64_t ns = (uint64_t) step * 500000u + lkc_mc_random(s) % ((uint64_t) step * 500000u + 1);
	uint64_t until = lkc_now_ns() + ns;
	struct timespec ts;

	if (deadline_ns != 0 && until > deadline_ns) {
		until = deadline_ns;
	}
	sigset_t io_mask;
	lkc_rc rc = LKC_OK;

	*step_ms = step * 2 > LKC_MC_BACKOFF_MAX_MS ? LKC_MC_BACKOFF_MAX_MS : step * 2;
	/* The sleep is where signals come in (lkc_mc_io_begin holds them off during the I/O). */
	if (s->caller_mask != NULL) {
		pthread_sigmask(SIG_SETMASK, s->caller_mask, &io_mask);
	}
	/* A signal held off during the I/O arrives as the mask lifts, before the sleep can see an EINTR. */
	if (lkc_interrupted()) {
		rc = lkc_err_set(err, LKC_INTERRUPTED, "Memcached at %s: the wait for the lock was interrupted", s->endpoints);
		until = 0;
	}
	for (;;) {
		uint64_t now = lkc_now_ns();

		if (now >= until) {
			break;
		}
		ts.tv_sec = (time_t) ((until - now) / 1000000000u);
		ts.tv_nsec = (long) ((until - now) % 1000000000u);
		if (nanosleep(&ts, NULL) == 0) {
			break;
		}
		if (errno == EINTR && lkc_interrupted()) {
			rc = lkc_err_set(err, LKC_INTERRUPTED, "Memcached at %s: the wait for the lock was interrupted", s->endpoints);
			break;
		}
	}
	if (s->caller_mask != NULL) {
		pthread_sigmask(SIG_SETMASK, &io_mask, NULL);
	}
	return rc;
}

static lkc_rc lkc_mc_acquire_io(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	int64_t step = LKC_MC_BACKOFF_MIN_MS;
	size_t key_len;
	char *key;
	time_t exptime;
	lkc_rc rc;

	(void) mode;
	if (lkc_mc_exptime(s, ttl_ms, &exptime, err) != LKC_OK) {
		return err->code;
	}
	key = lkc_mc_key(s, hold->resource, hold->resource_len, &key_len);
	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	for (;;) {
		uint64_t sent = lkc_now_ns();

		rc = lkc_mc_try(s, hold, key, key_len, exptime, err);
		if (rc == LKC_OK) {
			/* The hold counts from this attempt, not from the start of the wait. */
			hold->granted_ns = sent;
			break;
		}
		if (rc != LKC_BUSY || wait_ms == 0 || (deadline != 0 && lkc_now_ns() >= deadline)) {
			break;
		}
		rc = lkc_mc_backoff(s, &step, deadline, err);
		if (rc != LKC_OK) {
			break;
		}
		if (exptime > LKC_MC_RELATIVE_MAX) {
			/* An absolute expiry is of the clock: a long wait must not eat into the TTL. */
			if (lkc_mc_exptime(s, ttl_ms, &exptime, err) != LKC_OK) {
				rc = err->code;
				break;
			}
		}
	}
	free(key);
	return rc;
}

static lkc_rc lkc_mc_release_io(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	const char cooldown = LKC_MC_TAG_COOLDOWN;
	time_t exptime = -1;

	if (delay_ms > 0 && lkc_mc_exptime(s, delay_ms, &exptime, err) != LKC_OK) {
		return err->code;
	}
	/* A delayed release leaves a cooldown item, which no owner's token can match. */
	if (lkc_mc_rewrite(s, hold, &cooldown, delay_ms > 0 ? 1 : 0, exptime, "releasing the lock", err) != LKC_OK) {
		return err->code;
	}
	/*
	 * The server keeps a hold up to two seconds past its TTL (whole seconds, and
	 * its clock's slack), so it may still have been ours: a hold that outlived its
	 * TTL is reported as on every expiring store, once given up.
	 */
	if (hold->expires_ns != 0 && lkc_now_ns() >= hold->expires_ns) {
		return lkc_err_set(err, LKC_EXPIRED, "the lock has expired");
	}
	return LKC_OK;
}

/*
 * Gives back, quietly and quickly, what an acquire whose answer was lost may
 * have taken: with every other take the store still has to settle. What is not
 * known yet stays remembered, for the next call and the store's end.
 */
static void lkc_mc_settle_io(lkc_store *store, lkc_hold *hold)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	char value[LKC_OWNER_MAX + 1];
	size_t value_len = lkc_mc_value(hold, value);
	size_t key_len;
	char *key = lkc_mc_key(s, hold->resource, hold->resource_len, &key_len);

	if (key != NULL && lkc_mc_unsettled_find(s, key, key_len, value, value_len) == NULL) {
		lkc_mc_remember(s, key, key_len, value, value_len);
	}
	free(key);
	lkc_mc_sweep(s, LKC_MC_SETTLE_MS, LKC_MC_SETTLE_MS);
}

static lkc_rc lkc_mc_refresh_io(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	char value[LKC_OWNER_MAX + 1];
	size_t value_len = lkc_mc_value(hold, value);
	time_t exptime;

	if (lkc_mc_exptime(s, ttl_ms, &exptime, err) != LKC_OK) {
		return err->code;
	}
	return lkc_mc_rewrite(s, hold, value, value_len, exptime, "refreshing the lock", err);
}

static lkc_rc lkc_mc_check_io(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	char value[LKC_OWNER_MAX + 1];
	size_t value_len = lkc_mc_value(hold, value);
	size_t key_len;
	char *key = lkc_mc_key(s, hold->resource, hold->resource_len, &key_len);
	lkc_mc_found found;
	uint64_t cas;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	rc = lkc_mc_conn(s, err);
	if (rc == LKC_OK) {
		rc = lkc_mc_gets(s, key, key_len, value, value_len, &found, &cas, err);
	}
	free(key);
	if (rc != LKC_OK) {
		return rc;
	}
	if (found == LKC_MC_ABSENT) {
		return lkc_err_set(err, LKC_EXPIRED, "the lock has expired");
	}
	if (found == LKC_MC_THEIRS) {
		return lkc_err_set(err, LKC_LOST, "the lock expired and another owner holds it now");
	}
	return LKC_OK;
}

/* Sets *locked to whether the resource's item exists (a hold or a cooldown). */
static lkc_rc lkc_mc_locked(lkc_mc_store *s, const char *key, size_t key_len, int *locked, lkc_err *err)
{
	lkc_mc_found found;
	uint64_t cas;

	if (lkc_mc_conn(s, err) != LKC_OK || lkc_mc_gets(s, key, key_len, "", 0, &found, &cas, err) != LKC_OK) {
		return err->code;
	}
	*locked = found != LKC_MC_ABSENT;
	return LKC_OK;
}

/*
 * The resource's item, in one get: its owner token, or a cooldown. memcached's
 * text protocol gives no item's expiry, and waiters poll unseen: ttl, waiters
 * and queue are unknown; there are no fencing tokens.
 */
static lkc_rc lkc_mc_inspect_io(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	size_t key_len;
	char *key = lkc_mc_key(s, resource, len, &key_len);
	const char *keys[1] = { key };
	size_t lens[1] = { key_len };
	memcached_result_st *res;
	memcached_return_t mrc;
	lkc_rc rc = LKC_OK;

	out->mode = LKC_SEEN_FREE;
	out->owners_known = 1;
	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	if (lkc_mc_conn(s, err) != LKC_OK) {
		free(key);
		return err->code;
	}
	mrc = memcached_mget(s->mc, keys, lens, 1);
	if (mrc != MEMCACHED_SUCCESS) {
		rc = lkc_mc_fail(s, key, key_len, mrc, "reading the lock", err);
	}
	while (mrc == MEMCACHED_SUCCESS && (res = memcached_fetch_result(s->mc, NULL, &mrc)) != NULL) {
		const char *got = memcached_result_value(res);
		size_t got_len = memcached_result_length(res);

		if (got_len > 0 && got[0] == LKC_MC_TAG_OWNER && out->mode == LKC_SEEN_FREE) {
			out->mode = LKC_SEEN_WRITE;
			if (lkc_inspect_owner(out, got + 1, got_len - 1) != 0) {
				rc = lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
			}
		} else if (got_len > 0) {
			out->mode = LKC_SEEN_COOLDOWN;
		}
		memcached_result_free(res);
	}
	if (rc == LKC_OK && mrc != MEMCACHED_END && mrc != MEMCACHED_NOTFOUND && mrc != MEMCACHED_SUCCESS) {
		rc = lkc_mc_fail(s, key, key_len, mrc, "reading the lock", err);
	}
	free(key);
	return rc;
}

static lkc_rc lkc_mc_is_locked_io(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	size_t key_len;
	char *key = lkc_mc_key(s, resource, len, &key_len);
	lkc_rc rc;

	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	rc = lkc_mc_locked(s, key, key_len, locked, err);
	free(key);
	return rc;
}

static lkc_rc lkc_mc_force_release_io(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	size_t key_len;
	char *key = lkc_mc_key(s, resource, len, &key_len);
	memcached_return_t rc;
	lkc_rc result = LKC_OK;

	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	if (lkc_mc_conn(s, err) != LKC_OK) {
		free(key);
		return err->code;
	}
	/*
	 * Read, then delete by cas: a plain delete whose answer was lost could run late
	 * and break a hold taken after this call failed; a late cas breaks only the
	 * item that was read.
	 */
	for (int tries = 0;; tries++) {
		lkc_mc_found found;
		uint64_t cas;
		in_port_t port;

		if (lkc_mc_gets(s, key, key_len, "", 0, &found, &cas, err) != LKC_OK) {
			result = err->code;
			break;
		}
		if (found == LKC_MC_ABSENT) {
			break;
		}
		port = lkc_mc_srcport(s, key, key_len);
		if (tries >= LKC_MC_CAS_TRIES || port == 0) {
			result = lkc_mc_fail(s, key, key_len, port == 0 ? MEMCACHED_CONNECTION_FAILURE : MEMCACHED_DATA_EXISTS,
				"breaking the lock", err);
			break;
		}
		rc = memcached_cas(s->mc, key, key_len, "", 0, -1, 0, cas);
		if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_STORED) {
			if (lkc_mc_srcport(s, key, key_len) != port) {
				result = lkc_mc_fail(s, key, key_len, MEMCACHED_CONNECTION_FAILURE, "breaking the lock", err);
			}
			break;
		}
		if (rc != MEMCACHED_DATA_EXISTS && rc != MEMCACHED_NOTFOUND) {
			result = lkc_mc_fail(s, key, key_len, rc, "breaking the lock", err);
			break;
		}
		/* Taken anew between the read and the cas: that hold is broken too, on the next read. */
	}
	free(key);
	return result;
}

static lkc_rc lkc_mc_wait_free_io(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	int64_t step = LKC_MC_BACKOFF_MIN_MS;
	size_t key_len;
	char *key = lkc_mc_key(s, resource, len, &key_len);
	lkc_rc rc;

	if (key == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	for (;;) {
		int locked = 0;

		rc = lkc_mc_locked(s, key, key_len, &locked, err);
		if (rc != LKC_OK || !locked) {
			break;
		}
		if (wait_ms == 0 || (deadline != 0 && lkc_now_ns() >= deadline)) {
			rc = LKC_BUSY;
			break;
		}
		rc = lkc_mc_backoff(s, &step, deadline, err);
		if (rc != LKC_OK) {
			break;
		}
	}
	free(key);
	return rc;
}

/* Forgets an inherited hold: nothing is sent, the parent keeps its item. */
static void lkc_mc_abandon(lkc_store *store, lkc_hold *hold)
{
	(void) store;
	(void) hold;
}

static void lkc_mc_io_begin(lkc_mc_store *s, sigset_t *saved);
static void lkc_mc_io_end(lkc_mc_store *s, const sigset_t *saved, const sigset_t *prev);

/* Settles the takes still unsettled at the store's end, for at most LKC_MC_SETTLE_WAIT_MS. */
static void lkc_mc_settle_all(lkc_mc_store *s)
{
	uint64_t deadline = lkc_now_ns() + (uint64_t) LKC_MC_SETTLE_WAIT_MS * 1000000u;
	const sigset_t *prev = s->caller_mask;
	sigset_t mask;

	lkc_mc_io_begin(s, &mask);
	if (s->busy > 1) {
		/* A bailout left the handle mid-command: its answer would be read as the settle's. */
		lkc_mc_discard(s);
	}
	for (;;) {
		uint64_t now = lkc_now_ns();
		struct timespec pause = { 0, 20 * 1000000L };

		if (now >= deadline) {
			break;
		}
		lkc_mc_sweep(s, LKC_MC_SETTLE_MS, (int64_t) ((deadline - now) / 1000000u));
		if (s->unsettled == NULL || lkc_now_ns() + 20 * 1000000u >= deadline) {
			break;
		}
		nanosleep(&pause, NULL);
	}
	lkc_mc_io_end(s, &mask, prev);
}

/* Frees the store; a persistent store's handle goes back to the pool, a parent's is left alone. */
static void lkc_mc_destroy(lkc_store *store)
{
	lkc_mc_store *s = (lkc_mc_store *) store;

	if (s->unsettled != NULL) {
		lkc_mc_settle_all(s);
	}
	while (s->unsettled != NULL) {
		lkc_mc_unsettled_drop(s, &s->unsettled);
	}
	if (s->mc != NULL) {
		if (s->mc_pid != lkc_pid()) {
			lkc_mc_orphan(s->mc);
		} else if (s->cfg.persistent && s->busy == 0) {
			lkc_pool_put(&lkc_mc_pool, s->pool_key, s->pool_key_len, s->mc);
		} else {
			memcached_free(s->mc);
		}
	}
	lkc_memcached_config_free(&s->cfg);
	free(s->pool_key);
	free(s);
}

/*
 * Signals that arrive while libmemcached waits for a server end its wait
 * early: it gives up after four of them and reports a timeout that did not
 * happen. So the asynchronous signals are held off during a store call's I/O
 * (for at most the store's timeout per command; PHP handles them when the call
 * returns) and let in during a waiter's sleeps, where the host decides.
 * Synchronous signals (SIGSEGV and its kind) are never blocked.
 */
static sigset_t lkc_mc_async_signals;
static pthread_once_t lkc_mc_signals_once = PTHREAD_ONCE_INIT;

static void lkc_mc_signals_init(void)
{
	sigfillset(&lkc_mc_async_signals);
	sigdelset(&lkc_mc_async_signals, SIGSEGV);
	sigdelset(&lkc_mc_async_signals, SIGBUS);
	sigdelset(&lkc_mc_async_signals, SIGFPE);
	sigdelset(&lkc_mc_async_signals, SIGILL);
	sigdelset(&lkc_mc_async_signals, SIGTRAP);
	sigdelset(&lkc_mc_async_signals, SIGSYS);
	sigdelset(&lkc_mc_async_signals, SIGABRT);
}

/* Starts a store call: busy, asynchronous signals held off; saved gets the caller's mask. */
static void lkc_mc_io_begin(lkc_mc_store *s, sigset_t *saved)
{
	pthread_once(&lkc_mc_signals_once, lkc_mc_signals_init);
	pthread_sigmask(SIG_BLOCK, &lkc_mc_async_signals, saved);
	s->caller_mask = saved;
	s->busy++;
}

/* Ends a store call begun by lkc_mc_io_begin: the caller's mask back (signals held off come in now). */
static void lkc_mc_io_end(lkc_mc_store *s, const sigset_t *saved, const sigset_t *prev)
{
	s->busy--;
	s->caller_mask = prev;
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/*
 * The store's operations: each counts itself busy around its I/O, so that a
 * handle a bailout left mid-command is never pooled (lkc_mc_destroy), and
 * first settles, briefly, what takes whose answer was lost it can.
 */
#define LKC_MC_BUSY(store, call) \
	do { \
		lkc_mc_store *busy_s_ = (lkc_mc_store *) (store); \
		const sigset_t *busy_prev_ = busy_s_->caller_mask; \
		sigset_t busy_mask_; \
		lkc_rc busy_rc_; \
		lkc_mc_io_begin(busy_s_, &busy_mask_); \
		if (busy_s_->unsettled != NULL) { \
			lkc_mc_sweep(busy_s_, LKC_MC_SWEEP_MS, LKC_MC_SWEEP_MS); \
		} \
		busy_rc_ = (call); \
		lkc_mc_io_end(busy_s_, &busy_mask_, busy_prev_); \
		return busy_rc_; \
	} while (0)

static lkc_rc lkc_mc_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_acquire_io(store, hold, mode, ttl_ms, wait_ms, err));
}

static lkc_rc lkc_mc_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_release_io(store, hold, delay_ms, err));
}

static lkc_rc lkc_mc_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_refresh_io(store, hold, ttl_ms, err));
}

static lkc_rc lkc_mc_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_check_io(store, hold, err));
}

static lkc_rc lkc_mc_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_is_locked_io(store, resource, len, locked, err));
}

static lkc_rc lkc_mc_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_inspect_io(store, resource, len, out, err));
}

static lkc_rc lkc_mc_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_force_release_io(store, resource, len, err));
}

static lkc_rc lkc_mc_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_wait_free_io(store, resource, len, wait_ms, err));
}

static void lkc_mc_settle(lkc_store *store, lkc_hold *hold)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	const sigset_t *prev = s->caller_mask;
	sigset_t mask;

	lkc_mc_io_begin(s, &mask);
	lkc_mc_settle_io(store, hold);
	lkc_mc_io_end(s, &mask, prev);
}

/*
 * What the one server of the store says it is (its pid and when it started, from
 * "stats"), whatever name or address reached it. Over several servers the names
 * place the keys (libketama): there only the list as spelled tells.
 */
static lkc_rc lkc_mc_server_id_io(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	lkc_mc_store *s = (lkc_mc_store *) store;
	memcached_stat_st *stats;
	memcached_return_t rc;
	char text[64];

	*id = NULL;
	*len = 0;
	if (s->cfg.nservers != 1) {
		return lkc_err_set(err, LKC_ERR_UNSUPPORTED, "Memcached at %s: several servers have no one name", s->endpoints);
	}
	if (lkc_mc_conn(s, err) != LKC_OK) {
		return err->code;
	}
	stats = memcached_stat(s->mc, NULL, &rc);
	if (stats == NULL || rc != MEMCACHED_SUCCESS) {
		memcached_stat_free(s->mc, stats);
		return lkc_err_set(err, LKC_ERR_IO, "Memcached at %s: reading its stats: %s", s->endpoints, memcached_strerror(s->mc, rc));
	}
	*len = (size_t) snprintf(text, sizeof(text), "%lu %lu", (unsigned long) stats[0].pid,
		(unsigned long) stats[0].time - (unsigned long) stats[0].uptime);
	memcached_stat_free(s->mc, stats);
	*id = malloc(*len + 1);
	if (*id == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Memcached at %s: out of memory", s->endpoints);
	}
	memcpy(*id, text, *len + 1);
	return LKC_OK;
}

static lkc_rc lkc_mc_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	LKC_MC_BUSY(store, lkc_mc_server_id_io(store, id, len, err));
}

static lkc_rc lkc_mc_twin(lkc_store *store, lkc_store **out, lkc_err *err);

static const lkc_store_ops lkc_mc_ops = {
	.name = "memcached",
	.caps = LKC_CAP_EXPIRY,
	.acquire = lkc_mc_acquire,
	.release = lkc_mc_release,
	.refresh = lkc_mc_refresh,
	.check = lkc_mc_check,
	.is_locked = lkc_mc_is_locked,
	.force_release = lkc_mc_force_release,
	.abandon = lkc_mc_abandon,
	.destroy = lkc_mc_destroy,
	.fence = NULL,
	.settle = lkc_mc_settle,
	.wait_free = lkc_mc_wait_free,
	.server_id = lkc_mc_server_id,
	.inspect = lkc_mc_inspect,
	.twin = lkc_mc_twin,
	.stats = &lkc_stats_of[LKC_KIND_MEMCACHED],
};

/*
 * What a persistent handle must match to be reused: the timeout and every
 * server in order, whole (a handle hashes keys over its own servers); NULL
 * when out of memory.
 */
static char *lkc_mc_make_pool_key(const lkc_memcached_config *cfg, size_t *len)
{
	size_t n = 1 + 2 * cfg->nservers;
	const char **parts = malloc(n * sizeof(*parts));
	size_t *lens = malloc(n * sizeof(*lens));
	char *numbers = malloc(n * 24);
	char *key = NULL;

	if (parts != NULL && lens != NULL && numbers != NULL) {
		/* The timeout, then each server's host and port. */
		parts[0] = numbers;
		lens[0] = (size_t) snprintf(numbers, 24, "%lld", (long long) cfg->timeout_ms);
		for (size_t i = 0; i < cfg->nservers; i++) {
			char *port = numbers + 24 * (2 + 2 * i);

			parts[1 + 2 * i] = cfg->servers[i].host;
			lens[1 + 2 * i] = strlen(cfg->servers[i].host);
			parts[2 + 2 * i] = port;
			lens[2 + 2 * i] = (size_t) snprintf(port, 24, "%d", cfg->servers[i].port);
		}
		key = lkc_pool_key(n, parts, lens, len);
	}
	free(parts);
	free(lens);
	free(numbers);
	return key;
}

lkc_rc lkc_memcached_open(lkc_store **out, lkc_memcached_config *cfg, lkc_err *err)
{
	lkc_mc_store *s;
	size_t used = 0;

	*out = NULL;
	if (cfg->nservers == 0) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a memcached store needs at least one server");
	}
	if (cfg->timeout_ms <= 0) {
		return lkc_err_set(err, LKC_ERR_INVALID, "the memcached timeout must be positive");
	}
	if (cfg->prefix_len > LKC_MC_PREFIX_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "the memcached prefix must be at most %d bytes", LKC_MC_PREFIX_MAX);
	}
	for (size_t i = 0; i < cfg->prefix_len; i++) {
		unsigned char c = (unsigned char) cfg->prefix[i];
		if (c <= 0x20 || c >= 0x7f) {
			return lkc_err_set(err, LKC_ERR_INVALID,
				"the memcached prefix must be printable ASCII without spaces (byte %zu is not)", i);
		}
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->base.ops = &lkc_mc_ops;
	s->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < s->cfg.nservers && used < sizeof(s->endpoints); i++) {
		const lkc_memcached_server *srv = &s->cfg.servers[i];
		int n = snprintf(s->endpoints + used, sizeof(s->endpoints) - used,
			strchr(srv->host, ':') != NULL ? "%s[%s]:%d" : "%s%s:%d", i > 0 ? "," : "", srv->host, srv->port);
		used += n > 0 ? (size_t) n : 0;
	}
	s->pool_key = lkc_mc_make_pool_key(&s->cfg, &s->pool_key_len);
	if (s->pool_key == NULL) {
		lkc_mc_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}

/*
 * A store of the same settings with a handle of its own, never pooled, for the
 * auto-refresh thread. Its refresh reads only the hold's resource and owner;
 * what else it touches is the twin's (its handle, its busy count and mask) or
 * safe across threads: the signal set is made once (pthread_once) and only
 * read, the mask it blocks is the calling thread's, and it never sleeps a
 * backoff (no lkc_interrupted()) nor settles a take (a twin takes nothing).
 */
static lkc_rc lkc_mc_twin(lkc_store *store, lkc_store **out, lkc_err *err)
{
	const lkc_mc_store *s = (const lkc_mc_store *) store;
	lkc_memcached_config cfg;
	lkc_rc rc = LKC_OK;

	*out = NULL;
	lkc_memcached_config_init(&cfg);
	cfg.timeout_ms = s->cfg.timeout_ms;
	cfg.servers = calloc(s->cfg.nservers, sizeof(*cfg.servers));
	cfg.prefix = malloc(s->cfg.prefix_len + 1);
	if (cfg.servers == NULL || cfg.prefix == NULL) {
		rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	for (size_t i = 0; rc == LKC_OK && i < s->cfg.nservers; i++) {
		cfg.servers[i].host = strdup(s->cfg.servers[i].host);
		cfg.servers[i].port = s->cfg.servers[i].port;
		cfg.nservers++;
		if (cfg.servers[i].host == NULL) {
			rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	if (rc == LKC_OK) {
		if (s->cfg.prefix_len > 0) {
			memcpy(cfg.prefix, s->cfg.prefix, s->cfg.prefix_len);
		}
		cfg.prefix[s->cfg.prefix_len] = '\0';
		cfg.prefix_len = s->cfg.prefix_len;
		rc = lkc_memcached_open(out, &cfg, err);
	}
	/* What the open did not take (all of it when it failed early). */
	lkc_memcached_config_free(&cfg);
	return rc != LKC_OK ? rc : lkc_store_twin_ns(out, store, err);
}

const char *lkc_memcached_version(void)
{
	return memcached_lib_version();
}
