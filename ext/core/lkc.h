/*
 * lkc: the plain C core of the lock extension. Nothing here knows PHP.
 *
 * A store is a const table of operations (lkc_store_ops) plus its state; a
 * hold (lkc_hold) is what one lock object owns on one resource. Every call
 * returns an lkc_rc and, on failure, fills an lkc_err with the code and a
 * message that says what failed and why.
 */
#ifndef LKC_H
#define LKC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LKC_VERSION "0.1.0"

/* Resource names are 1 byte to 64 KiB of arbitrary bytes. */
#define LKC_RESOURCE_MAX 65536

/* Owner tokens: 128 random bits, hex encoded. */
#define LKC_TOKEN_BYTES 16
#define LKC_TOKEN_LEN (LKC_TOKEN_BYTES * 2)
/* An owner chosen by the caller instead: 1 to this many bytes of any kind. */
#define LKC_OWNER_MAX 255

/* A wait of LKC_WAIT_FOREVER blocks until acquired or interrupted. */
#define LKC_WAIT_FOREVER (-1)
/* A TTL of LKC_TTL_NONE never expires. */
#define LKC_TTL_NONE (-1)

typedef enum {
	LKC_OK = 0,         /* done: acquired, released, refreshed, still ours */
	LKC_BUSY,           /* somebody else holds it (after the allowed wait) */
	LKC_EXPIRED,        /* our hold is gone and nobody holds the resource */
	LKC_LOST,           /* our hold is gone and somebody else holds it now */
	LKC_INTERRUPTED,    /* a wait was ended by the host (signal, time limit) */
	LKC_ERR_IO,         /* backend unreachable, timed out, connection dropped */
	LKC_ERR_PROTOCOL,   /* the backend answered something we cannot read */
	LKC_ERR_REFUSED,    /* the backend refused: auth, OOM, READONLY, script error */
	LKC_ERR_PERM,       /* permission denied by the OS */
	LKC_ERR_SYSTEM,     /* another OS failure (limits, no space) */
	LKC_ERR_INVALID,    /* bad argument, malformed DSN, unknown option */
	LKC_ERR_STATE,      /* call not valid in this state (not held, wrong process) */
	LKC_ERR_UNSUPPORTED /* the store cannot do this */
} lkc_rc;

/* An error context, filled by a failing call (hiredis's err/errstr). */
typedef struct {
	lkc_rc code;
	char msg[512];
} lkc_err;

void lkc_err_clear(lkc_err *err);
/* Sets code and a printf-style message; returns code for tail calls. */
lkc_rc lkc_err_set(lkc_err *err, lkc_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* As lkc_err_set, with ": strerror(errnum)" appended. */
lkc_rc lkc_err_errno(lkc_err *err, lkc_rc code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Maps an errno of a failed system call to a result code. */
lkc_rc lkc_rc_from_errno(int errnum);
/* A short name for a result code, for tests and logs. */
const char *lkc_rc_name(lkc_rc rc);

/* The cached pid and fork count below; set up by lkc_pid_setup() on first use. */
extern pid_t lkc_pid_cached;
extern unsigned long lkc_fork_total;
/* Caches the pid and installs the fork handlers that keep it and the fork count; returns the pid. */
pid_t lkc_pid_setup(void);

/*
 * getpid() without a system call: cached, and renewed in a child by a fork handler.
 * Inline: a lock cycle asks several times, and a call each time showed in its profile.
 */
static inline pid_t lkc_pid(void)
{
	pid_t pid = __atomic_load_n(&lkc_pid_cached, __ATOMIC_ACQUIRE);

	return pid != 0 ? pid : lkc_pid_setup();
}

/* How many times this process (or its ancestors before it) forked; a hold compares it to see a fork since. */
static inline unsigned long lkc_fork_count(void)
{
	(void) lkc_pid();
	return lkc_fork_total;
}

/* Monotonic clock, nanoseconds. */
uint64_t lkc_now_ns(void);
/* Milliseconds left until deadline_ns (0 when passed); deadline 0 means none. */
int64_t lkc_ms_left(uint64_t deadline_ns);
/* Writes v in decimal and a NUL to out (at least 21 bytes); returns the digits' length. No printf: it is on every call's path. */
size_t lkc_i64_str(char *out, int64_t v);

/* Whether host is a numeric IPv4 or IPv6 address, which needs no resolver. */
int lkc_is_address(const char *host);
struct addrinfo;
/*
 * Resolves host (a name or an address) to its TCP addresses for port within
 * deadline_ns (0: no deadline), never longer: 0 with *out set (freeaddrinfo()),
 * -1 when the name does not resolve, -2 when the deadline passed first; text
 * then says why, naming the host.
 */
int lkc_resolve(const char *host, int port, uint64_t deadline_ns, struct addrinfo **out, char *text, size_t text_size);

/* Fills out with LKC_TOKEN_LEN hex characters from the OS CSPRNG, NUL-terminated. */
lkc_rc lkc_token_new(char out[LKC_TOKEN_LEN + 1], lkc_err *err);

/* SHA-256 of data into out (32 bytes). */
void lkc_sha256(const void *data, size_t len, unsigned char out[32]);

/*
 * The host (PHP) decides whether a wait that a signal interrupted must end:
 * max_execution_time or a PHP signal handler waiting to run. Without a hook,
 * interrupted waits resume.
 */
typedef int (*lkc_interrupt_fn)(void);
void lkc_set_interrupt_hook(lkc_interrupt_fn fn);
int lkc_interrupted(void);
/* Marks the calling thread as one of ours that the host never runs in: lkc_interrupted() is 0 there. */
void lkc_thread_without_host(void);

typedef enum {
	LKC_MODE_NONE = 0,
	LKC_MODE_EXCLUSIVE,
	LKC_MODE_SHARED
} lkc_mode;

/* What one lock object holds (or tries to hold) on one resource. */
typedef struct lkc_hold {
	char *resource;          /* owned copy, resource_len bytes plus a NUL */
	size_t resource_len;
	char owner[LKC_OWNER_MAX + 1]; /* the owner token, owner_len bytes plus a NUL */
	size_t owner_len;
	int owner_chosen;        /* the caller chose the owner (lkc_hold_set_owner, lkc_hold_restore) */
	pid_t owner_pid;         /* process the owner token was made in */
	lkc_mode mode;           /* LKC_MODE_NONE when not held */
	pid_t pid;               /* process that took the hold */
	unsigned long forks;     /* lkc_fork_count() when the hold was taken */
	uint64_t expires_ns;     /* monotonic expiry of the hold, 0 for none */
	int64_t fence;           /* fencing token, -1 when none */
	/* Store-private, derived from the resource once and kept across holds. */
	int fd;                  /* flock: the lock file while held (the store's cache keeps it between holds), -1 when none */
	char *path;              /* flock: the lock file's path */
	int quiet;               /* flock: the last release through fd saw nobody waiting */
	int semid;               /* semaphore: the set's id, -1 when unknown */
	int32_t semkey;          /* semaphore: the IPC key */
	int unsure;              /* the last acquire or release failed after it may have run on the server (redis) */
	void *session;           /* pgsql, mysql: the server session that holds it while held, NULL when none */
	uint64_t granted_ns;     /* set by a store's acquire: monotonic time no later than the grant, 0 for when the call began */
	int64_t next[2];         /* redis: the wake tickets a release is guessed to serve (the queue's head), 0 unknown */
	int handed;              /* set by a store's acquire: a release handed this hold to us while we waited */
	int gone_counted;        /* the stats counted this hold as expired or lost already */
	uint64_t margin_ns;      /* set by a store's acquire and refresh: the hold counts as gone this much before its TTL ends (clock drift) */
	struct lkc_hold *parts;  /* combined: one hold per member store (lkc_combined.c), NULL until first used */
	int nparts;
} lkc_hold;

/* Initialises a hold for resource with a fresh owner token. */
lkc_rc lkc_hold_init(lkc_hold *hold, const char *resource, size_t len, lkc_err *err);
/* Frees what lkc_hold_init and the stores allocated; does not release. */
void lkc_hold_dispose(lkc_hold *hold);
/*
 * Makes dst a copy of src that another thread may refresh: its own resource
 * and parts, no file, no session. dst is the caller's to dispose.
 */
lkc_rc lkc_hold_copy(lkc_hold *dst, const lkc_hold *src, lkc_err *err);
/* When a hold of ttl_ms whose take or refresh was sent at start_ns counts as gone (0: never). */
uint64_t lkc_hold_expiry(uint64_t start_ns, int64_t ttl_ms, uint64_t margin_ns);

typedef struct lkc_store lkc_store;

/*
 * The counters of Lock\stats(), per kind of store, of this process since it
 * started (a forked child starts from zero). Plain additions: under a
 * thread-safe PHP (ZTS), threads that lock at once may lose counts.
 */
typedef enum {
	LKC_STAT_ACQUIRED,       /* holds taken: single attempt, wait or hand-off, read holds and conversions too */
	LKC_STAT_FAILED,         /* single attempts that found the resource held */
	LKC_STAT_WAITED,         /* blocking acquires that ended with the hold */
	LKC_STAT_TIMED_OUT,      /* blocking acquires that ended without it: the timeout, or the host interrupted */
	LKC_STAT_HANDED_OVER,    /* holds a release handed to us while we waited (also counted in waited) */
	LKC_STAT_RELEASED,       /* holds given up, by release() or automatic release */
	LKC_STAT_EXPIRED,        /* holds found gone with nobody holding the resource */
	LKC_STAT_LOST,           /* holds found gone with somebody else holding it */
	LKC_STAT_REFRESHED,      /* refreshes that extended the hold */
	LKC_STAT_AUTO_REFRESHED, /* refreshes made for an auto-refreshed hold */
	LKC_STAT_STORAGE_ERRORS, /* calls that failed on the backend (a StorageException, thrown or not) */
	LKC_STATS
} lkc_stat;

typedef struct {
	uint64_t n[LKC_STATS];
	uint64_t wait_ns;        /* time spent in blocking acquires */
	int used;                /* a store of this kind was opened in this process */
} lkc_stats;

/* The kinds of store, one per PHP store class: what the counters are kept by. */
typedef enum {
	LKC_KIND_FLOCK,
	LKC_KIND_SEM,
	LKC_KIND_REDIS,
	LKC_KIND_PGSQL,
	LKC_KIND_MYSQL,
	LKC_KIND_MEMCACHED,
	LKC_KIND_COMBINED,
	LKC_KINDS
} lkc_kind;

extern lkc_stats lkc_stats_of[LKC_KINDS];
/* The counters' names, as Lock\stats() gives them. */
extern const char *const lkc_stat_names[LKC_STATS];

/* Bytes that may hold NUL (an owner token), malloc'd. */
typedef struct {
	char *s;
	size_t len;
} lkc_bytes;

/* Who holds a resource, in what mode (Store::inspect()). */
typedef enum {
	LKC_SEEN_FREE,
	LKC_SEEN_WRITE,
	LKC_SEEN_READ,
	LKC_SEEN_COOLDOWN
} lkc_seen;

/* What a store knows of a resource now; each part the store cannot tell is marked unknown. */
typedef struct {
	lkc_seen mode;
	int64_t ttl_ms;          /* ms the hold has left; LKC_TTL_NONE for no expiry or nobody holding; -2 unknown */
	int64_t fence;           /* the last fencing token handed out; -1 none or unknown */
	int64_t waiters;         /* how many wait; -1 unknown */
	int owners_known;        /* owners lists every holder */
	lkc_bytes *owners;
	size_t nowners;
	int queue_known;         /* queue lists the waiters in the order they are served */
	lkc_bytes *queue;
	size_t nqueue;
	int holders_known;       /* holders lists what the kernel or the server knows each holder by */
	int64_t *holders;        /* process ids (flock), server session ids (PostgreSQL, MySQL) */
	size_t nholders;
} lkc_inspect;

/* Adds a copy of an owner token to out->owners (and marks them known); -1 when out of memory. */
int lkc_inspect_owner(lkc_inspect *out, const char *owner, size_t len);
/* Adds a holder's id to out->holders (and marks them known); -1 when out of memory. */
int lkc_inspect_holder(lkc_inspect *out, int64_t id);

/* Frees what a store's inspect put in out. */
void lkc_inspect_free(lkc_inspect *out);

/* Store capabilities. */
#define LKC_CAP_EXPIRY        (1u << 0) /* holds have a TTL */
#define LKC_CAP_SHARED        (1u << 1) /* read holds */
#define LKC_CAP_FENCING       (1u << 2) /* fencing tokens */
#define LKC_CAP_PROCESS_BOUND (1u << 3) /* the OS frees a hold when its process dies */

/*
 * The operations of a store. ttl_ms is LKC_TTL_NONE or > 0; wait_ms is 0 for
 * one attempt, LKC_WAIT_FOREVER, or a bound in milliseconds.
 */
typedef struct lkc_store_ops {
	const char *name;
	unsigned caps;
	/* Takes the hold in mode; LKC_OK, LKC_BUSY (not within wait_ms), LKC_INTERRUPTED or an error. */
	lkc_rc (*acquire)(lkc_store *store, lkc_hold *hold, lkc_mode mode,
		int64_t ttl_ms, int64_t wait_ms, lkc_err *err);
	/* Gives the hold up; LKC_OK, LKC_EXPIRED, LKC_LOST or an error. delay_ms > 0 keeps it blocked. */
	lkc_rc (*release)(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err);
	/* Extends the hold to ttl_ms from now; LKC_OK, LKC_EXPIRED, LKC_LOST or an error. */
	lkc_rc (*refresh)(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err);
	/*
	 * Refreshes n holds as refresh does each (holds[i] to ttl_ms[i]; rcs[i] and
	 * errs[i] get its outcome), in as few round trips as the store can: the
	 * auto-refresh thread's holds that are due together. NULL: one by one.
	 */
	void (*refresh_many)(lkc_store *store, lkc_hold **holds, const int64_t *ttl_ms, int n, lkc_rc *rcs,
		lkc_err *errs);
	/* Whether the hold is still ours: LKC_OK, LKC_EXPIRED, LKC_LOST or an error. */
	lkc_rc (*check)(lkc_store *store, lkc_hold *hold, lkc_err *err);
	/* Sets *locked to whether anybody holds the resource in any mode. */
	lkc_rc (*is_locked)(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err);
	/* Breaks whoever holds the resource. */
	lkc_rc (*force_release)(lkc_store *store, const char *resource, size_t len, lkc_err *err);
	/* Forgets a hold inherited across fork() without touching the parent's hold. */
	void (*abandon)(lkc_store *store, lkc_hold *hold);
	/* Frees the store and everything it owns. */
	void (*destroy)(lkc_store *store);
	/*
	 * Sets *fence to the hold's fencing token (stores with LKC_CAP_FENCING; the hold
	 * is exclusive): greater than every token handed out before for the resource.
	 */
	lkc_rc (*fence)(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err);
	/*
	 * Gives back, quietly and briefly, what a failed acquire of the hold may have
	 * taken after all (hold->unsure); NULL on stores where it cannot happen.
	 */
	void (*settle)(lkc_store *store, lkc_hold *hold);
	/*
	 * Waits until nobody holds the resource in any mode, woken by the release as a
	 * waiter is, taking nothing and passing nobody: LKC_OK (free), LKC_BUSY (still
	 * held after wait_ms), LKC_INTERRUPTED or an error.
	 */
	lkc_rc (*wait_free)(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err);
	/*
	 * Sets *id (malloc'd, *len bytes) to what the server the store talks to says it
	 * is, so that two spellings of one server (127.0.0.1 and localhost) are known as
	 * one; LKC_ERR_UNSUPPORTED where only the spelling can tell. NULL on stores whose
	 * namespace names no server.
	 */
	lkc_rc (*server_id)(lkc_store *store, char **id, size_t *len, lkc_err *err);
	/*
	 * Fills *out (zeroed by the caller) with what the store knows of the resource
	 * now, taking nothing and waking nobody; NULL on stores that cannot tell.
	 */
	lkc_rc (*inspect)(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err);
	/*
	 * Opens *out, a store of the same settings whose connections are its own
	 * (never pooled, never shared with store), for the auto-refresh thread
	 * (lkc_auto.c): that thread calls only its refresh, and its destroy. NULL on
	 * stores whose holds do not expire.
	 */
	lkc_rc (*twin)(lkc_store *store, lkc_store **out, lkc_err *err);
	/* The counters of this kind of store (an element of lkc_stats_of). */
	lkc_stats *stats;
} lkc_store_ops;

/* Every store starts with this. */
struct lkc_store {
	const lkc_store_ops *ops;
	unsigned refs;           /* references beyond the opener's (lkc_store_retain) */
	/*
	 * What tells two stores of one kind apart, ns_len bytes malloc'd by the host
	 * (flock: the real path of the directory; Redis: the server, database and
	 * prefix); NULL when all stores of the kind share their resources
	 * (semaphore). Freed with the store.
	 */
	char *ns;
	size_t ns_len;
	/* The first ns_server_len bytes of ns name the server as it was spelled; the rest, the place on it. */
	size_t ns_server_len;
	/* The auto-refresh thread's copy of this store (lkc_auto.c), NULL until a hold asks for refreshing. */
	struct lkc_auto_twin *twin;
};

/*
 * Whether two stores lock the same resources under the same names: same kind and
 * namespace, or the same place on a server that both reach under different names
 * (asked of the servers). When a server cannot be asked, the answer is yes: taking
 * two stores for one keeps a second holder out, which the other answer would not.
 */
int lkc_store_same(lkc_store *a, lkc_store *b);

/* Marks the kind of a store just opened as used (its counters are shown). */
static inline void lkc_store_opened(lkc_store *store)
{
	/* The fork handlers that zero a child's counters are set up with the pid. */
	(void) lkc_pid();
	store->ops->stats->used = 1;
}

/* Counts one event of kind k on the store's counters. */
static inline void lkc_stats_add(lkc_store *store, lkc_stat k)
{
	store->ops->stats->n[k]++;
}

/* Whether rc is a failure of the backend (what the host reports as a storage error). */
int lkc_rc_storage(lkc_rc rc);
/* Counts what an answer of the store says about a hold or the backend: expired, lost, a storage error. */
void lkc_stats_answer(lkc_store *store, lkc_hold *hold, lkc_rc rc);

/* Keeps store alive for one more user, whatever order the users let go in. */
void lkc_store_retain(lkc_store *store);
/* Lets go of one reference; the last one destroys the store. */
void lkc_store_release(lkc_store *store);

/*
 * The lock layer over a store: validates state, records pid and expiry, and
 * never lets a forked child touch its parent's hold.
 *
 * lkc_acquire and lkc_release are inline over out-of-line checks and bookkeeping,
 * so that the store's system call runs as few calls deep as it can: after a system
 * call, each return to a caller that was on the stack before it is a mispredicted
 * branch on kernels that refill the return stack buffer on the way back (SRSO and
 * Spectre mitigations), a measurable part of a semaphore or flock cycle.
 */
/* Checks before a store's acquire: 1 to go on (*start set), 0 with *rc the answer. */
int lkc_acquire_begin(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t wait_ms, uint64_t *start,
	lkc_rc *rc, lkc_err *err);
/* Records a hold the store took in mode. */
void lkc_acquire_end(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, int64_t wait_ms, uint64_t start);
/* Counts an acquire the store answered rc (not LKC_OK) to. */
void lkc_acquire_failed(lkc_store *store, lkc_hold *hold, int64_t wait_ms, uint64_t start, lkc_rc rc);
/* Checks before a store's release: 1 to go on, 0 with *rc the answer. */
int lkc_release_begin(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_rc *rc, lkc_err *err);
/* Forgets a hold the store gave back (or found gone), after its release answered rc. */
void lkc_release_end(lkc_store *store, lkc_hold *hold, lkc_rc rc);

/* Takes or converts the hold through the store. */
__attribute__((always_inline)) static inline lkc_rc lkc_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	uint64_t start;
	lkc_rc rc;

	if (!lkc_acquire_begin(store, hold, mode, wait_ms, &start, &rc, err)) {
		return rc;
	}
	rc = store->ops->acquire(store, hold, mode, ttl_ms, wait_ms, err);
	if (rc == LKC_OK) {
		lkc_acquire_end(store, hold, mode, ttl_ms, wait_ms, start);
	} else {
		lkc_acquire_failed(store, hold, wait_ms, start, rc);
	}
	return rc;
}

/* Gives the hold up through the store; a hold not held is released quietly. */
__attribute__((always_inline)) static inline lkc_rc lkc_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_rc rc;

	if (!lkc_release_begin(store, hold, delay_ms, &rc, err)) {
		return rc;
	}
	rc = store->ops->release(store, hold, delay_ms, err);
	lkc_release_end(store, hold, rc);
	return rc;
}

lkc_rc lkc_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err);
lkc_rc lkc_check(lkc_store *store, lkc_hold *hold, lkc_err *err);
/* The fencing token of an exclusive hold; LKC_ERR_UNSUPPORTED when the store has none. */
lkc_rc lkc_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err);
/* Gives a hold that is not held an owner chosen by the caller: 1 to LKC_OWNER_MAX bytes of any kind. */
lkc_rc lkc_hold_set_owner(lkc_hold *hold, const char *owner, size_t len, lkc_err *err);
/* Makes hold stand for an exclusive hold taken elsewhere under owner (1 to LKC_OWNER_MAX bytes). */
lkc_rc lkc_hold_restore(lkc_hold *hold, const char *owner, size_t len, lkc_err *err);
/* Whether the hold was taken by another process (we are a forked child). */
int lkc_hold_foreign(const lkc_hold *hold);
/* Drops a hold of a parent process locally, leaving the parent's hold alone. */
void lkc_abandon(lkc_store *store, lkc_hold *hold);
/* Waits, taking nothing, until nobody holds the resource (the store's wait_free). */
lkc_rc lkc_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err);
/* What the store knows of the resource now (see lkc_inspect); *out is the caller's to free with lkc_inspect_free. */
lkc_rc lkc_inspect_resource(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err);

/*
 * Auto-refresh (lkc_auto.c): holds that a thread of the process refreshes about
 * every third of their TTL while their owner lets it, on the store's twin
 * (ops->twin). One thread per process, started by the first hold that asks; a
 * forked child has none and never refreshes its parent's holds. The owner
 * (the host's lock object) pauses its record around every operation of its
 * own on the hold, so that the two never send at once.
 */
typedef struct lkc_auto lkc_auto;
/*
 * Starts refreshing a copy of hold (held, on store) with ttl_ms, first at
 * due_ns (0: a third of the TTL from now), never after until_ns (0: no
 * bound). *out is NULL and LKC_OK where there is nothing to refresh: a store
 * whose holds do not expire, a hold without TTL.
 */
lkc_rc lkc_auto_start(lkc_store *store, const lkc_hold *hold, int64_t ttl_ms, uint64_t due_ns, uint64_t until_ns,
	lkc_auto **out, lkc_err *err);
/*
 * Takes the record back for an operation of the owner: waits for a refresh
 * under way, stops the next ones, and gives hold what they learnt (its expiry,
 * the store's guesses). LKC_OK, or LKC_EXPIRED / LKC_LOST when a refresh found
 * the hold gone.
 */
lkc_rc lkc_auto_pause(lkc_auto *a, lkc_hold *hold);
/*
 * Goes on refreshing after the owner's operation, from hold as it is now (its
 * mode, parts and expiry) with ttl_ms; refreshed: the owner refreshed it, so the
 * next refresh is a third of the TTL from now; else the next one comes no later
 * than that (a failed refresh to a shorter TTL may have set it).
 */
void lkc_auto_resume(lkc_auto *a, const lkc_hold *hold, int64_t ttl_ms, uint64_t until_ns, int refreshed);
/* Gives hold the expiry the last refresh set, without pausing. */
void lkc_auto_peek(lkc_auto *a, lkc_hold *hold);
/* Stops refreshing and frees the record (after a refresh under way). */
void lkc_auto_stop(lkc_auto *a);
/* Leaves the record to the thread, which refreshes it until its bound or until it is found gone, then frees it. */
void lkc_auto_detach(lkc_auto *a);
/* Takes back (paused) a detached record of this process for hold's resource and owner on a store of store's namespace; NULL when none. */
lkc_auto *lkc_auto_adopt(lkc_store *store, const lkc_hold *hold);
/* How many holds this process's thread refreshes now. */
size_t lkc_auto_count(void);
/* Gives *twin, a store a twin op just opened, store's namespace; when out of memory releases it (*twin NULL). */
lkc_rc lkc_store_twin_ns(lkc_store **twin, const lkc_store *store, lkc_err *err);
/* Drops a store's twin as the store goes (lkc_store_release). */
void lkc_auto_untwin(lkc_store *store);
/* Stops the thread (after a refresh under way) and frees every record (module shutdown). */
void lkc_auto_shutdown(void);

/* flock store: one lock file per resource in directory (created with mode when missing). */
lkc_rc lkc_flock_open(lkc_store **out, const char *directory, int mode, lkc_err *err);
/* The lock file name (no directory) for a resource; malloc'd. */
char *lkc_flock_file_name(const char *resource, size_t len);
/* Bounds the idle lock files the store keeps open (0 to 65536; 64 unless set); LKC_ERR_INVALID outside. */
lkc_rc lkc_flock_set_cache(lkc_store *store, long cache, lkc_err *err);

/* SysV semaphore store; sets are created with mode. */
lkc_rc lkc_sem_open(lkc_store **out, int mode, lkc_err *err);
/* Idle semaphore sets a store keeps by default, and at most. */
#define LKC_SEM_CACHE_DEFAULT 64
#define LKC_SEM_CACHE_MAX 65536
/* As lkc_sem_open, keeping at most cache (0 to LKC_SEM_CACHE_MAX) idle sets for reuse. */
lkc_rc lkc_sem_open_cache(lkc_store **out, int mode, int cache, lkc_err *err);
/* The IPC key of a resource's semaphore set. */
int32_t lkc_sem_key(const char *resource, size_t len);

/* Who a Redis store sends a resource's commands to. */
typedef enum {
	LKC_REDIS_SINGLE = 0,   /* one server: host:port or socket_path */
	LKC_REDIS_SENTINEL,     /* the master the sentinels (seeds) name master_name */
	LKC_REDIS_CLUSTER       /* the master of the resource's slot, found from the seeds */
} lkc_redis_topology;

/* A server's address. */
typedef struct {
	char *host;
	int port;
} lkc_redis_addr;

/* Redis connection settings. Strings are owned by the config (lkc_redis_config_free). */
typedef struct {
	char *host;             /* TCP host, NULL for a unix socket */
	int port;
	char *socket_path;      /* unix socket path, NULL for TCP */
	char *username;         /* NULL: no ACL user */
	char *password;         /* NULL: no AUTH */
	int database;
	char *prefix;           /* key prefix, may hold any bytes */
	size_t prefix_len;
	int64_t timeout_ms;     /* connect and command timeout */
	int persistent;         /* keep the connection for the next store of the same process */
	int fair;               /* waiters are served in arrival order (default); 0: unordered */
	lkc_redis_topology topology;
	lkc_redis_addr *seeds;  /* Sentinel: the sentinels; Cluster: the nodes to read the slot map from */
	size_t nseeds;
	char *master_name;      /* Sentinel: the name the sentinels know the master by */
	char *sentinel_username; /* Sentinel: the sentinels' own credentials (NULL: none) */
	char *sentinel_password;
	int tls;                /* rediss: every connection (sentinels and nodes too) speaks TLS */
	int tls_verify;         /* verify the peer's certificate and name (default 1) */
	char *tls_ca_file;      /* NULL: the system's default CA paths, unless tls_ca_dir */
	char *tls_ca_dir;
	char *tls_cert;         /* client certificate and key for mutual TLS (both or neither) */
	char *tls_key;
	char *tls_server_name;  /* SNI and the name verified; NULL: the host connected to */
	int replicas;           /* > 0: writes wait for WAIT replicas acknowledgements */
	int64_t replicas_timeout_ms; /* how long WAIT may take */
} lkc_redis_config;

void lkc_redis_config_init(lkc_redis_config *cfg);
void lkc_redis_config_free(lkc_redis_config *cfg);
/* Takes ownership of cfg's strings (cfg is left empty). */
lkc_rc lkc_redis_open(lkc_store **out, lkc_redis_config *cfg, lkc_err *err);
/* "host:port" or the socket path, for messages (never the password). */
const char *lkc_redis_endpoint(const lkc_store *store);
/* Whether store is a Redis store (lkc_redis_open). */
int lkc_redis_is(const lkc_store *store);
/*
 * Whether two Redis stores of one server each name one address on one port:
 * numeric addresses, localhost as the loopback. 0 when either cannot tell
 * without a resolver (a host name, a socket, Sentinel, Cluster).
 */
int lkc_redis_same_address(const lkc_store *a, const lkc_store *b);
/* A Redis store's connect and command timeout. */
int64_t lkc_redis_timeout_ms(const lkc_store *store);
/*
 * Raises the resource's fencing counter to floor while hold is the write hold
 * on the Redis store (the combined store's tokens): LKC_OK, LKC_LOST when it
 * is not ours, or an error.
 */
lkc_rc lkc_redis_fence_floor(lkc_store *store, lkc_hold *hold, int64_t floor, lkc_err *err);
/* Closes every pooled persistent connection (module shutdown). */
void lkc_redis_pool_shutdown(void);
/* hiredis version, "major.minor.patch". */
const char *lkc_redis_hiredis_version(void);

/* --- combined store (lkc_combined.c): one lock over several independent Redis stores --- */
/* The most member stores. */
#define LKC_COMBINED_MAX 16
/*
 * Opens a store whose holds are taken on a majority of members (unanimous:
 * all of them), side by side. Every member must be a Redis store, reaching a
 * server no other member reaches; the combined store keeps a reference to each.
 */
lkc_rc lkc_combined_open(lkc_store **out, lkc_store *const *members, size_t n, int unanimous, lkc_err *err);
/* How many members a hold needs. */
int lkc_combined_quorum(const lkc_store *store);
/* The clock drift allowance of a hold of ttl_ms: the hold counts as gone this much before its TTL ends. */
int64_t lkc_combined_drift_ms(int64_t ttl_ms);
/* --- end combined store --- */

/*
 * The connection settings of the SQL stores, PostgreSQL and MySQL/MariaDB. Strings
 * are owned by the config (lkc_pg_config_free, lkc_my_config_free).
 */
typedef struct {
	char *host;             /* TCP host, or a unix socket (starts with '/'): PostgreSQL's directory, MySQL's path */
	int port;               /* the server's default unless set (PostgreSQL 5432, whose socket's name has it too; MySQL 3306) */
	char *user;             /* NULL: the library's default (the OS user; libpq also PGUSER) */
	char *password;         /* NULL: none (libpq also PGPASSWORD, ~/.pgpass) */
	char *dbname;           /* NULL: PostgreSQL the user name; MySQL none (fencing tokens then cannot have their table; table holds need one) */
	char *prefix;           /* hashed into every key or lock name, may hold any bytes */
	size_t prefix_len;
	int64_t timeout_ms;     /* connect and statement timeout (5000 unless set) */
	int persistent;         /* keep idle connections for the next store of the same process */
	int table_holds;        /* holds are rows of a table with a TTL (holds => 'table'), not bound to a session */
	char *table;            /* table holds: the table (PostgreSQL "name" or "schema.name"; MySQL 1 to 64 bytes of
	                           [A-Za-z0-9_$]); NULL: LKC_PG_TABLE_DEFAULT, LKC_MY_TABLE_DEFAULT */
} lkc_sql_config;
/* Frees the strings of cfg (the password zeroed first) and zeroes it. */
void lkc_sql_config_free(lkc_sql_config *cfg);

typedef lkc_sql_config lkc_pg_config;

/* The table of table mode unless one is named. */
#define LKC_PG_TABLE_DEFAULT "lock_holds"
/*
 * Whether name is a table name table mode accepts: an identifier ([A-Za-z_] then
 * [A-Za-z0-9_$], at most 63 bytes), optionally qualified by a schema the same way.
 */
int lkc_pg_table_name_check(const char *name, size_t len);

void lkc_pg_config_init(lkc_pg_config *cfg);
void lkc_pg_config_free(lkc_pg_config *cfg);
/* Opens a PostgreSQL store (no connection yet: the first operation connects); copies cfg. */
lkc_rc lkc_pg_open(lkc_store **out, const lkc_pg_config *cfg, lkc_err *err);
/*
 * The advisory key of a resource: the first 8 bytes, big-endian, of SHA-256 over
 * the prefix's length (4 bytes, big-endian), the prefix and the resource. -1 when out of memory.
 */
int lkc_pg_key(const char *prefix, size_t prefix_len, const char *resource, size_t len, int64_t *key);
/* "host:port" or the socket directory, for messages (never the password). */
const char *lkc_pg_endpoint(const lkc_store *store);
/* Closes every pooled persistent connection (module shutdown). */
void lkc_pg_pool_shutdown(void);
/* libpq's version, "major.minor". */
const char *lkc_pg_libpq_version(void);

/* --- MySQL store (lkc_mysql.c, lkc_mysql_table.c) --- */
/* The table of table holds unless the option "table" names another. */
#define LKC_MY_TABLE_DEFAULT "lock_holds"
typedef lkc_sql_config lkc_my_config;

void lkc_my_config_init(lkc_my_config *cfg);
void lkc_my_config_free(lkc_my_config *cfg);
/* Opens a MySQL store (no connection yet: the first operation connects); copies cfg. */
lkc_rc lkc_my_open(lkc_store **out, const lkc_my_config *cfg, lkc_err *err);
/*
 * The GET_LOCK name of a resource, 64 characters: "lock:" and the first 59 lowercase
 * hex digits of SHA-256 over the prefix's length (4 bytes, big-endian), the prefix and
 * the resource. -1 when out of memory.
 */
int lkc_my_name(const char *prefix, size_t prefix_len, const char *resource, size_t len, char out[65]);
/* "host:port" or the socket path, for messages (never the password). */
const char *lkc_my_endpoint(const lkc_store *store);
/* Whether name can be the table of table holds: 1 to 64 bytes of [A-Za-z0-9_$]. */
int lkc_my_table_name_ok(const char *name, size_t len);
/* Closes every pooled persistent connection (module shutdown). */
void lkc_my_pool_shutdown(void);
/* Ends, for real, what bailouts left mid-statement on MySQL sessions (request end). */
void lkc_my_request_end(void);
/* The client library's version. */
const char *lkc_my_client_version(void);
/* --- end MySQL store --- */

/* A parsed DSN. */
typedef struct {
	char *scheme;
	char *user;             /* NULL when absent or empty */
	char *password;         /* NULL when absent or empty */
	char *host;             /* NULL when absent or empty; a comma-separated list keeps its ports, port is then 0 */
	int port;               /* 0 when absent */
	char *path;             /* NULL when absent; as written, with its leading '/' */
	size_t nparams;
	char **param_keys;
	char **param_values;
} lkc_dsn;

/*
 * Parses scheme:[//[user[:pass]@]host[:port]][/path][?k=v&...]; percent-decodes parts.
 * out is overwritten; on failure it is left zeroed and err never quotes the password.
 */
lkc_rc lkc_dsn_parse(const char *dsn, size_t len, lkc_dsn *out, lkc_err *err);
/* Frees every part; safe on a zeroed or partly filled dsn, which it leaves zeroed. */
void lkc_dsn_free(lkc_dsn *dsn);

/*
 * Splits a DSN's list of hosts ("h1:7000,[::1],h3") into *count addresses,
 * default_port where an element names none. An empty element, a bad port, a
 * port without a host or a host repeated (same name, any case, same port) is
 * LKC_ERR_INVALID; messages begin with label ("redis+cluster DSN") and never
 * quote a host. On failure *out is NULL and *count 0.
 */
lkc_rc lkc_dsn_hosts(const char *list, int default_port, const char *label,
	lkc_redis_addr **out, size_t *count, lkc_err *err);
/* Frees what lkc_dsn_hosts made; NULL is fine. */
void lkc_dsn_hosts_free(lkc_redis_addr *addrs, size_t count);

/*
 * Reads a parsed Redis DSN's scheme, credentials, hosts and path into cfg
 * (not its query: the host reads that as options). redis:, rediss: (tls):
 * host[:port][/db] or, redis: only, a unix socket path. redis+sentinel:,
 * rediss+sentinel: the sentinels as seeds (port 26379 when none), then
 * /master_name[/db]. redis+cluster:, rediss+cluster: the nodes as seeds (port
 * 6379 when none), database 0 only. Sentinel and Cluster leave host NULL. The
 * DSN's user and password are the server's (the master's behind sentinels).
 * LKC_ERR_INVALID names what is wrong, never quoting the DSN; cfg may then be
 * partly filled, and is freed as usual.
 */
lkc_rc lkc_redis_config_dsn(lkc_redis_config *cfg, const lkc_dsn *dsn, lkc_err *err);
/* --- MemcachedStore (lkc_memcached.c, built when libmemcached is found: LKC_HAVE_MEMCACHED) --- */
/* At most this many servers, and a prefix of at most this many printable ASCII bytes without spaces. */
#define LKC_MC_SERVERS_MAX 64
#define LKC_MC_PREFIX_MAX 128

/* A memcached server's address. */
typedef struct {
	char *host;
	int port;
} lkc_memcached_server;

/* Memcached store settings. Strings are owned by the config (lkc_memcached_config_free). */
typedef struct {
	lkc_memcached_server *servers; /* a resource goes to one of them, always the same */
	size_t nservers;
	char *prefix;           /* key prefix */
	size_t prefix_len;
	int64_t timeout_ms;     /* connect and command timeout */
	int persistent;         /* keep the connections for the next store of the same process */
} lkc_memcached_config;

void lkc_memcached_config_init(lkc_memcached_config *cfg);
void lkc_memcached_config_free(lkc_memcached_config *cfg);
/* Appends the servers of "h1:11211,h2,[::1]:11212" (default_port where none is given); err names what is wrong. */
lkc_rc lkc_memcached_add_servers(lkc_memcached_config *cfg, const char *list, int default_port, lkc_err *err);
/* Takes ownership of cfg's strings (cfg is left empty). */
lkc_rc lkc_memcached_open(lkc_store **out, lkc_memcached_config *cfg, lkc_err *err);
/*
 * The key of a resource: prefix, then 'x' and the name in hex when that fits
 * memcached's 250 bytes, else 'h' and the hex SHA-256 of the name; malloc'd.
 */
char *lkc_memcached_key(const char *prefix, size_t prefix_len, const char *resource, size_t len, size_t *key_len);
/* Closes every pooled persistent connection (module shutdown). */
void lkc_memcached_pool_shutdown(void);
/* libmemcached's version. */
const char *lkc_memcached_version(void);
/* --- end MemcachedStore --- */

#endif
