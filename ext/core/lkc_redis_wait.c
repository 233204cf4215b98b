/*
 * How the Redis store waits (see lkc_redis_int.h, and "Waiting" at the top of
 * lkc_redis.c): the steps of the acquire script (take, join the queue, leave
 * it), the sleep in BLPOP on a waiter's wake list, what a wake message says
 * (a hold handed over, hand-offs to watch, a hint), the wait loop that
 * alternates them, and waitUntilFree(), which waits in the same way and
 * takes nothing.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* Margin of a waiter's liveness deadline for its own round trips (ms), beyond its sleep and I/O timeouts. */
#define LKC_RS_SLACK 500

/* Frees what lkc_rs_req_init allocated. */
void lkc_rs_req_free(lkc_rs_req *req)
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
int lkc_rs_req_init(const lkc_rs_store *s, lkc_rs_req *req, const lkc_hold *hold, lkc_mode mode,
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
		lkc_i64_str(req->ttl, ttl_ms);
	}
	req->want = mode == LKC_MODE_EXCLUSIVE ? 'w' : 'r';
	req->held = hold->mode == LKC_MODE_EXCLUSIVE ? 'w' : hold->mode == LKC_MODE_SHARED ? 'r' : 'n';
	req->fair = s->cfg.fair ? '1' : '0';
	/* A live waiter runs the script again within one sleep, two I/O timeouts and a margin. */
	lkc_i64_str(req->stay, LKC_RS_WAIT_CAP + 2 * s->cfg.timeout_ms + LKC_RS_SLACK);
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
lkc_rc lkc_rs_step(lkc_rs_store *s, lkc_rs_req *req, char how, lkc_rs_answer *ans, lkc_err *err)
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

/* What woke a sleep (see the top of lkc_redis.c). */
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
lkc_rc lkc_rs_busy(const lkc_rs_store *s, lkc_rs_outcome outcome, lkc_err *err)
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
lkc_rc lkc_rs_wait(lkc_rs_store *s, lkc_hold *hold, lkc_rs_req *req, const lkc_rs_answer *queued,
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
			hold->handed = 1;
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
lkc_rc lkc_rs_wait_free_io(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
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
