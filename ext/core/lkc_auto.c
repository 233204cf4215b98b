/*
 * Auto-refresh: holds that a thread of the process refreshes while their
 * owner lets it (API.md, $autoRefresh).
 *
 * One thread per process at most, started by the first hold that asks. It
 * sleeps until the next record is due, refreshes that record's copy of the
 * hold on the store's twin (a store of the same settings with connections of
 * its own, ops->twin), with the twin's other records due about then, in one
 * round trip where the store can (ops->refresh_many), and schedules each again
 * a third of its TTL later. It
 * never touches the host's memory: each record (lkc_auto) keeps its own copy
 * of the hold, and a twin is used by this thread alone.
 *
 * The owner and the thread share the records under one mutex. The thread lets
 * go of the mutex for a refresh and marks the record busy meanwhile; the owner
 * waits for that before it uses the hold itself (lkc_auto_pause) or lets go
 * of the record (lkc_auto_stop). A refresh that fails for a store that is away
 * is tried again until the hold would have ended, then the hold counts as
 * expired; one that finds the hold gone ends the refreshing. Nothing here ever
 * takes a hold.
 *
 * fork(): the child has no thread. Its records and twins are its parent's:
 * kept (reachable), never refreshed, never freed, their connections never
 * closed. A hold of the child that asks starts a thread and twins of its own.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A hold is refreshed up to this fraction of its TTL before it is due, with others that are. */
#define LKC_AUTO_EARLY 30
/* A failed refresh is tried again after a tenth of the TTL, within these bounds. */
#define LKC_AUTO_RETRY_MIN_MS 10
#define LKC_AUTO_RETRY_MAX_MS 1000
/* Most holds of one store one wake-up refreshes together. */
#define LKC_AUTO_BATCH 64

/* The thread's copy of a store, shared by the records of the store's holds. */
typedef struct lkc_auto_twin {
	lkc_store *store;
	unsigned refs;           /* the origin store's, and one per record */
	pid_t pid;               /* the process that made it: a forked child makes its own */
	struct lkc_auto_twin *next; /* a forked child's list of its parent's twins */
} lkc_auto_twin;

struct lkc_auto {
	lkc_auto_twin *twin;
	lkc_hold hold;           /* the thread's copy */
	int64_t ttl_ms;
	uint64_t due_ns;         /* the next refresh */
	uint64_t until_ns;       /* no refresh after this, 0: no bound */
	uint64_t expires_ns;     /* as the last refresh (or the owner) left it */
	lkc_rc gone;             /* LKC_OK; LKC_EXPIRED or LKC_LOST once a refresh found the hold gone */
	int paused;              /* the owner is using the hold */
	int busy;                /* a refresh of it is under way, the mutex let go */
	int detached;            /* no owner: the thread frees it when it stops */
	pid_t pid;               /* the process that made it */
	struct lkc_auto *prev;
	struct lkc_auto *next;
};

static pthread_once_t lkc_auto_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lkc_auto_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lkc_auto_wake;     /* the thread: the records changed */
static pthread_cond_t lkc_auto_done;     /* owners: a refresh ended */
static lkc_auto *lkc_auto_list;          /* this process's records */
static size_t lkc_auto_n;
static lkc_auto *lkc_auto_parents;       /* a forked child's: its parent's records, kept as they were */
static lkc_auto_twin *lkc_auto_parent_twins; /* and the parent's twins its stores let go of */
static pthread_t lkc_auto_thread;
static int lkc_auto_running;             /* the thread was started in this process */
static int lkc_auto_quit;
static int lkc_auto_forking;             /* a fork is waiting for the refresh under way: start none */

static void lkc_auto_conds(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&lkc_auto_wake, &attr);
	pthread_cond_init(&lkc_auto_done, &attr);
	pthread_condattr_destroy(&attr);
}

/* Whether a refresh is under way (the thread then holds the store's locks, the topology cache's too). Under the mutex. */
static int lkc_auto_busy(void)
{
	for (const lkc_auto *a = lkc_auto_list; a != NULL; a = a->next) {
		if (a->busy) {
			return 1;
		}
	}
	return 0;
}

/*
 * fork() waits for a refresh under way (within its store's timeout), so that the
 * child never inherits a lock the thread held in the store's code; the thread
 * starts no other meanwhile.
 */
static void lkc_auto_fork_prepare(void)
{
	pthread_mutex_lock(&lkc_auto_lock);
	lkc_auto_forking = 1;
	while (lkc_auto_busy()) {
		pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
	}
}

static void lkc_auto_fork_parent(void)
{
	lkc_auto_forking = 0;
	pthread_cond_signal(&lkc_auto_wake);
	pthread_mutex_unlock(&lkc_auto_lock);
}

static void lkc_auto_fork_child(void)
{
	lkc_auto *last = lkc_auto_list;

	/* The records stay reachable, as their parent's, and nothing here uses them again. */
	if (last != NULL) {
		while (last->next != NULL) {
			last = last->next;
		}
		last->next = lkc_auto_parents;
		if (lkc_auto_parents != NULL) {
			lkc_auto_parents->prev = last;
		}
		lkc_auto_parents = lkc_auto_list;
	}
	lkc_auto_list = NULL;
	lkc_auto_n = 0;
	lkc_auto_running = 0;
	lkc_auto_quit = 0;
	lkc_auto_forking = 0;
	/* No thread waits on them here; the parent's thread may have been inside one as it forked. */
	lkc_auto_conds();
	pthread_mutex_unlock(&lkc_auto_lock);
}

static void lkc_auto_setup(void)
{
	lkc_auto_conds();
	(void) lkc_pid();
	pthread_atfork(lkc_auto_fork_prepare, lkc_auto_fork_parent, lkc_auto_fork_child);
}

/* Whether a is a record of this process (not one a forked child inherited). */
static int lkc_auto_ours(const lkc_auto *a)
{
	return a->pid == lkc_pid();
}

/* Lets go of one reference to a twin; the last one destroys it. Under the mutex. */
static void lkc_auto_twin_put(lkc_auto_twin *t)
{
	if (--t->refs == 0) {
		lkc_store_release(t->store);
		free(t);
	}
}

/* Unlinks and frees a record of this process. Under the mutex, the record not busy. */
static void lkc_auto_free(lkc_auto *a)
{
	if (a->prev != NULL) {
		a->prev->next = a->next;
	} else {
		lkc_auto_list = a->next;
	}
	if (a->next != NULL) {
		a->next->prev = a->prev;
	}
	lkc_auto_n--;
	lkc_hold_dispose(&a->hold);
	lkc_auto_twin_put(a->twin);
	free(a);
}

/* Whether the thread refreshes a now or later. Under the mutex. */
static int lkc_auto_live(const lkc_auto *a)
{
	return !a->paused && a->gone == LKC_OK && (a->until_ns == 0 || a->due_ns <= a->until_ns);
}

/* What a refresh of record a that began at start and ended in rc means for it. Under the mutex. */
static void lkc_auto_refreshed(lkc_auto *a, lkc_stats *stats, uint64_t start, lkc_rc rc)
{
	int64_t ttl_ms = a->ttl_ms;

	a->busy = 0;
	if (rc == LKC_OK) {
		a->hold.expires_ns = lkc_hold_expiry(start, ttl_ms, a->hold.margin_ns);
		a->expires_ns = a->hold.expires_ns;
		a->due_ns = start + (uint64_t) ttl_ms * 1000000u / 3;
		__atomic_add_fetch(&stats->n[LKC_STAT_AUTO_REFRESHED], 1, __ATOMIC_RELAXED);
	} else if (rc == LKC_EXPIRED || rc == LKC_LOST) {
		a->gone = rc;
	} else {
		/* The store is away: again soon, until the hold would have ended. */
		uint64_t now = lkc_now_ns();
		int64_t retry_ms = ttl_ms / 10;

		retry_ms = retry_ms < LKC_AUTO_RETRY_MIN_MS ? LKC_AUTO_RETRY_MIN_MS
			: retry_ms > LKC_AUTO_RETRY_MAX_MS ? LKC_AUTO_RETRY_MAX_MS : retry_ms;
		if (a->expires_ns != 0 && now >= a->expires_ns) {
			a->gone = LKC_EXPIRED;
		} else {
			a->due_ns = now + (uint64_t) retry_ms * 1000000u;
			if (a->expires_ns != 0 && a->due_ns > a->expires_ns) {
				/* One last try just before it ends. */
				a->due_ns = a->expires_ns > now + 1000000u ? a->expires_ns - 1000000u : now;
			}
		}
	}
	if (a->detached && !lkc_auto_live(a)) {
		lkc_auto_free(a);
	}
}

/* Whether record a is due at now, or close enough to go with a wake-up that is. Under the mutex. */
static int lkc_auto_due(const lkc_auto *a, uint64_t now)
{
	return a->due_ns <= now + (uint64_t) a->ttl_ms * 1000000u / LKC_AUTO_EARLY;
}

/*
 * Refreshes record first and the others of its twin that are due with it
 * (at most LKC_AUTO_BATCH, in one round trip where the store can:
 * ops->refresh_many), letting go of the mutex meanwhile. Under the mutex.
 */
static void lkc_auto_refresh_due(lkc_auto *first, uint64_t now)
{
	lkc_auto_twin *twin = first->twin;
	lkc_store *store = twin->store;
	/* The records may free the twin as they end: the counters are the kind's, which stay. */
	lkc_stats *stats = store->ops->stats;
	lkc_auto *batch[LKC_AUTO_BATCH];
	lkc_hold *holds[LKC_AUTO_BATCH];
	int64_t ttls[LKC_AUTO_BATCH];
	lkc_rc rcs[LKC_AUTO_BATCH];
	lkc_err errs[LKC_AUTO_BATCH];
	uint64_t start;
	int n = 1;

	batch[0] = first;
	for (lkc_auto *a = lkc_auto_list; a != NULL && n < LKC_AUTO_BATCH; a = a->next) {
		if (a != first && a->twin == twin && !a->busy && lkc_auto_live(a) && lkc_auto_due(a, now)) {
			batch[n++] = a;
		}
	}
	for (int i = 0; i < n; i++) {
		batch[i]->busy = 1;
		holds[i] = &batch[i]->hold;
		ttls[i] = batch[i]->ttl_ms;
		lkc_err_clear(&errs[i]);
	}
	pthread_mutex_unlock(&lkc_auto_lock);
	start = lkc_now_ns();
	if (n > 1 && store->ops->refresh_many != NULL) {
		store->ops->refresh_many(store, holds, ttls, n, rcs, errs);
	} else {
		for (int i = 0; i < n; i++) {
			rcs[i] = store->ops->refresh(store, holds[i], ttls[i], &errs[i]);
		}
	}
	pthread_mutex_lock(&lkc_auto_lock);
	for (int i = 0; i < n; i++) {
		lkc_auto_refreshed(batch[i], stats, start, rcs[i]);
	}
	pthread_cond_broadcast(&lkc_auto_done);
}

static void *lkc_auto_main(void *arg)
{
	(void) arg;
	lkc_thread_without_host();
	pthread_mutex_lock(&lkc_auto_lock);
	while (!lkc_auto_quit) {
		uint64_t now = lkc_now_ns();
		uint64_t next = 0;
		lkc_auto *due = NULL;

		for (lkc_auto *a = lkc_auto_list; a != NULL; a = a->next) {
			if (a->busy || !lkc_auto_live(a)) {
				continue;
			}
			/* Holds due within a thirtieth of their TTL go with this wake-up: one wake-up for a burst. */
			if (lkc_auto_due(a, now)) {
				if (due == NULL || a->due_ns < due->due_ns) {
					due = a;
				}
			} else if (next == 0 || a->due_ns < next) {
				next = a->due_ns;
			}
		}
		if (lkc_auto_forking) {
			/* The fork's handlers signal when it is done. */
			pthread_cond_wait(&lkc_auto_wake, &lkc_auto_lock);
		} else if (due != NULL) {
			lkc_auto_refresh_due(due, now);
		} else if (next == 0) {
			pthread_cond_wait(&lkc_auto_wake, &lkc_auto_lock);
		} else {
			struct timespec until = { .tv_sec = (time_t) (next / 1000000000u), .tv_nsec = (long) (next % 1000000000u) };

			pthread_cond_timedwait(&lkc_auto_wake, &lkc_auto_lock, &until);
		}
	}
	pthread_mutex_unlock(&lkc_auto_lock);
	return NULL;
}

/* Starts the thread with every signal blocked: the host's signals go to the host's thread. Under the mutex. */
static lkc_rc lkc_auto_run(lkc_err *err)
{
	sigset_t all, before;
	int e;

	if (lkc_auto_running) {
		return LKC_OK;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	lkc_auto_quit = 0;
	e = pthread_create(&lkc_auto_thread, NULL, lkc_auto_main, NULL);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (e != 0) {
		return lkc_err_errno(err, LKC_ERR_SYSTEM, e, "cannot start the auto-refresh thread");
	}
	lkc_auto_running = 1;
	return LKC_OK;
}

/* The store's twin for this process, made on first use. Under the mutex. */
static lkc_rc lkc_auto_twin_of(lkc_store *store, lkc_auto_twin **out, lkc_err *err)
{
	lkc_auto_twin *t = store->twin;
	lkc_store *twin;
	lkc_rc rc;

	if (t != NULL && t->pid == lkc_pid()) {
		*out = t;
		return LKC_OK;
	}
	/* A twin of the parent's (we are a forked child) stays the parent's, kept as it was. */
	if (t != NULL) {
		t->next = lkc_auto_parent_twins;
		lkc_auto_parent_twins = t;
	}
	store->twin = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	rc = store->ops->twin(store, &twin, err);
	if (rc != LKC_OK) {
		free(t);
		return rc;
	}
	t->store = twin;
	t->refs = 1;
	t->pid = lkc_pid();
	store->twin = t;
	*out = t;
	return LKC_OK;
}

lkc_rc lkc_auto_start(lkc_store *store, const lkc_hold *hold, int64_t ttl_ms, uint64_t due_ns, uint64_t until_ns,
	lkc_auto **out, lkc_err *err)
{
	lkc_auto_twin *t = NULL;
	lkc_auto *a;
	lkc_rc rc;

	*out = NULL;
	if (!(store->ops->caps & LKC_CAP_EXPIRY) || store->ops->twin == NULL || ttl_ms == LKC_TTL_NONE
		|| hold->mode == LKC_MODE_NONE) {
		return LKC_OK;
	}
	pthread_once(&lkc_auto_once, lkc_auto_setup);
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	rc = lkc_hold_copy(&a->hold, hold, err);
	if (rc != LKC_OK) {
		free(a);
		return rc;
	}
	a->ttl_ms = ttl_ms;
	a->due_ns = due_ns;
	a->until_ns = until_ns;
	/* A restored hold's expiry is unknown here: at the latest a TTL from now, so a store away ends it. */
	a->expires_ns = hold->expires_ns != 0 ? hold->expires_ns : lkc_now_ns() + (uint64_t) ttl_ms * 1000000u;
	a->gone = LKC_OK;
	a->pid = lkc_pid();
	pthread_mutex_lock(&lkc_auto_lock);
	rc = lkc_auto_twin_of(store, &t, err);
	if (rc == LKC_OK) {
		rc = lkc_auto_run(err);
	}
	if (rc != LKC_OK) {
		pthread_mutex_unlock(&lkc_auto_lock);
		lkc_hold_dispose(&a->hold);
		free(a);
		return rc;
	}
	/*
	 * The first refresh a third of the TTL from now; on a twin just made, a tenth: that
	 * refresh also connects, which may take a while (a TLS handshake, a remote server).
	 */
	if (a->due_ns == 0) {
		a->due_ns = lkc_now_ns() + (uint64_t) ttl_ms * 1000000u / (t->refs == 1 ? 10 : 3);
	}
	t->refs++;
	a->twin = t;
	a->next = lkc_auto_list;
	if (a->next != NULL) {
		a->next->prev = a;
	}
	lkc_auto_list = a;
	lkc_auto_n++;
	pthread_cond_signal(&lkc_auto_wake);
	pthread_mutex_unlock(&lkc_auto_lock);
	*out = a;
	return LKC_OK;
}

/* Gives hold what the refreshes learnt. Under the mutex, a not busy. */
static void lkc_auto_give(const lkc_auto *a, lkc_hold *hold)
{
	hold->expires_ns = a->expires_ns;
	hold->margin_ns = a->hold.margin_ns;
	memcpy(hold->next, a->hold.next, sizeof(hold->next));
	for (int i = 0; i < hold->nparts && i < a->hold.nparts; i++) {
		hold->parts[i].expires_ns = a->hold.parts[i].expires_ns;
		memcpy(hold->parts[i].next, a->hold.parts[i].next, sizeof(hold->parts[i].next));
	}
}

lkc_rc lkc_auto_pause(lkc_auto *a, lkc_hold *hold)
{
	lkc_rc gone;

	if (!lkc_auto_ours(a)) {
		return LKC_OK;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	while (a->busy) {
		pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
	}
	a->paused = 1;
	if (a->gone == LKC_OK) {
		lkc_auto_give(a, hold);
	}
	gone = a->gone;
	pthread_mutex_unlock(&lkc_auto_lock);
	return gone;
}

void lkc_auto_resume(lkc_auto *a, const lkc_hold *hold, int64_t ttl_ms, uint64_t until_ns, int refreshed)
{
	lkc_hold copy;
	lkc_err err;
	uint64_t third;

	if (!lkc_auto_ours(a) || ttl_ms == LKC_TTL_NONE) {
		/* A hold without TTL has nothing to refresh: the owner stops the record. */
		return;
	}
	/* Out of memory: the thread goes on with the copy it has, which names the same hold. */
	if (lkc_hold_copy(&copy, hold, &err) != LKC_OK) {
		copy.resource = NULL;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	while (a->busy) {
		pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
	}
	third = lkc_now_ns() + (uint64_t) ttl_ms * 1000000u / 3;
	if (copy.resource != NULL) {
		lkc_hold_dispose(&a->hold);
		a->hold = copy;
	}
	a->ttl_ms = ttl_ms;
	a->until_ns = until_ns;
	if (hold->expires_ns != 0) {
		a->expires_ns = hold->expires_ns;
	}
	a->gone = LKC_OK;
	/*
	 * A third of the TTL from now after the owner's refresh; no later than that
	 * otherwise (a refresh to a shorter TTL that failed may have set it all the same).
	 */
	if (refreshed || a->due_ns > third) {
		a->due_ns = third;
	}
	a->paused = 0;
	pthread_cond_signal(&lkc_auto_wake);
	pthread_mutex_unlock(&lkc_auto_lock);
}

void lkc_auto_peek(lkc_auto *a, lkc_hold *hold)
{
	if (!lkc_auto_ours(a)) {
		return;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	if (a->gone == LKC_OK && !a->paused) {
		hold->expires_ns = a->expires_ns;
	}
	pthread_mutex_unlock(&lkc_auto_lock);
}

void lkc_auto_stop(lkc_auto *a)
{
	if (!lkc_auto_ours(a)) {
		return;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	while (a->busy) {
		pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
	}
	lkc_auto_free(a);
	pthread_mutex_unlock(&lkc_auto_lock);
}

void lkc_auto_detach(lkc_auto *a)
{
	if (!lkc_auto_ours(a)) {
		return;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	while (a->busy) {
		pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
	}
	a->paused = 0;
	if (lkc_auto_live(a)) {
		a->detached = 1;
		pthread_cond_signal(&lkc_auto_wake);
	} else {
		lkc_auto_free(a);
	}
	pthread_mutex_unlock(&lkc_auto_lock);
}

lkc_auto *lkc_auto_adopt(lkc_store *store, const lkc_hold *hold)
{
	lkc_auto *found = NULL;

	if (store->ops->twin == NULL) {
		return NULL;
	}
	pthread_once(&lkc_auto_once, lkc_auto_setup);
	pthread_mutex_lock(&lkc_auto_lock);
	for (lkc_auto *a = lkc_auto_list; a != NULL && found == NULL; a = a->next) {
		const lkc_store *twin = a->twin->store;

		if (a->detached && twin->ops == store->ops && twin->ns_len == store->ns_len
			&& (store->ns_len == 0 || memcmp(twin->ns, store->ns, store->ns_len) == 0)
			&& a->hold.resource_len == hold->resource_len
			&& memcmp(a->hold.resource, hold->resource, hold->resource_len) == 0
			&& a->hold.owner_len == hold->owner_len && memcmp(a->hold.owner, hold->owner, hold->owner_len) == 0) {
			found = a;
		}
	}
	if (found != NULL) {
		/* Ours before the wait: a refresh under way that finds the hold gone must not free it. */
		found->detached = 0;
		while (found->busy) {
			pthread_cond_wait(&lkc_auto_done, &lkc_auto_lock);
		}
		found->paused = 1;
	}
	pthread_mutex_unlock(&lkc_auto_lock);
	return found;
}

size_t lkc_auto_count(void)
{
	size_t n = 0;

	pthread_once(&lkc_auto_once, lkc_auto_setup);
	pthread_mutex_lock(&lkc_auto_lock);
	for (const lkc_auto *a = lkc_auto_list; a != NULL; a = a->next) {
		n += lkc_auto_live(a);
	}
	pthread_mutex_unlock(&lkc_auto_lock);
	return n;
}

void lkc_auto_untwin(lkc_store *store)
{
	lkc_auto_twin *t = store->twin;

	store->twin = NULL;
	if (t->pid != lkc_pid()) {
		/* The parent's: its connections are the parent thread's. */
		pthread_mutex_lock(&lkc_auto_lock);
		t->next = lkc_auto_parent_twins;
		lkc_auto_parent_twins = t;
		pthread_mutex_unlock(&lkc_auto_lock);
		return;
	}
	pthread_mutex_lock(&lkc_auto_lock);
	lkc_auto_twin_put(t);
	pthread_mutex_unlock(&lkc_auto_lock);
}

void lkc_auto_shutdown(void)
{
	pthread_once(&lkc_auto_once, lkc_auto_setup);
	pthread_mutex_lock(&lkc_auto_lock);
	if (lkc_auto_running) {
		lkc_auto_quit = 1;
		pthread_cond_signal(&lkc_auto_wake);
		pthread_mutex_unlock(&lkc_auto_lock);
		pthread_join(lkc_auto_thread, NULL);
		pthread_mutex_lock(&lkc_auto_lock);
		lkc_auto_running = 0;
	}
	while (lkc_auto_list != NULL) {
		lkc_auto_free(lkc_auto_list);
	}
	pthread_mutex_unlock(&lkc_auto_lock);
}
