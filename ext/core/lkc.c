/* The store-independent core: errors, clock, tokens, holds and the lock layer. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void lkc_err_clear(lkc_err *err)
{
	err->code = LKC_OK;
	err->msg[0] = '\0';
}

lkc_rc lkc_err_set(lkc_err *err, lkc_rc code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

lkc_rc lkc_err_errno(lkc_err *err, lkc_rc code, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	used = strlen(err->msg);
	snprintf(err->msg + used, sizeof(err->msg) - used, ": %s", strerror(errnum));
	return code;
}

lkc_rc lkc_rc_from_errno(int errnum)
{
	switch (errnum) {
		case EACCES:
		case EPERM:
		case EROFS:
			return LKC_ERR_PERM;
		case EINVAL:
		case ENAMETOOLONG:
		case ELOOP:
		case ENOTDIR:
			return LKC_ERR_INVALID;
		default:
			return LKC_ERR_SYSTEM;
	}
}

const char *lkc_rc_name(lkc_rc rc)
{
	static const char *const names[] = {
		"OK", "BUSY", "EXPIRED", "LOST", "INTERRUPTED", "ERR_IO", "ERR_PROTOCOL",
		"ERR_REFUSED", "ERR_PERM", "ERR_SYSTEM", "ERR_INVALID", "ERR_STATE",
		"ERR_UNSUPPORTED",
	};

	if ((unsigned) rc < sizeof(names) / sizeof(names[0])) {
		return names[rc];
	}
	return "UNKNOWN";
}

pid_t lkc_pid_cached;
unsigned long lkc_fork_total;
static pthread_once_t lkc_pid_once = PTHREAD_ONCE_INIT;

static void lkc_after_fork_parent(void)
{
	lkc_fork_total++;
}

lkc_stats lkc_stats_of[LKC_KINDS];

const char *const lkc_stat_names[LKC_STATS] = {
	[LKC_STAT_ACQUIRED] = "acquired",
	[LKC_STAT_FAILED] = "failed",
	[LKC_STAT_WAITED] = "waited",
	[LKC_STAT_TIMED_OUT] = "timed_out",
	[LKC_STAT_HANDED_OVER] = "handed_over",
	[LKC_STAT_RELEASED] = "released",
	[LKC_STAT_EXPIRED] = "expired",
	[LKC_STAT_LOST] = "lost",
	[LKC_STAT_REFRESHED] = "refreshed",
	[LKC_STAT_AUTO_REFRESHED] = "auto_refreshed",
	[LKC_STAT_STORAGE_ERRORS] = "storage_errors",
};

static void lkc_after_fork_child(void)
{
	__atomic_store_n(&lkc_pid_cached, getpid(), __ATOMIC_RELEASE);
	lkc_fork_total++;
	/* The child's counters count what it does; the stores it inherited stay shown. */
	for (int k = 0; k < LKC_KINDS; k++) {
		memset(lkc_stats_of[k].n, 0, sizeof(lkc_stats_of[k].n));
		lkc_stats_of[k].wait_ns = 0;
	}
}

static void lkc_pid_init(void)
{
	/* The fork handlers first: whoever sees the pid set sees forks counted. */
	pthread_atfork(NULL, lkc_after_fork_parent, lkc_after_fork_child);
	__atomic_store_n(&lkc_pid_cached, getpid(), __ATOMIC_RELEASE);
}

pid_t lkc_pid_setup(void)
{
	pthread_once(&lkc_pid_once, lkc_pid_init);
	return __atomic_load_n(&lkc_pid_cached, __ATOMIC_ACQUIRE);
}

uint64_t lkc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

int64_t lkc_ms_left(uint64_t deadline_ns)
{
	uint64_t now = lkc_now_ns();

	if (deadline_ns == 0) {
		return INT64_MAX;
	}
	if (now >= deadline_ns) {
		return 0;
	}
	/* Round up so that a wait never ends before its deadline. */
	return (int64_t) ((deadline_ns - now + 999999u) / 1000000u);
}

size_t lkc_i64_str(char *out, int64_t v)
{
	char digits[20];
	/* The magnitude in unsigned arithmetic: INT64_MIN has no positive int64_t. */
	uint64_t n = v < 0 ? 0u - (uint64_t) v : (uint64_t) v;
	size_t len = 0, at = 0;

	do {
		digits[len++] = (char) ('0' + n % 10);
		n /= 10;
	} while (n > 0);
	if (v < 0) {
		out[at++] = '-';
	}
	while (len > 0) {
		out[at++] = digits[--len];
	}
	out[at] = '\0';
	return at;
}

lkc_rc lkc_token_new(char out[LKC_TOKEN_LEN + 1], lkc_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[LKC_TOKEN_BYTES];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return lkc_err_errno(err, LKC_ERR_SYSTEM, errno, "cannot read random bytes for the owner token");
		}
		got += (size_t) n;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[LKC_TOKEN_LEN] = '\0';
	return LKC_OK;
}

static lkc_interrupt_fn interrupt_hook;
/* The calling thread is one of ours that the host never runs in (lkc_thread_without_host). */
static __thread int lkc_no_host;

void lkc_set_interrupt_hook(lkc_interrupt_fn fn)
{
	interrupt_hook = fn;
}

void lkc_thread_without_host(void)
{
	lkc_no_host = 1;
}

int lkc_interrupted(void)
{
	return !lkc_no_host && interrupt_hook != NULL && interrupt_hook();
}

lkc_rc lkc_hold_init(lkc_hold *hold, const char *resource, size_t len, lkc_err *err)
{
	memset(hold, 0, sizeof(*hold));
	hold->fd = -1;
	hold->semid = -1;
	hold->fence = -1;
	if (len == 0 || len > LKC_RESOURCE_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "resource must be 1 to %d bytes long", LKC_RESOURCE_MAX);
	}
	hold->resource = malloc(len + 1);
	if (hold->resource == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	memcpy(hold->resource, resource, len);
	hold->resource[len] = '\0';
	hold->resource_len = len;
	if (lkc_token_new(hold->owner, err) != LKC_OK) {
		free(hold->resource);
		hold->resource = NULL;
		return err->code;
	}
	hold->owner_len = LKC_TOKEN_LEN;
	hold->owner_pid = lkc_pid();
	return LKC_OK;
}

/* Copies an owner of the caller's choosing into hold; LKC_ERR_INVALID unless it is 1 to LKC_OWNER_MAX bytes. */
static lkc_rc lkc_hold_take_owner(lkc_hold *hold, const char *owner, size_t len, lkc_err *err)
{
	if (len == 0 || len > LKC_OWNER_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "owner must be 1 to %d bytes long, %zu given", LKC_OWNER_MAX, len);
	}
	/* owner need not be NUL-terminated, and may hold NUL bytes: its len bytes are the owner. */
	memcpy(hold->owner, owner, len);
	hold->owner[len] = '\0';
	hold->owner_len = len;
	hold->owner_chosen = 1;
	hold->owner_pid = lkc_pid();
	return LKC_OK;
}

lkc_rc lkc_hold_set_owner(lkc_hold *hold, const char *owner, size_t len, lkc_err *err)
{
	if (hold->mode != LKC_MODE_NONE) {
		return lkc_err_set(err, LKC_ERR_STATE, "cannot change the owner of a lock that is held");
	}
	return lkc_hold_take_owner(hold, owner, len, err);
}

void lkc_hold_dispose(lkc_hold *hold)
{
	if (hold->fd >= 0) {
		close(hold->fd);
		hold->fd = -1;
	}
	free(hold->resource);
	hold->resource = NULL;
	free(hold->path);
	hold->path = NULL;
	for (int i = 0; i < hold->nparts; i++) {
		/* A part shares the resource of its hold. */
		hold->parts[i].resource = NULL;
		lkc_hold_dispose(&hold->parts[i]);
	}
	free(hold->parts);
	hold->parts = NULL;
	hold->nparts = 0;
	hold->mode = LKC_MODE_NONE;
}

lkc_rc lkc_hold_copy(lkc_hold *dst, const lkc_hold *src, lkc_err *err)
{
	*dst = *src;
	dst->fd = -1;
	dst->path = NULL;
	dst->session = NULL;
	dst->parts = NULL;
	dst->nparts = 0;
	dst->resource = malloc(src->resource_len + 1);
	if (dst->resource == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	memcpy(dst->resource, src->resource, src->resource_len + 1);
	if (src->nparts > 0) {
		dst->parts = calloc((size_t) src->nparts, sizeof(*dst->parts));
		if (dst->parts == NULL) {
			lkc_hold_dispose(dst);
			return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
		dst->nparts = src->nparts;
		for (int i = 0; i < src->nparts; i++) {
			/* A part shares the resource of its hold, and keeps nothing else that is allocated. */
			dst->parts[i] = src->parts[i];
			dst->parts[i].resource = dst->resource;
			dst->parts[i].fd = -1;
			dst->parts[i].path = NULL;
			dst->parts[i].session = NULL;
			dst->parts[i].parts = NULL;
			dst->parts[i].nparts = 0;
		}
	}
	return LKC_OK;
}

lkc_rc lkc_store_twin_ns(lkc_store **twin, const lkc_store *store, lkc_err *err)
{
	if (store->ns == NULL) {
		return LKC_OK;
	}
	(*twin)->ns = malloc(store->ns_len + 1);
	if ((*twin)->ns == NULL) {
		lkc_store_release(*twin);
		*twin = NULL;
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	memcpy((*twin)->ns, store->ns, store->ns_len);
	(*twin)->ns[store->ns_len] = '\0';
	(*twin)->ns_len = store->ns_len;
	(*twin)->ns_server_len = store->ns_server_len;
	return LKC_OK;
}

/* Clears what a hold knows of a hold it no longer has. */
static void lkc_hold_forget(lkc_hold *hold)
{
	hold->mode = LKC_MODE_NONE;
	hold->expires_ns = 0;
	hold->fence = -1;
}

int lkc_rc_storage(lkc_rc rc)
{
	return rc == LKC_ERR_IO || rc == LKC_ERR_PROTOCOL || rc == LKC_ERR_REFUSED || rc == LKC_ERR_PERM
		|| rc == LKC_ERR_SYSTEM;
}

void lkc_stats_answer(lkc_store *store, lkc_hold *hold, lkc_rc rc)
{
	if ((rc == LKC_EXPIRED || rc == LKC_LOST) && hold != NULL) {
		/* A hold found gone is counted once, however many calls are told so. */
		if (!hold->gone_counted) {
			hold->gone_counted = 1;
			lkc_stats_add(store, rc == LKC_LOST ? LKC_STAT_LOST : LKC_STAT_EXPIRED);
		}
	} else if (lkc_rc_storage(rc)) {
		lkc_stats_add(store, LKC_STAT_STORAGE_ERRORS);
	}
}

int lkc_hold_foreign(const lkc_hold *hold)
{
	return hold->mode != LKC_MODE_NONE && hold->pid != lkc_pid();
}

static lkc_rc refuse_foreign(lkc_err *err)
{
	return lkc_err_set(err, LKC_ERR_STATE,
		"this hold belongs to the parent process; a forked child cannot touch it");
}

uint64_t lkc_hold_expiry(uint64_t start_ns, int64_t ttl_ms, uint64_t margin_ns)
{
	if (ttl_ms == LKC_TTL_NONE) {
		return 0;
	}
	/*
	 * A server keeps expiries in whole milliseconds of its clock, rounded down,
	 * so it may end a hold up to 1 ms before ttl_ms after the request reached it:
	 * our view counts that millisecond off too.
	 */
	uint64_t end = start_ns + (uint64_t) ttl_ms * 1000000u - (ttl_ms > 1 ? 1000000u : 0);

	/* What the store says may be lost to clock drift counts off too; at least the start stays (already gone). */
	return end - start_ns > margin_ns ? end - margin_ns : start_ns;
}

int lkc_acquire_begin(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t wait_ms, uint64_t *start,
	lkc_rc *rc, lkc_err *err)
{
	if (hold->owner_pid != lkc_pid()) {
		/*
		 * A forked child drops what it inherited and takes a token of its own, so
		 * nothing it does can be mistaken for its parent's hold. An owner the caller
		 * chose cannot be renewed behind its back: the child would act as its parent.
		 */
		lkc_abandon(store, hold);
		if (hold->owner_chosen) {
			*rc = lkc_err_set(err, LKC_ERR_STATE,
				"this lock's owner was chosen in the parent process; a forked child must create a lock of its own");
			return 0;
		}
		if (lkc_token_new(hold->owner, err) != LKC_OK) {
			*rc = err->code;
			return 0;
		}
		hold->owner_len = LKC_TOKEN_LEN;
		hold->owner_pid = lkc_pid();
	}
	if (mode == LKC_MODE_SHARED && !(store->ops->caps & LKC_CAP_SHARED)) {
		*rc = lkc_err_set(err, LKC_ERR_UNSUPPORTED, "the %s store has no shared holds", store->ops->name);
		return 0;
	}
	/*
	 * The expiry counts from before the request (or the store's grant), so our view
	 * never outlives the server's. Holds that do not expire need no clock (that
	 * read is a measurable part of a semaphore cycle), except for the time a
	 * blocking acquire spends (the stats).
	 */
	*start = (store->ops->caps & LKC_CAP_EXPIRY) || wait_ms != 0 ? lkc_now_ns() : 0;
	/* A new hold gets a new fencing token; the store sets it now or on demand. */
	hold->fence = -1;
	hold->granted_ns = 0;
	hold->margin_ns = 0;
	hold->next[0] = hold->next[1] = 0;
	hold->handed = 0;
	return 1;
}

void lkc_acquire_end(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, int64_t wait_ms, uint64_t start)
{
	lkc_stats_add(store, LKC_STAT_ACQUIRED);
	if (wait_ms != 0) {
		lkc_stats_add(store, LKC_STAT_WAITED);
		if (hold->handed) {
			lkc_stats_add(store, LKC_STAT_HANDED_OVER);
		}
		store->ops->stats->wait_ns += lkc_now_ns() - start;
	}
	hold->gone_counted = 0;
	/* After a wait, the hold counts from the store's grant (never later than the server's), not the call. */
	if (hold->granted_ns > start) {
		start = hold->granted_ns;
	}
	hold->mode = mode;
	hold->pid = lkc_pid();
	hold->forks = lkc_fork_count();
	hold->expires_ns = (store->ops->caps & LKC_CAP_EXPIRY) ? lkc_hold_expiry(start, ttl_ms, hold->margin_ns) : 0;
}

void lkc_acquire_failed(lkc_store *store, lkc_hold *hold, int64_t wait_ms, uint64_t start, lkc_rc rc)
{
	if (wait_ms != 0) {
		store->ops->stats->wait_ns += lkc_now_ns() - start;
	}
	if (rc == LKC_BUSY || rc == LKC_INTERRUPTED) {
		lkc_stats_add(store, wait_ms == 0 ? LKC_STAT_FAILED : LKC_STAT_TIMED_OUT);
	} else {
		/* A conversion that lost the hold it converted says so as any call does. */
		lkc_stats_answer(store, hold, rc);
	}
}

int lkc_release_begin(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_rc *rc, lkc_err *err)
{
	if (hold->mode == LKC_MODE_NONE) {
		if (hold->unsure && hold->owner_pid == lkc_pid() && store->ops->settle != NULL) {
			/*
			 * Our last acquire failed after it was sent, and the server may have run
			 * it all the same (a server that froze, then woke): give back whatever it
			 * took. Quietly, as releasing a lock not held is: it was never ours to report.
			 */
			store->ops->settle(store, hold);
			/* The store's answer may have set the mode it found: the hold stays not held. */
			lkc_hold_forget(hold);
		}
		hold->unsure = 0;
		*rc = LKC_OK;
		return 0;
	}
	if (lkc_hold_foreign(hold)) {
		*rc = refuse_foreign(err);
		return 0;
	}
	if (delay_ms > 0 && !(store->ops->caps & LKC_CAP_EXPIRY)) {
		*rc = lkc_err_set(err, LKC_ERR_UNSUPPORTED, "the %s store cannot delay a release", store->ops->name);
		return 0;
	}
	return 1;
}

void lkc_release_end(lkc_store *store, lkc_hold *hold, lkc_rc rc)
{
	if (rc == LKC_OK) {
		lkc_stats_add(store, LKC_STAT_RELEASED);
	} else {
		lkc_stats_answer(store, hold, rc);
	}
	/* Whatever the backend said, we no longer count this hold as ours, except when it could not be reached. */
	if (rc == LKC_OK || rc == LKC_EXPIRED || rc == LKC_LOST) {
		lkc_hold_forget(hold);
	}
}

lkc_rc lkc_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	uint64_t start;
	lkc_rc rc;

	if (hold->mode == LKC_MODE_NONE) {
		return lkc_err_set(err, LKC_ERR_STATE, "cannot refresh: the lock is not held");
	}
	if (lkc_hold_foreign(hold)) {
		return refuse_foreign(err);
	}
	start = (store->ops->caps & LKC_CAP_EXPIRY) ? lkc_now_ns() : 0;
	rc = store->ops->refresh(store, hold, ttl_ms, err);
	if (rc == LKC_OK) {
		lkc_stats_add(store, LKC_STAT_REFRESHED);
		hold->expires_ns = (store->ops->caps & LKC_CAP_EXPIRY) ? lkc_hold_expiry(start, ttl_ms, hold->margin_ns) : 0;
		return rc;
	}
	lkc_stats_answer(store, hold, rc);
	if (rc == LKC_EXPIRED || rc == LKC_LOST) {
		lkc_hold_forget(hold);
	}
	return rc;
}

lkc_rc lkc_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_rc rc;

	if (hold->mode == LKC_MODE_NONE) {
		return LKC_EXPIRED;
	}
	if (lkc_hold_foreign(hold)) {
		/* The parent's hold is not ours to report on. */
		return LKC_EXPIRED;
	}
	rc = store->ops->check(store, hold, err);
	lkc_stats_answer(store, hold, rc);
	if (rc == LKC_EXPIRED || rc == LKC_LOST) {
		/* Not held: the token of the hold that was is no answer any more (the store is asked again). */
		hold->fence = -1;
	}
	return rc;
}

lkc_rc lkc_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_rc rc;

	if (hold->mode != LKC_MODE_EXCLUSIVE || lkc_hold_foreign(hold)) {
		return lkc_err_set(err, LKC_ERR_STATE, "the lock is not held exclusively");
	}
	/* The token of the take, while the hold has not run out by our clock (else the store says whether it did). */
	if (hold->fence >= 0 && (hold->expires_ns == 0 || lkc_now_ns() < hold->expires_ns)) {
		*fence = hold->fence;
		return LKC_OK;
	}
	if (!(store->ops->caps & LKC_CAP_FENCING) || store->ops->fence == NULL) {
		return lkc_err_set(err, LKC_ERR_UNSUPPORTED, "the %s store has no fencing tokens", store->ops->name);
	}
	rc = store->ops->fence(store, hold, fence, err);
	if (rc == LKC_OK) {
		hold->fence = *fence;
	} else {
		lkc_stats_answer(store, hold, rc);
	}
	return rc;
}

lkc_rc lkc_hold_restore(lkc_hold *hold, const char *owner, size_t len, lkc_err *err)
{
	if (lkc_hold_take_owner(hold, owner, len, err) != LKC_OK) {
		return err->code;
	}
	/* Assumed held: the store tells otherwise on the first refresh, release or check. */
	hold->gone_counted = 0;
	hold->mode = LKC_MODE_EXCLUSIVE;
	hold->pid = lkc_pid();
	hold->forks = lkc_fork_count();
	hold->expires_ns = 0;
	hold->fence = -1;
	return LKC_OK;
}

void lkc_store_retain(lkc_store *store)
{
	store->refs++;
}

int lkc_store_same(lkc_store *a, lkc_store *b)
{
	char *id_a = NULL, *id_b = NULL;
	size_t len_a = 0, len_b = 0;
	lkc_rc rc_a, rc_b;
	lkc_err err;
	int same;

	if (a->ops != b->ops) {
		return 0;
	}
	if (a->ns_len == b->ns_len && (a->ns_len == 0 || memcmp(a->ns, b->ns, a->ns_len) == 0)) {
		return 1;
	}
	if (a->ops->server_id == NULL || a->ns_server_len == 0 || b->ns_server_len == 0
		|| a->ns_len - a->ns_server_len != b->ns_len - b->ns_server_len
		|| memcmp(a->ns + a->ns_server_len, b->ns + b->ns_server_len, a->ns_len - a->ns_server_len) != 0) {
		/* Another kind of place (database, prefix, table) on whatever server: not the same names. */
		return 0;
	}
	/* One place, spelled two ways: the servers say whether they are one (never cached: a server restarts). */
	lkc_err_clear(&err);
	rc_a = a->ops->server_id(a, &id_a, &len_a, &err);
	lkc_err_clear(&err);
	rc_b = rc_a == LKC_OK ? b->ops->server_id(b, &id_b, &len_b, &err) : rc_a;
	if (rc_a == LKC_OK && rc_b == LKC_OK) {
		same = len_a == len_b && memcmp(id_a, id_b, len_a) == 0;
	} else {
		/* Only the spelling can tell (which differs), or a server did not answer (then assume the worst). */
		same = (rc_a != LKC_OK ? rc_a : rc_b) != LKC_ERR_UNSUPPORTED;
	}
	free(id_a);
	free(id_b);
	return same;
}

void lkc_store_release(lkc_store *store)
{
	if (store->refs > 0) {
		store->refs--;
		return;
	}
	if (store->twin != NULL) {
		lkc_auto_untwin(store);
	}
	free(store->ns);
	store->ns = NULL;
	store->ops->destroy(store);
}

lkc_rc lkc_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_rc rc;

	if (len == 0 || len > LKC_RESOURCE_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "resource must be 1 to %d bytes long", LKC_RESOURCE_MAX);
	}
	if (wait_ms < 0 && wait_ms != LKC_WAIT_FOREVER) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a wait must be 0, a number of milliseconds or forever");
	}
	if (store->ops->wait_free == NULL) {
		return lkc_err_set(err, LKC_ERR_UNSUPPORTED, "the %s store cannot wait for a resource to be free", store->ops->name);
	}
	rc = store->ops->wait_free(store, resource, len, wait_ms, err);
	lkc_stats_answer(store, NULL, rc);
	return rc;
}

lkc_rc lkc_inspect_resource(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_rc rc;

	memset(out, 0, sizeof(*out));
	out->ttl_ms = -2;
	out->fence = -1;
	out->waiters = -1;
	if (len == 0 || len > LKC_RESOURCE_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "resource must be 1 to %d bytes long", LKC_RESOURCE_MAX);
	}
	if (store->ops->inspect == NULL) {
		return lkc_err_set(err, LKC_ERR_UNSUPPORTED, "the %s store cannot inspect a resource", store->ops->name);
	}
	rc = store->ops->inspect(store, resource, len, out, err);
	lkc_stats_answer(store, NULL, rc);
	if (rc != LKC_OK) {
		lkc_inspect_free(out);
	}
	return rc;
}

void lkc_inspect_free(lkc_inspect *out)
{
	for (size_t i = 0; i < out->nowners; i++) {
		free(out->owners[i].s);
	}
	for (size_t i = 0; i < out->nqueue; i++) {
		free(out->queue[i].s);
	}
	free(out->owners);
	free(out->queue);
	free(out->holders);
	out->owners = out->queue = NULL;
	out->holders = NULL;
	out->nowners = out->nqueue = out->nholders = 0;
}

int lkc_inspect_owner(lkc_inspect *out, const char *owner, size_t len)
{
	lkc_bytes *grown = realloc(out->owners, (out->nowners + 1) * sizeof(*grown));
	char *copy = malloc(len + 1);

	if (grown != NULL) {
		out->owners = grown;
	}
	if (grown == NULL || copy == NULL) {
		free(copy);
		return -1;
	}
	memcpy(copy, owner, len);
	copy[len] = '\0';
	out->owners[out->nowners].s = copy;
	out->owners[out->nowners++].len = len;
	out->owners_known = 1;
	return 0;
}

int lkc_inspect_holder(lkc_inspect *out, int64_t id)
{
	int64_t *grown = realloc(out->holders, (out->nholders + 1) * sizeof(*grown));

	if (grown == NULL) {
		return -1;
	}
	out->holders = grown;
	out->holders[out->nholders++] = id;
	out->holders_known = 1;
	return 0;
}

void lkc_abandon(lkc_store *store, lkc_hold *hold)
{
	if (hold->mode != LKC_MODE_NONE || hold->fd >= 0) {
		store->ops->abandon(store, hold);
	}
	lkc_hold_forget(hold);
}

/*
 * Name resolution within a deadline. getaddrinfo() blocks for as long as the
 * resolver's own timeouts (resolv.conf: 5 s a try, and tries) when a name
 * server does not answer, so a thread of ours asks and the caller waits for
 * its answer no longer than it may. Not glibc's getaddrinfo_a(): its helper
 * threads do not survive fork(), and a child's requests would never be
 * answered. A thread still asking at the deadline is left to finish: whichever
 * of the two lets go of the job last frees it.
 */
typedef struct {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int refs;                  /* the caller and the thread, under mutex */
	int done;
	int rc;                    /* getaddrinfo()'s, with errnum for EAI_SYSTEM */
	int errnum;
	struct addrinfo *res;
	char port[8];
	char host[];
} lkc_resolve_job;

/* Drops one reference to job (its mutex held); the last frees it. */
static void lkc_resolve_unref(lkc_resolve_job *job)
{
	int last = --job->refs == 0;

	pthread_mutex_unlock(&job->mutex);
	if (last) {
		if (job->res != NULL) {
			freeaddrinfo(job->res);
		}
		pthread_cond_destroy(&job->cond);
		pthread_mutex_destroy(&job->mutex);
		free(job);
	}
}

static void *lkc_resolve_thread(void *arg)
{
	lkc_resolve_job *job = arg;
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(job->host, job->port, &hints, &res);
	pthread_mutex_lock(&job->mutex);
	job->rc = rc;
	job->errnum = errno;
	job->res = res;
	job->done = 1;
	pthread_cond_signal(&job->cond);
	lkc_resolve_unref(job);
	return NULL;
}

int lkc_is_address(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

int lkc_resolve(const char *host, int port, uint64_t deadline_ns, struct addrinfo **out, char *text, size_t text_size)
{
	struct addrinfo hints;
	pthread_condattr_t cattr;
	pthread_attr_t tattr;
	pthread_t thread;
	size_t host_len = strlen(host);
	lkc_resolve_job *job;
	char port_text[8];
	int ok, done, rc;

	*out = NULL;
	/* An address needs no resolver: answered at once, without a thread. */
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	snprintf(port_text, sizeof(port_text), "%d", port);
	if (getaddrinfo(host, port_text, &hints, out) == 0) {
		return 0;
	}
	*out = NULL;
	if (deadline_ns != 0 && lkc_now_ns() >= deadline_ns) {
		/* No time left: not asked at all (else a name the resolver knows at once would win or lose a race). */
		snprintf(text, text_size, "resolving %s took longer than the timeout (no time was left to ask)", host);
		return -2;
	}
	job = calloc(1, sizeof(*job) + host_len + 1);
	if (job == NULL) {
		snprintf(text, text_size, "out of memory resolving %s", host);
		return -1;
	}
	memcpy(job->host, host, host_len + 1);
	memcpy(job->port, port_text, sizeof(port_text));
	job->refs = 2;
	pthread_mutex_init(&job->mutex, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->cond, &cattr);
	pthread_condattr_destroy(&cattr);
	pthread_attr_init(&tattr);
	ok = pthread_create(&thread, &tattr, lkc_resolve_thread, job) == 0;
	pthread_attr_destroy(&tattr);
	pthread_mutex_lock(&job->mutex);
	if (!ok) {
		/* No thread to spare: ask here, unbounded, as getaddrinfo() alone would. */
		job->refs = 1;
		job->rc = getaddrinfo(host, port_text, &(struct addrinfo) { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM },
			&job->res);
		job->errnum = errno;
		job->done = 1;
	}
	while (!job->done) {
		struct timespec ts;

		if (deadline_ns == 0) {
			pthread_cond_wait(&job->cond, &job->mutex);
			continue;
		}
		if (lkc_now_ns() >= deadline_ns) {
			break;
		}
		ts.tv_sec = (time_t) (deadline_ns / 1000000000u);
		ts.tv_nsec = (long) (deadline_ns % 1000000000u);
		pthread_cond_timedwait(&job->cond, &job->mutex, &ts);
	}
	if (!job->done) {
		snprintf(text, text_size, "resolving %s took longer than the timeout (the name server does not answer)", host);
		rc = -2;
	} else if (job->rc != 0) {
		snprintf(text, text_size, "cannot resolve %s: %s", host,
			job->rc == EAI_SYSTEM ? strerror(job->errnum) : gai_strerror(job->rc));
		rc = -1;
	} else {
		*out = job->res;
		job->res = NULL;
		rc = 0;
	}
	done = job->done;
	lkc_resolve_unref(job);
	if (ok) {
		/* A thread that answered is about to end: waited for, so nothing of it outlives the call. */
		if (done) {
			pthread_join(thread, NULL);
		} else {
			/* One still asking ends by itself, and frees the job if it is the last. */
			pthread_detach(thread);
		}
	}
	return rc;
}

void lkc_sql_config_free(lkc_sql_config *cfg)
{
	free(cfg->host);
	free(cfg->user);
	if (cfg->password != NULL) {
		memset(cfg->password, 0, strlen(cfg->password));
	}
	free(cfg->password);
	free(cfg->dbname);
	free(cfg->prefix);
	free(cfg->table);
	memset(cfg, 0, sizeof(*cfg));
}
