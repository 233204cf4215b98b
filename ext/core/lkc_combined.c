/*
 * The combined store: one lock over several independent Redis stores (its
 * members), held while a majority of them hold it (unanimous: all of them),
 * as the Redlock algorithm has it. Each member keeps its own keys and
 * protocol (lkc_redis.c); a combined hold is one hold per member (its
 * parts, hold->parts), all under the combined hold's owner token.
 *
 * Side by side: every call goes to its members at once, each member's call
 * on a stack of its own (lkc_fan.h), all their waits in one poll(). Once the
 * outcome is decided (a majority said yes, or can no longer say it), the
 * members still waiting get a short grace and are then given up as timed
 * out: a slow or frozen server costs the call nothing when the others make
 * the majority.
 *
 * Taking: one attempt on every member at once. A hold taken by a majority
 * counts from before the attempt was sent, for its TTL less the clock drift
 * allowance (lkc_combined_drift_ms); an attempt without a majority, or whose
 * time is already gone, gives back what it took, everywhere at once. Fewer
 * members answering than a majority needs is a storage error, never "busy".
 *
 * Waiting: the waiter queues on one member only, the first (in an order
 * rotated by the resource's hash) that refused it, in that member's own queue
 * (first come, first served, woken by the release that hands it over). Once
 * that member hands it the hold, it takes the others at once; the hold counts
 * from when the first part was handed over, the earliest of them, so its
 * validity is never more than any part's. Without a majority it gives
 * everything back and queues again where it was refused.
 * A waiter holds nothing while it waits, so no two waiters can each hold
 * what the other waits for: no deadlock, whatever order they queue in.
 *
 * Fencing: each member's counter gives a token; the hold's token is the
 * greatest of a majority's, and every counter of that majority is then
 * raised to it (the floor script). Two majorities share a member, whose
 * counter is past every token handed out before, so the next holder's token
 * is greater. A server restarted empty starts its counter at its clock in
 * microseconds (see lkc_redis.c), above the tokens before as long as clocks
 * do not step back.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"
#include "lkc_fan.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if LKC_COMBINED_MAX > LKC_FAN_MAX
# error "a combined store's members must fit one fan"
#endif

typedef struct {
	lkc_store base;
	lkc_store *members[LKC_COMBINED_MAX];
	int n;
	int quorum;
	int64_t timeout_ms;      /* the longest of the members' timeouts: no call on the members lasts longer */
} lkc_cb_store;

/* What a member does in a combined call. */
typedef enum {
	LKC_CB_SKIP,             /* nothing: not part of this call */
	LKC_CB_TAKE,             /* one attempt at the hold */
	LKC_CB_RENEW,            /* refresh a part just handed over, so that it counts from now */
	LKC_CB_GIVE_BACK,        /* let go of what a failed take may have taken */
	LKC_CB_RELEASE,
	LKC_CB_REFRESH,
	LKC_CB_CHECK,
	LKC_CB_IS_LOCKED,
	LKC_CB_FORCE,
	LKC_CB_FENCE,
	LKC_CB_FLOOR,
	LKC_CB_INSPECT
} lkc_cb_what;

/* One combined call: what each member does and what it answered. */
typedef struct {
	lkc_cb_store *s;
	lkc_hold *hold;          /* NULL for calls on a resource */
	const char *resource;
	size_t len;
	lkc_mode mode;
	int64_t ttl_ms;
	int64_t delay_ms;
	int64_t floor;
	lkc_cb_what what[LKC_COMBINED_MAX];
	lkc_mode before[LKC_COMBINED_MAX]; /* take: each part's mode before it (a conversion's), for a give-back */
	lkc_rc rc[LKC_COMBINED_MAX];
	lkc_err err[LKC_COMBINED_MAX];
	int64_t value[LKC_COMBINED_MAX]; /* fence: the token; is_locked: 1 locked */
	lkc_inspect *seen;       /* inspect: one per member */
	int yes;                 /* members that said yes (taken, ours, locked) */
	int no;                  /* members that said no (a failure is neither) */
	int asked;               /* members taking part */
	int done;                /* members that answered or failed */
	int early;               /* the outcome may be decided before every member answered */
	int deliver;             /* each member's command is written before the member may be given up */
} lkc_cb_call;

int64_t lkc_combined_drift_ms(int64_t ttl_ms)
{
	/* Clocks run at rates a hundredth apart at worst, and 2 ms for a server's whole-millisecond expiries. */
	return ttl_ms == LKC_TTL_NONE ? 0 : ttl_ms / 100 + 2;
}

int lkc_combined_quorum(const lkc_store *store)
{
	return ((const lkc_cb_store *) store)->quorum;
}

/* Makes the parts of a combined hold, and gives them its resource and owner. */
static lkc_rc lkc_cb_parts(lkc_cb_store *s, lkc_hold *hold, lkc_err *err)
{
	if (hold->parts == NULL) {
		hold->parts = calloc((size_t) s->n, sizeof(*hold->parts));
		if (hold->parts == NULL) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
		hold->nparts = s->n;
		for (int i = 0; i < s->n; i++) {
			hold->parts[i].fd = -1;
			hold->parts[i].semid = -1;
			hold->parts[i].fence = -1;
		}
	}
	for (int i = 0; i < s->n; i++) {
		lkc_hold *part = &hold->parts[i];

		part->resource = hold->resource;
		part->resource_len = hold->resource_len;
		memcpy(part->owner, hold->owner, hold->owner_len + 1);
		part->owner_len = hold->owner_len;
		part->owner_chosen = hold->owner_chosen;
		part->owner_pid = hold->owner_pid;
	}
	return LKC_OK;
}

/* A part about to be taken, as lkc_acquire_begin leaves a hold. */
static void lkc_cb_part_begin(lkc_hold *part)
{
	part->fence = -1;
	part->granted_ns = 0;
	part->next[0] = part->next[1] = 0;
	part->handed = 0;
}

/* A part the member took, as lkc_acquire_end leaves a hold. */
static void lkc_cb_part_taken(lkc_hold *part, lkc_mode mode)
{
	part->mode = mode;
	part->pid = lkc_pid();
	part->forks = lkc_fork_count();
}

/* A part the member no longer holds. */
static void lkc_cb_part_forget(lkc_hold *part)
{
	part->mode = LKC_MODE_NONE;
	part->fence = -1;
	part->expires_ns = 0;
}

/* A part of a hold the combined store holds (or was told it holds: restoreLock()), for a call on the hold. */
static lkc_hold *lkc_cb_part_held(lkc_cb_call *c, int i)
{
	lkc_hold *part = &c->hold->parts[i];

	if (part->mode == LKC_MODE_NONE) {
		/* The member did not take it, or it is a restored hold: its server says how it stands. */
		part->mode = c->hold->mode;
		part->pid = lkc_pid();
		part->forks = lkc_fork_count();
	}
	return part;
}

/* Runs member i's part of a combined call (a call of the fan). */
static void lkc_cb_member(void *arg, int i)
{
	lkc_cb_call *c = arg;
	lkc_store *m = c->s->members[i];
	lkc_err *err = &c->err[i];
	lkc_hold *part = c->hold != NULL ? &c->hold->parts[i] : NULL;
	lkc_rc rc = LKC_OK;
	int yes;

	lkc_err_clear(err);
	switch (c->what[i]) {
		case LKC_CB_SKIP:
			c->rc[i] = LKC_OK;
			return;
		case LKC_CB_TAKE:
			if (c->hold->mode == LKC_MODE_NONE && part->mode != LKC_MODE_NONE) {
				/* Left from a release this member did not answer: what it holds, if anything, is given back first. */
				lkc_cb_part_forget(part);
				part->unsure = 1;
			}
			if (part->unsure && m->ops->settle != NULL) {
				/* What an earlier take or release this member did not answer may have left: ours, so given back first. */
				m->ops->settle(m, part);
				lkc_cb_part_forget(part);
			}
			part->unsure = 0;
			/* A conversion (the hold is held) converts each part it has: read to write, write to read. */
			c->before[i] = part->mode;
			lkc_cb_part_begin(part);
			rc = m->ops->acquire(m, part, c->mode, c->ttl_ms, 0, err);
			if (rc == LKC_OK) {
				lkc_cb_part_taken(part, c->mode);
			}
			break;
		case LKC_CB_RENEW:
			rc = m->ops->refresh(m, part, c->ttl_ms, err);
			break;
		case LKC_CB_GIVE_BACK:
			if (c->before[i] != LKC_MODE_NONE) {
				/* A failed conversion: the part goes back to the mode it had. */
				if (part->mode != LKC_MODE_NONE && part->mode != c->before[i]) {
					lkc_cb_part_begin(part);
					if (m->ops->acquire(m, part, c->before[i], c->ttl_ms, 0, err) == LKC_OK) {
						lkc_cb_part_taken(part, c->before[i]);
					}
				}
				break;
			}
			if (part->mode != LKC_MODE_NONE) {
				(void) m->ops->release(m, part, 0, err);
			} else if (part->unsure && m->ops->settle != NULL) {
				m->ops->settle(m, part);
			}
			part->unsure = 0;
			lkc_cb_part_forget(part);
			break;
		case LKC_CB_RELEASE:
			part = lkc_cb_part_held(c, i);
			rc = m->ops->release(m, part, c->delay_ms, err);
			/* A member that did not answer may still hold it: the part is unsure, given back by the next take's failure or release. */
			part->unsure = rc != LKC_OK && rc != LKC_EXPIRED && rc != LKC_LOST;
			lkc_cb_part_forget(part);
			break;
		case LKC_CB_REFRESH:
			rc = m->ops->refresh(m, lkc_cb_part_held(c, i), c->ttl_ms, err);
			break;
		case LKC_CB_CHECK:
			rc = m->ops->check(m, lkc_cb_part_held(c, i), err);
			break;
		case LKC_CB_IS_LOCKED: {
			int locked = 0;

			rc = m->ops->is_locked(m, c->resource, c->len, &locked, err);
			c->value[i] = locked;
			break;
		}
		case LKC_CB_FORCE:
			rc = m->ops->force_release(m, c->resource, c->len, err);
			break;
		case LKC_CB_FENCE:
			part = lkc_cb_part_held(c, i);
			rc = part->fence >= 0 ? LKC_OK : m->ops->fence(m, part, &part->fence, err);
			c->value[i] = part->fence;
			break;
		case LKC_CB_FLOOR:
			rc = lkc_redis_fence_floor(m, lkc_cb_part_held(c, i), c->floor, err);
			if (rc == LKC_OK) {
				part->fence = c->floor;
			}
			break;
		case LKC_CB_INSPECT:
			rc = m->ops->inspect(m, c->resource, c->len, &c->seen[i], err);
			break;
	}
	c->rc[i] = rc;
	yes = c->what[i] == LKC_CB_IS_LOCKED ? rc == LKC_OK && c->value[i] : rc == LKC_OK;
	if (yes) {
		c->yes++;
	} else if (!lkc_rc_storage(rc) && rc != LKC_ERR_STATE && rc != LKC_INTERRUPTED) {
		c->no++;
	}
	c->done++;
}

/* Whether a call's outcome is decided: a majority said yes, or more than a minority said no. */
static int lkc_cb_decided(void *arg)
{
	lkc_cb_call *c = arg;

	/* Failures decide nothing: the members that may still answer are waited for (within the timeout). */
	return c->early && (c->yes >= c->s->quorum || c->no > c->asked - c->s->quorum);
}

/* Starts a call on hold (or on a resource: hold NULL) in which every member does what. */
static void lkc_cb_call_init(lkc_cb_call *c, lkc_cb_store *s, lkc_hold *hold, lkc_cb_what what)
{
	memset(c, 0, offsetof(lkc_cb_call, err));
	c->s = s;
	c->hold = hold;
	c->seen = NULL;
	c->yes = c->no = c->asked = c->done = 0;
	c->early = 0;
	c->deliver = what == LKC_CB_RELEASE || what == LKC_CB_GIVE_BACK || what == LKC_CB_FORCE;
	if (hold != NULL) {
		c->resource = hold->resource;
		c->len = hold->resource_len;
	}
	for (int i = 0; i < s->n; i++) {
		c->what[i] = what;
		c->before[i] = LKC_MODE_NONE;
		c->rc[i] = LKC_OK;
		c->value[i] = -1;
	}
}

/* Runs a call on its members, side by side. */
static void lkc_cb_run(lkc_cb_call *c)
{
	c->asked = 0;
	for (int i = 0; i < c->s->n; i++) {
		c->asked += c->what[i] != LKC_CB_SKIP;
	}
	/* No member's retries (a reconnect, a second look) make the call outlast the longest timeout. */
	lkc_fan_run(c->s->n, lkc_cb_member, lkc_cb_decided, c, lkc_now_ns() + (uint64_t) c->s->timeout_ms * 1000000u,
		c->deliver);
}

/* Whether member i answered (yes or no), as opposed to failing. */
static int lkc_cb_answered(const lkc_cb_call *c, int i)
{
	return c->what[i] != LKC_CB_SKIP && !lkc_rc_storage(c->rc[i]) && c->rc[i] != LKC_ERR_STATE
		&& c->rc[i] != LKC_INTERRUPTED;
}

/* Fills err for a call that fewer members answered than a majority needs: the first failure says why. */
static lkc_rc lkc_cb_unanswered(const lkc_cb_call *c, int answered, lkc_err *err)
{
	for (int i = 0; i < c->s->n; i++) {
		if (c->what[i] != LKC_CB_SKIP && !lkc_cb_answered(c, i)) {
			return lkc_err_set(err, c->rc[i] == LKC_ERR_STATE ? LKC_ERR_STATE : (lkc_rc_storage(c->rc[i]) ? c->rc[i]
				: LKC_ERR_IO), "combined store: %d of %d Redis servers answered, %d needed: %s", answered,
				c->s->n, c->s->quorum, c->err[i].msg);
		}
	}
	return lkc_err_set(err, LKC_ERR_IO, "combined store: %d of %d Redis servers answered, %d needed", answered,
		c->s->n, c->s->quorum);
}

/*
 * What a call on a hold says: LKC_OK when a majority said yes; else
 * LKC_LOST when a member saw another owner, LKC_EXPIRED when none did;
 * an error when fewer than a majority answered at all.
 */
static lkc_rc lkc_cb_verdict(const lkc_cb_call *c, const char *what, lkc_err *err)
{
	int answered = 0, lost = 0;

	if (c->yes >= c->s->quorum) {
		return LKC_OK;
	}
	for (int i = 0; i < c->s->n; i++) {
		answered += lkc_cb_answered(c, i);
		lost += c->what[i] != LKC_CB_SKIP && c->rc[i] == LKC_LOST;
	}
	if (answered < c->s->quorum) {
		return lkc_cb_unanswered(c, answered, err);
	}
	if (lost > 0) {
		return lkc_err_set(err, LKC_LOST, "cannot %s: the lock expired on %d of %d Redis servers, %d needed, and "
			"another owner holds it now", what, c->s->n - c->yes, c->s->n, c->s->quorum);
	}
	return lkc_err_set(err, LKC_EXPIRED, "cannot %s: the lock had expired on %d of %d Redis servers, %d needed",
		what, c->s->n - c->yes, c->s->n, c->s->quorum);
}

/* The members in the order a resource's waiters queue on them: rotated by the resource's hash. */
static void lkc_cb_order(const lkc_cb_store *s, const char *resource, size_t len, int order[])
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (unsigned char) resource[i]) * 16777619u;
	}
	for (int k = 0; k < s->n; k++) {
		order[k] = (int) ((h + (uint32_t) k) % (uint32_t) s->n);
	}
}

/*
 * Gives back, everywhere at once, what a take that failed may have taken
 * (taken: the take's call, NULL for none). A member that failed in that take
 * is not asked again now: its server did not answer within the timeout. Its
 * part stays unsure, and so does the hold: the hold's next take, or its
 * release (a lock let go of), gives back first what that server may have
 * run late.
 */
static void lkc_cb_give_back(lkc_cb_store *s, lkc_hold *hold, const lkc_cb_call *taken)
{
	lkc_cb_call c;
	int any = 0;

	lkc_cb_call_init(&c, s, hold, LKC_CB_GIVE_BACK);
	if (taken != NULL) {
		memcpy(c.before, taken->before, sizeof(c.before));
		c.ttl_ms = taken->ttl_ms;
	}
	for (int i = 0; i < s->n; i++) {
		if ((hold->parts[i].mode == LKC_MODE_NONE && !hold->parts[i].unsure)
			|| (taken != NULL && lkc_rc_storage(taken->rc[i]) && hold->parts[i].mode == LKC_MODE_NONE)
			|| (c.before[i] != LKC_MODE_NONE && hold->parts[i].mode == c.before[i])) {
			c.what[i] = LKC_CB_SKIP;
		} else {
			any = 1;
		}
	}
	if (any) {
		/* Every member asked answered a moment ago: all are waited for (each within its timeout). */
		lkc_cb_run(&c);
	}
	hold->unsure = 0;
	for (int i = 0; i < s->n; i++) {
		hold->unsure |= hold->parts[i].unsure;
	}
}

/*
 * Ends a take: with a majority whose time is not gone, the hold is ours
 * (counted from start); else everything taken is given back. *refused gets
 * the members that said busy.
 */
static lkc_rc lkc_cb_take_end(lkc_cb_store *s, lkc_hold *hold, lkc_cb_call *c, int64_t ttl_ms, uint64_t start,
	unsigned *refused, lkc_err *err)
{
	int answered = 0;

	*refused = 0;
	for (int i = 0; i < s->n; i++) {
		answered += lkc_cb_answered(c, i);
		if (c->rc[i] == LKC_BUSY) {
			*refused |= 1u << i;
		}
	}
	if (c->yes >= s->quorum) {
		int64_t drift = lkc_combined_drift_ms(ttl_ms);

		if (ttl_ms == LKC_TTL_NONE || (int64_t) ((lkc_now_ns() - start) / 1000000u) < ttl_ms - drift) {
			hold->granted_ns = start;
			hold->margin_ns = (uint64_t) drift * 1000000u;
			hold->fence = -1;
			for (int i = 0; i < s->n; i++) {
				hold->handed |= hold->parts[i].handed;
			}
			return LKC_OK;
		}
		lkc_cb_give_back(s, hold, c);
		return lkc_err_set(err, LKC_ERR_IO, "combined store: taking the lock took longer than its %lld ms TTL "
			"allows (less %lld ms for clock drift)", (long long) ttl_ms, (long long) drift);
	}
	lkc_cb_give_back(s, hold, c);
	if (answered < s->quorum) {
		return lkc_cb_unanswered(c, answered, err);
	}
	return lkc_err_set(err, LKC_BUSY, "combined store: the lock is held (%d of %d Redis servers gave it, %d needed)",
		c->yes, s->n, s->quorum);
}

/* One attempt on every member at once. */
static lkc_rc lkc_cb_take(lkc_cb_store *s, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, unsigned *refused,
	lkc_err *err)
{
	uint64_t start = lkc_now_ns();
	lkc_cb_call c;

	lkc_cb_call_init(&c, s, hold, LKC_CB_TAKE);
	c.mode = mode;
	c.ttl_ms = ttl_ms;
	c.early = 1;
	lkc_cb_run(&c);
	return lkc_cb_take_end(s, hold, &c, ttl_ms, start, refused, err);
}

/*
 * Waits in member first's own queue until it hands us the hold, then takes
 * the others at once; the hold counts from when first handed its part over.
 */
static lkc_rc lkc_cb_take_after(lkc_cb_store *s, lkc_hold *hold, int first, lkc_mode mode, int64_t ttl_ms,
	int64_t wait_ms, unsigned *refused, lkc_err *err)
{
	lkc_store *m = s->members[first];
	lkc_hold *part = &hold->parts[first];
	uint64_t start;
	lkc_cb_call c;
	lkc_rc rc;

	lkc_mode before = part->mode;

	lkc_cb_part_begin(part);
	rc = m->ops->acquire(m, part, mode, ttl_ms, wait_ms, err);
	if (rc != LKC_OK) {
		*refused = rc == LKC_BUSY ? 1u << first : 0;
		return rc;
	}
	lkc_cb_part_taken(part, mode);
	if (hold->owner_pid != lkc_pid()) {
		/* A signal handler forked in the wait: the child leaves its parent's take alone. */
		return lkc_err_set(err, LKC_ERR_STATE, "combined store: forked while waiting; the child holds nothing");
	}
	start = lkc_now_ns();
	lkc_cb_call_init(&c, s, hold, LKC_CB_TAKE);
	c.before[first] = before;
	/*
	 * The part handed over counts from when it was (its granted_ns, a bound
	 * from below), so the hold does too; a part that cannot say is renewed
	 * with the others, to count from now.
	 */
	if (ttl_ms == LKC_TTL_NONE || (part->granted_ns != 0 && part->granted_ns <= start)) {
		c.what[first] = LKC_CB_SKIP;
		c.yes = 1;
		if (ttl_ms != LKC_TTL_NONE) {
			start = part->granted_ns;
		}
	} else {
		c.what[first] = LKC_CB_RENEW;
	}
	c.mode = mode;
	c.ttl_ms = ttl_ms;
	c.early = 1;
	lkc_cb_run(&c);
	return lkc_cb_take_end(s, hold, &c, ttl_ms, start, refused, err);
}

static lkc_rc lkc_cb_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, int64_t wait_ms,
	lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	unsigned refused = 0, failed = 0;
	int order[LKC_COMBINED_MAX];
	lkc_rc rc;

	if (lkc_cb_parts(s, hold, err) != LKC_OK) {
		return err->code;
	}
	rc = lkc_cb_take(s, hold, mode, ttl_ms, &refused, err);
	if (rc != LKC_BUSY || wait_ms == 0) {
		return rc;
	}
	lkc_cb_order(s, hold->resource, hold->resource_len, order);
	for (;;) {
		int64_t left = LKC_WAIT_FOREVER;
		int first = -1;

		for (int k = 0; k < s->n && first < 0; k++) {
			if (refused & ~failed & (1u << order[k])) {
				first = order[k];
			}
		}
		if (first < 0) {
			/* Nobody refused where we can wait (the members that did fail now): try all of them again. */
			rc = lkc_cb_take(s, hold, mode, ttl_ms, &refused, err);
			if (rc != LKC_BUSY || refused == 0) {
				return rc;
			}
			failed = 0;
			continue;
		}
		if (deadline != 0) {
			left = lkc_ms_left(deadline);
			if (left == 0) {
				return lkc_err_set(err, LKC_BUSY, "combined store: the lock is held");
			}
		}
		rc = lkc_cb_take_after(s, hold, first, mode, ttl_ms, left, &refused, err);
		if (rc == LKC_OK || rc == LKC_INTERRUPTED || rc == LKC_ERR_STATE || (rc == LKC_BUSY && refused == (1u << first))) {
			/* Ours, interrupted, a child forked in the wait (never to go on with its parent's take), or the time ran out. */
			return rc;
		}
		if (rc != LKC_BUSY) {
			/* first failed: wait where another member refused, after a new attempt says where. */
			failed |= 1u << first;
			rc = lkc_cb_take(s, hold, mode, ttl_ms, &refused, err);
			if (rc != LKC_BUSY) {
				return rc;
			}
		}
	}
}

static lkc_rc lkc_cb_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	lkc_cb_call c;

	if (lkc_cb_parts(s, hold, err) != LKC_OK) {
		return err->code;
	}
	lkc_cb_call_init(&c, s, hold, LKC_CB_RELEASE);
	c.delay_ms = delay_ms;
	/* Sent everywhere; a server still silent once a majority answered lets go when it reads it, or at the TTL. */
	c.early = 1;
	lkc_cb_run(&c);
	return lkc_cb_verdict(&c, "release", err);
}

static lkc_rc lkc_cb_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	lkc_cb_call c;
	lkc_rc rc;

	if (lkc_cb_parts(s, hold, err) != LKC_OK) {
		return err->code;
	}
	lkc_cb_call_init(&c, s, hold, LKC_CB_REFRESH);
	c.ttl_ms = ttl_ms;
	c.early = 1;
	lkc_cb_run(&c);
	rc = lkc_cb_verdict(&c, "refresh", err);
	if (rc == LKC_OK) {
		hold->margin_ns = (uint64_t) lkc_combined_drift_ms(ttl_ms) * 1000000u;
	}
	return rc;
}

static lkc_rc lkc_cb_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	lkc_cb_call c;

	if (lkc_cb_parts(s, hold, err) != LKC_OK) {
		return err->code;
	}
	lkc_cb_call_init(&c, s, hold, LKC_CB_CHECK);
	c.early = 1;
	lkc_cb_run(&c);
	return lkc_cb_verdict(&c, "check the lock", err);
}

/* A call on a resource (no hold) in which every member does what. */
static void lkc_cb_resource_call(lkc_cb_call *c, lkc_cb_store *s, const char *resource, size_t len, lkc_cb_what what)
{
	lkc_cb_call_init(c, s, NULL, what);
	c->resource = resource;
	c->len = len;
}

/* Whether a majority says somebody holds the resource. */
static lkc_rc lkc_cb_locked(lkc_cb_store *s, const char *resource, size_t len, int *locked, unsigned *holding,
	lkc_err *err)
{
	lkc_cb_call c;
	int answered = 0;

	lkc_cb_resource_call(&c, s, resource, len, LKC_CB_IS_LOCKED);
	c.early = 1;
	lkc_cb_run(&c);
	*holding = 0;
	for (int i = 0; i < s->n; i++) {
		answered += lkc_cb_answered(&c, i);
		if (c.rc[i] == LKC_OK && c.value[i]) {
			*holding |= 1u << i;
		}
	}
	*locked = c.yes >= s->quorum;
	if (*locked || answered - c.yes > s->n - s->quorum) {
		return LKC_OK;
	}
	return lkc_cb_unanswered(&c, answered, err);
}

static lkc_rc lkc_cb_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	unsigned holding;

	return lkc_cb_locked((lkc_cb_store *) store, resource, len, locked, &holding, err);
}

static lkc_rc lkc_cb_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	lkc_cb_call c;

	lkc_cb_resource_call(&c, s, resource, len, LKC_CB_FORCE);
	lkc_cb_run(&c);
	for (int i = 0; i < s->n; i++) {
		if (c.rc[i] != LKC_OK) {
			/* Everywhere, or the caller hears which server kept it. */
			return lkc_err_set(err, c.rc[i], "combined store: forceRelease() did not reach every Redis server: %s",
				c.err[i].msg);
		}
	}
	return LKC_OK;
}

/*
 * Waits until a majority says nobody holds the resource: on each round, in
 * the own wait of the first member (in the resource's order) that says it is
 * held, woken by its release.
 */
static lkc_rc lkc_cb_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	int order[LKC_COMBINED_MAX];

	lkc_cb_order(s, resource, len, order);
	for (;;) {
		unsigned holding;
		int locked, first = -1;
		int64_t left = wait_ms == 0 ? 0 : LKC_WAIT_FOREVER;
		lkc_store *m;
		lkc_rc rc = lkc_cb_locked(s, resource, len, &locked, &holding, err);

		if (rc != LKC_OK || !locked) {
			return rc;
		}
		for (int k = 0; k < s->n && first < 0; k++) {
			if (holding & (1u << order[k])) {
				first = order[k];
			}
		}
		if (deadline != 0) {
			left = lkc_ms_left(deadline);
		}
		if (left == 0) {
			return lkc_err_set(err, LKC_BUSY, "combined store: the lock is still held");
		}
		m = s->members[first];
		rc = m->ops->wait_free(m, resource, len, left, err);
		if (rc != LKC_OK) {
			return rc;
		}
	}
}

static lkc_rc lkc_cb_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	int64_t top = -1;
	lkc_cb_call c;
	lkc_rc rc;

	if (lkc_cb_parts(s, hold, err) != LKC_OK) {
		return err->code;
	}
	lkc_cb_call_init(&c, s, hold, LKC_CB_FENCE);
	c.early = 1;
	lkc_cb_run(&c);
	rc = lkc_cb_verdict(&c, "get a fencing token", err);
	if (rc != LKC_OK) {
		return rc;
	}
	for (int i = 0; i < s->n; i++) {
		if (c.rc[i] == LKC_OK && c.value[i] > top) {
			top = c.value[i];
		}
	}
	/* Every member that gave a token (a majority) now counts from the greatest. */
	lkc_cb_call_init(&c, s, hold, LKC_CB_FLOOR);
	c.floor = top;
	c.early = 1;
	for (int i = 0; i < s->n; i++) {
		if (hold->parts[i].fence < 0) {
			c.what[i] = LKC_CB_SKIP;
		}
	}
	lkc_cb_run(&c);
	rc = lkc_cb_verdict(&c, "get a fencing token", err);
	if (rc == LKC_OK) {
		*fence = top;
	}
	return rc;
}

/* What a majority of members says of the resource: the first such member's view, with the greatest token. */
static lkc_rc lkc_cb_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_cb_store *s = (lkc_cb_store *) store;
	lkc_inspect seen[LKC_COMBINED_MAX];
	int answered = 0, held = 0, pick = -1;
	int64_t fence = -1;
	lkc_cb_call c;
	lkc_rc rc = LKC_OK;

	memset(seen, 0, sizeof(seen));
	lkc_cb_resource_call(&c, s, resource, len, LKC_CB_INSPECT);
	c.seen = seen;
	lkc_cb_run(&c);
	for (int i = 0; i < s->n; i++) {
		if (c.rc[i] == LKC_OK) {
			answered++;
			held += seen[i].mode != LKC_SEEN_FREE;
			fence = seen[i].fence > fence ? seen[i].fence : fence;
		}
	}
	if (answered < s->quorum) {
		rc = lkc_cb_unanswered(&c, answered, err);
	} else {
		int majority_held = held >= s->quorum;

		for (int i = 0; i < s->n && pick < 0; i++) {
			if (c.rc[i] == LKC_OK && (seen[i].mode != LKC_SEEN_FREE) == majority_held) {
				pick = i;
			}
		}
		if (pick < 0) {
			/* Neither a majority holding nor one free (a hold half taken, or half gone): free, as a take would find it. */
			for (int i = 0; i < s->n && pick < 0; i++) {
				if (c.rc[i] == LKC_OK && seen[i].mode == LKC_SEEN_FREE) {
					pick = i;
				}
			}
		}
		*out = seen[pick];
		memset(&seen[pick], 0, sizeof(seen[pick]));
		out->fence = fence;
	}
	for (int i = 0; i < s->n; i++) {
		lkc_inspect_free(&seen[i]);
	}
	return rc;
}

static void lkc_cb_abandon(lkc_store *store, lkc_hold *hold)
{
	lkc_cb_store *s = (lkc_cb_store *) store;

	for (int i = 0; i < hold->nparts && i < s->n; i++) {
		lkc_hold *part = &hold->parts[i];

		if (part->mode != LKC_MODE_NONE) {
			s->members[i]->ops->abandon(s->members[i], part);
		}
		part->unsure = 0;
		lkc_cb_part_forget(part);
	}
}

static void lkc_cb_settle(lkc_store *store, lkc_hold *hold)
{
	lkc_err ignored;

	if (lkc_cb_parts((lkc_cb_store *) store, hold, &ignored) == LKC_OK) {
		lkc_cb_give_back((lkc_cb_store *) store, hold, NULL);
	}
}

static void lkc_cb_destroy(lkc_store *store)
{
	lkc_cb_store *s = (lkc_cb_store *) store;

	for (int i = 0; i < s->n; i++) {
		lkc_store_release(s->members[i]);
	}
	free(s);
}

static const lkc_store_ops lkc_cb_ops;

/* A combined store over twins of the members, for the auto-refresh thread. */
static lkc_rc lkc_cb_twin(lkc_store *store, lkc_store **out, lkc_err *err)
{
	const lkc_cb_store *s = (const lkc_cb_store *) store;
	lkc_cb_store *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (t == NULL || (store->ns_len > 0 && (t->base.ns = malloc(store->ns_len)) == NULL)) {
		free(t);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	t->base.ops = &lkc_cb_ops;
	if (store->ns_len > 0) {
		memcpy(t->base.ns, store->ns, store->ns_len);
	}
	t->base.ns_len = store->ns_len;
	t->quorum = s->quorum;
	t->timeout_ms = s->timeout_ms;
	for (int i = 0; i < s->n; i++) {
		lkc_rc rc = s->members[i]->ops->twin(s->members[i], &t->members[i], err);

		if (rc != LKC_OK) {
			lkc_store_release(&t->base);
			return rc;
		}
		t->n = i + 1;
	}
	lkc_store_opened(&t->base);
	*out = &t->base;
	return LKC_OK;
}

static const lkc_store_ops lkc_cb_ops = {
	.name = "combined",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING,
	.acquire = lkc_cb_acquire,
	.release = lkc_cb_release,
	.refresh = lkc_cb_refresh,
	.check = lkc_cb_check,
	.is_locked = lkc_cb_is_locked,
	.force_release = lkc_cb_force_release,
	.abandon = lkc_cb_abandon,
	.destroy = lkc_cb_destroy,
	.twin = lkc_cb_twin,
	.fence = lkc_cb_fence,
	.settle = lkc_cb_settle,
	.wait_free = lkc_cb_wait_free,
	.inspect = lkc_cb_inspect,
	.stats = &lkc_stats_of[LKC_KIND_COMBINED],
};

/*
 * Whether two members reach one server: the same server as spelled (its place
 * on it aside), or two names of one address (localhost and 127.0.0.1).
 */
static int lkc_cb_same_server(const lkc_store *a, const lkc_store *b)
{
	return (a->ns_server_len > 0 && a->ns_server_len == b->ns_server_len
		&& memcmp(a->ns, b->ns, a->ns_server_len) == 0)
		|| lkc_redis_same_address(a, b);
}

lkc_rc lkc_combined_open(lkc_store **out, lkc_store *const *members, size_t n, int unanimous, lkc_err *err)
{
	lkc_cb_store *s;
	size_t ns_len = 0;

	*out = NULL;
	if (n == 0) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a combined store needs at least one store");
	}
	if (n > LKC_COMBINED_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a combined store takes at most %d stores, %zu given",
			LKC_COMBINED_MAX, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (!(members[i]->ops->caps & LKC_CAP_EXPIRY)) {
			return lkc_err_set(err, LKC_ERR_INVALID, "store %zu cannot expire (%s): a combined store's holds must "
				"expire on every server", i, members[i]->ops->name);
		}
		if (!lkc_redis_is(members[i])) {
			return lkc_err_set(err, LKC_ERR_INVALID, "store %zu is a %s store: a combined store is made of Redis "
				"stores", i, members[i]->ops->name);
		}
		for (size_t j = 0; j < i; j++) {
			if (members[j] == members[i] || lkc_cb_same_server(members[j], members[i])) {
				return lkc_err_set(err, LKC_ERR_INVALID, "stores %zu and %zu reach the same Redis server (%s): a "
					"majority must be of independent servers", j, i, lkc_redis_endpoint(members[i]));
			}
		}
		ns_len += members[i]->ns_len + 1;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->base.ops = &lkc_cb_ops;
	s->n = (int) n;
	s->quorum = unanimous ? (int) n : (int) n / 2 + 1;
	/* Its namespace: the members', in order (two combined stores lock the same names when made alike). */
	s->base.ns = malloc(ns_len + 1);
	if (s->base.ns != NULL) {
		char *p = s->base.ns;

		for (size_t i = 0; i < n; i++) {
			if (members[i]->ns_len > 0) {
				memcpy(p, members[i]->ns, members[i]->ns_len);
			}
			p += members[i]->ns_len;
			*p++ = '\n';
		}
		s->base.ns_len = ns_len;
	}
	for (size_t i = 0; i < n; i++) {
		s->members[i] = members[i];
		lkc_store_retain(members[i]);
		if (lkc_redis_timeout_ms(members[i]) > s->timeout_ms) {
			s->timeout_ms = lkc_redis_timeout_ms(members[i]);
		}
	}
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}
