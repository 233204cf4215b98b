/*
 * A Redis hold's operations (see lkc_redis_int.h): a single attempt at the
 * write hold (one transaction), a take through the acquire script and the
 * wait loop, the replicas' acknowledgement (WAIT), release (and its cooldown,
 * a release with a delay), refresh, check, the fencing token, isLocked() and
 * forceRelease(). Each runs between lkc_rs_enter and lkc_rs_leave
 * (lkc_redis.c).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"
#include "lkc_fan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The budget of giving back what a failed acquire may have taken (ms), when the lock goes. */
#define LKC_RS_SETTLE_MS 50

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

/*
 * The fencing token of our write hold, from the fence script (which also
 * makes a new counter jump, see the top of lkc_redis.c).
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
 * One attempt at the write hold by a hold that has none, in one write and one
 * round trip: SET NX PX, the hand-off records' EXISTS and the tickets' GET;
 * with the INCR of the fencing counter (and its PEXPIRE) after them once this
 * store was asked for a token. The lock key exists whenever anybody holds the
 * resource in any mode, so SET NX is the whole check. The INCR must be
 * atomic with the take, and on a cluster a slot that moves between two
 * commands must redirect all of them, so those attempts are a transaction
 * (MULTI ... EXEC); the others need none (EXISTS and GET only hint). Without
 * the INCR, the token is made when first asked for, by the fence script,
 * which checks that the hold is still ours in the same step: a token made
 * during the hold is above every token of the holds before it all the same.
 * A failed attempt with the INCR burns a token. An ambiguous failure is
 * settled by asking who holds the resource, and the attempt is sent again
 * only when nobody does.
 */
static lkc_rc lkc_rs_try_write(lkc_rs_store *s, lkc_hold *hold, lkc_rs_req *req, lkc_err *err)
{
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
	int fenced = s->fence_wanted, atomic = fenced || s->topo.kind == LKC_REDIS_CLUSTER;
	/* SET, EXISTS, GET, then INCR and PEXPIRE when fenced: what each answered. */
	const redisReply *got[5] = { NULL };
	const char *names[7];
	lkc_rs_cmd cmds[7];
	redisReply *replies[7];
	long long ttl = req->ttl[0] != '\0' ? strtoll(req->ttl, NULL, 10) : 0;
	int n = 0, ran = fenced ? 5 : 3;
	lkc_rs_op op;
	lkc_rc rc;
	int stale = 0;

	if (keys == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	if (atomic) {
		names[n] = "MULTI";
		cmds[n++] = (lkc_rs_cmd) { 1, multi, multi_len };
	}
	names[n] = "SET";
	cmds[n++] = (lkc_rs_cmd) { req->ttl[0] != '\0' ? 6 : 4, set, set_len };
	names[n] = "EXISTS";
	cmds[n++] = (lkc_rs_cmd) { 2, exists, exists_len };
	names[n] = "GET";
	cmds[n++] = (lkc_rs_cmd) { 2, get, get_len };
	if (fenced) {
		names[n] = "INCR";
		cmds[n++] = (lkc_rs_cmd) { 2, incr, incr_len };
		names[n] = "PEXPIRE";
		cmds[n++] = (lkc_rs_cmd) { 3, expire, expire_len };
	}
	if (atomic) {
		names[n] = "EXEC";
		cmds[n++] = (lkc_rs_cmd) { 1, exec, exec_len };
	}
	memcpy(counter, req->key, req->key_len);
	memcpy(counter + req->key_len, ":f", 3);
	memcpy(handed, req->key, req->key_len);
	memcpy(handed + req->key_len, ":h", 3);
	memcpy(tickets, req->key, req->key_len);
	memcpy(tickets + req->key_len, ":t", 3);
	if (fenced) {
		/* The counter's life, as the scripts' bump() gives it. */
		expire_len[2] = lkc_i64_str(keep, ttl > 0 && ttl < LKC_RS_FENCE_TTL / LKC_RS_FENCE_TTLS
			? ttl * LKC_RS_FENCE_TTLS : LKC_RS_FENCE_TTL);
	}
	lkc_rs_op_start(s, &op);
	for (;;) {
		long long state;

		rc = lkc_rs_send(s, &op, req->key, req->key_len, cmds, n, replies, err);
		if (rc == LKC_OK) {
			break;
		}
		if (!lkc_rs_may_recover(&op, rc)) {
			free(keys);
			return rc;
		}
		op.recovered = 1;
		/* The attempt may have run before the connection failed: the keys tell whether we hold the lock. */
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
		/* Nobody holds it, so the attempt did not take it and sending it again is safe. */
	}
	free(keys);
	rc = LKC_OK;
	/* A refusal (NOAUTH, OOM, READONLY) shows first on the command that met it. */
	for (int i = 0; i < n && rc == LKC_OK; i++) {
		if (replies[i]->type == REDIS_REPLY_ERROR) {
			rc = lkc_rs_refused(s, names[i], replies[i], err);
		}
	}
	if (rc == LKC_OK && atomic) {
		const redisReply *outcome = replies[n - 1];

		for (int i = 1; i < n - 1 && rc == LKC_OK; i++) {
			if (!lkc_rs_is_status(replies[i], "QUEUED")) {
				rc = lkc_rs_unexpected(s, "the acquire transaction", replies[i], err);
			}
		}
		if (rc == LKC_OK && (!lkc_rs_is_ok(replies[0]) || outcome->type != REDIS_REPLY_ARRAY
			|| outcome->elements != (size_t) ran)) {
			rc = lkc_rs_unexpected(s, "the acquire transaction", outcome, err);
		}
		for (int i = 0; rc == LKC_OK && i < ran; i++) {
			got[i] = outcome->element[i];
		}
	} else if (rc == LKC_OK) {
		for (int i = 0; i < ran; i++) {
			got[i] = replies[i];
		}
	}
	if (rc == LKC_OK && (got[1]->type != REDIS_REPLY_INTEGER || (fenced && got[3]->type != REDIS_REPLY_INTEGER))) {
		rc = lkc_rs_unexpected(s, "the single attempt", got[got[1]->type != REDIS_REPLY_INTEGER ? 1 : 3], err);
	} else if (rc == LKC_OK && lkc_rs_is_ok(got[0])) {
		int64_t last = lkc_rs_ticket_of(got[2]);

		hold->fence = fenced ? got[3]->integer : -1;
		/* Nobody was queued (the lock key was free), so the next two arrivals will head the queue. */
		hold->next[0] = last > 0 ? last + 1 : 0;
		hold->next[1] = last > 0 ? last + 2 : 0;
	} else if (rc == LKC_OK && got[0]->type == REDIS_REPLY_NIL) {
		rc = lkc_rs_busy(s, LKC_RS_REFUSED, err);
		stale = got[1]->integer > 0;
	} else if (rc == LKC_OK) {
		rc = lkc_rs_unexpected(s, "SET", got[0], err);
	}
	lkc_rs_free_replies(replies, n);
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
	if (rc == LKC_OK && hold->fence >= 0 && hold->fence < 1000000000000LL) {
		lkc_err ignored;

		/* A new counter: its jump takes the fence script. Should that fail, lkc_fence asks again later. */
		if (lkc_rs_fence_of(s, req->key, req->key_len, hold, &hold->fence, &ignored) != LKC_OK) {
			hold->fence = -1;
		}
	}
	return rc;
}

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
lkc_rc lkc_rs_acquire_io(lkc_store *store, lkc_hold *hold, lkc_mode mode,
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
lkc_rc lkc_rs_release_io(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
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
	lens[1] = lkc_i64_str(delay, delay_ms > 0 ? delay_ms : 0);
	lkc_rs_drop_if_closed(s);
	lkc_rs_op_start(s, &op);
	lkc_rs_guessed(hold, &lists);
	/*
	 * Not in a combined call (lkc_fan_inside), which may give this server up once the
	 * release is written: the short release may do nothing, and then the release
	 * script, which a given-up server would never get, must follow.
	 */
	if (delay_ms <= 0 && hold->mode == LKC_MODE_EXCLUSIVE && lists.n == 0 && !hold->unsure && !lkc_fan_inside()) {
		/*
		 * Nobody had queued when we took the hold: the short release, which answers 0,
		 * having written nothing, when anything else exists. An answer lost on the way
		 * leaves the release script to tell what happened (unsure).
		 */
		redisReply *reply;
		const redisReply *result;

		rc = lkc_rs_run(s, &op, LKC_RS_DROP, key, key_len, NULL, args, lens, 1, NULL, &reply, &result, err);
		if (rc == LKC_OK) {
			int dropped = result->type == REDIS_REPLY_INTEGER && result->integer == 1;

			freeReplyObject(reply);
			if (dropped) {
				lkc_rs_hold_result(s, hold, "release", 1, err);
				free(key);
				return LKC_OK;
			}
		} else if (!lkc_rs_may_recover(&op, rc)) {
			hold->unsure = rc == LKC_ERR_IO;
			free(key);
			return rc;
		} else {
			op.recovered = 1;
			hold->unsure = 1;
		}
	}
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
void lkc_rs_settle_io(lkc_store *store, lkc_hold *hold)
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
lkc_rc lkc_rs_refresh_io(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
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
	lens[1] = ttl_ms != LKC_TTL_NONE ? lkc_i64_str(ttl, ttl_ms) : 0;
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

/*
 * A refresh script's answer in a batch, when it says all there is to say:
 * sets *result and the hold's guess. 0 when it asks for more (an error such
 * as NOSCRIPT, a "need", hints to deliver): that hold then goes on its own.
 */
static int lkc_rs_batch_answer(const redisReply *r, lkc_hold *hold, long long *result)
{
	if (r->type == REDIS_REPLY_INTEGER) {
		*result = r->integer;
		hold->next[0] = hold->next[1] = 0;
		return 1;
	}
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[0]->type == REDIS_REPLY_INTEGER) {
		*result = r->element[0]->integer;
		hold->next[0] = lkc_rs_ticket_of(r->element[1]);
		hold->next[1] = lkc_rs_ticket_of(r->element[2]);
		return 1;
	}
	return 0;
}

/* Refreshes holds[0..n) (n <= LKC_RS_BATCH_MAX) in one round trip; see lkc_rs_refresh_many_io. */
static void lkc_rs_refresh_batch(lkc_rs_store *s, lkc_hold **holds, const int64_t *ttl_ms, int n, lkc_rc *rcs,
	lkc_err *errs)
{
	lkc_rs_cmd cmds[LKC_RS_BATCH_MAX];
	redisReply *replies[LKC_RS_BATCH_MAX];
	char *mems[LKC_RS_BATCH_MAX] = { NULL }, *keys[LKC_RS_BATCH_MAX] = { NULL };
	char ttls[LKC_RS_BATCH_MAX][24];
	size_t key_lens[LKC_RS_BATCH_MAX];
	int built = 1;
	lkc_err err;
	lkc_rs_op op;
	lkc_rc rc;

	for (int i = 0; i < n && built; i++) {
		const char *args[2] = { holds[i]->owner, ttls[i] };
		size_t lens[2] = { holds[i]->owner_len, 0 };
		lkc_rs_lists lists;

		ttls[i][0] = '\0';
		lens[1] = ttl_ms[i] != LKC_TTL_NONE ? lkc_i64_str(ttls[i], ttl_ms[i]) : 0;
		keys[i] = lkc_rs_lock_key(s, holds[i]->resource, holds[i]->resource_len, &key_lens[i]);
		lkc_rs_guessed(holds[i], &lists);
		mems[i] = keys[i] == NULL ? NULL : lkc_rs_eval_build(LKC_RS_REFRESH, keys[i], key_lens[i], &lists, args, lens, 2, &cmds[i]);
		built = mems[i] != NULL;
	}
	rc = LKC_ERR_SYSTEM;
	if (built) {
		lkc_err_clear(&err);
		lkc_rs_op_start(s, &op);
		for (;;) {
			rc = lkc_rs_send(s, &op, keys[0], key_lens[0], cmds, n, replies, &err);
			if (!lkc_rs_may_recover(&op, rc)) {
				break;
			}
			op.recovered = 1;
		}
	}
	for (int i = 0; i < n; i++) {
		long long result = 0;

		if (built && rc != LKC_OK) {
			/* The server did not answer: every one of them failed so (a later try sets the same TTLs). */
			rcs[i] = rc;
			errs[i] = err;
		} else if (built && lkc_rs_batch_answer(replies[i], holds[i], &result)) {
			rcs[i] = lkc_rs_hold_result(s, holds[i], "refresh", result, &errs[i]);
		} else {
			/* Out of memory, or an answer that asks for more: on its own, as a refresh outside a batch. */
			rcs[i] = lkc_rs_refresh_io(&s->base, holds[i], ttl_ms[i], &errs[i]);
		}
	}
	if (built && rc == LKC_OK) {
		lkc_rs_free_replies(replies, n);
	}
	for (int i = 0; i < n; i++) {
		free(mems[i]);
		free(keys[i]);
	}
}

/*
 * Refreshes n holds as lkc_rs_refresh_io does each, in as few round trips
 * as the store can: on a single server (plain or TLS) without replicas to
 * wait for, up to LKC_RS_BATCH_MAX refresh scripts go in one write and their
 * answers are read together; Sentinel, Cluster and WAIT for replicas take
 * them one by one. Setting the same TTL twice does no harm, so an answer
 * that asks for more is simply sent again alone.
 */
void lkc_rs_refresh_many_io(lkc_store *store, lkc_hold **holds, const int64_t *ttl_ms, int n, lkc_rc *rcs,
	lkc_err *errs)
{
	lkc_rs_store *s = (lkc_rs_store *) store;

	if (s->topo.kind != LKC_REDIS_SINGLE || s->cfg.replicas > 0) {
		for (int i = 0; i < n; i++) {
			rcs[i] = lkc_rs_refresh_io(store, holds[i], ttl_ms[i], &errs[i]);
		}
		return;
	}
	for (int at = 0; at < n; at += LKC_RS_BATCH_MAX) {
		int k = n - at < LKC_RS_BATCH_MAX ? n - at : LKC_RS_BATCH_MAX;

		lkc_rs_refresh_batch(s, holds + at, ttl_ms + at, k, rcs + at, errs + at);
	}
}

/* Whether our hold, write or read, is still ours. */
lkc_rc lkc_rs_check_io(lkc_store *store, lkc_hold *hold, lkc_err *err)
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
lkc_rc lkc_rs_is_locked_io(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
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
lkc_rc lkc_rs_force_release_io(lkc_store *store, const char *resource, size_t len, lkc_err *err)
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
lkc_rc lkc_rs_fence_io(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key;
	lkc_rc rc;

	/* Its user wants tokens: from now on a single attempt takes one with the hold. */
	s->fence_wanted = 1;
	key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	rc = lkc_rs_fence_of(s, key, key_len, hold, fence, err);
	free(key);
	return rc;
}

/* Raises the resource's fencing counter to floor while hold is our write hold (the combined store's tokens). */
lkc_rc lkc_rs_floor_io(lkc_store *store, lkc_hold *hold, int64_t floor, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	char digits[24];
	const char *args[2] = { hold->owner, digits };
	size_t lens[2] = { hold->owner_len, 0 };
	long long result = 0;
	size_t key_len;
	lkc_rs_op op;
	char *key;
	lkc_rc rc;

	lens[1] = lkc_i64_str(digits, floor);
	key = lkc_rs_lock_key(s, hold->resource, hold->resource_len, &key_len);
	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	rc = lkc_rs_eval_int(s, &op, LKC_RS_FLOOR, key, key_len, NULL, args, lens, 2, NULL, &result, err);
	free(key);
	if (rc == LKC_OK && result != 1) {
		rc = lkc_rs_fail(s, err, LKC_LOST, "cannot raise the fencing counter: the write hold is not ours any more");
	}
	return rc;
}

/* Copies a reply string into b; 0, or -1 out of memory. */
static int lkc_rs_bytes(lkc_bytes *b, const redisReply *r)
{
	b->s = malloc(r->len + 1);
	if (b->s == NULL) {
		return -1;
	}
	memcpy(b->s, r->str, r->len);
	b->s[r->len] = '\0';
	b->len = r->len;
	return 0;
}

/* Reads the inspect script's answer (see there) into out. */
static lkc_rc lkc_rs_read_inspect(lkc_rs_store *s, const redisReply *r, lkc_inspect *out, lkc_err *err)
{
	size_t n;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 4 || r->element[0]->type != REDIS_REPLY_STRING
		|| r->element[1]->type != REDIS_REPLY_INTEGER || r->element[2]->type != REDIS_REPLY_INTEGER
		|| r->element[3]->type != REDIS_REPLY_INTEGER || r->element[3]->integer < 0
		|| (size_t) r->element[3]->integer > r->elements - 4) {
		return lkc_rs_unexpected(s, "the inspect script", r, err);
	}
	for (size_t i = 4; i < r->elements; i++) {
		if (r->element[i]->type != REDIS_REPLY_STRING) {
			return lkc_rs_unexpected(s, "the inspect script", r->element[i], err);
		}
	}
	switch (r->element[0]->len == 1 ? r->element[0]->str[0] : 0) {
		case 'w':
			out->mode = LKC_SEEN_WRITE;
			break;
		case 'r':
			out->mode = LKC_SEEN_READ;
			break;
		case 'c':
			out->mode = LKC_SEEN_COOLDOWN;
			break;
		default:
			out->mode = LKC_SEEN_FREE;
			break;
	}
	/* PTTL's -1 (a hold without TTL) is ours too; nobody holding has none either. */
	out->ttl_ms = r->element[1]->integer >= 0 ? r->element[1]->integer : LKC_TTL_NONE;
	out->fence = r->element[2]->integer > 0 ? r->element[2]->integer : -1;
	n = (size_t) r->element[3]->integer;
	out->owners_known = out->queue_known = 1;
	out->owners = n > 0 ? calloc(n, sizeof(lkc_bytes)) : NULL;
	out->queue = r->elements - 4 - n > 0 ? calloc(r->elements - 4 - n, sizeof(lkc_bytes)) : NULL;
	if ((n > 0 && out->owners == NULL) || (r->elements - 4 - n > 0 && out->queue == NULL)) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++, out->nowners++) {
		if (lkc_rs_bytes(&out->owners[i], r->element[4 + i]) != 0) {
			return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	for (size_t i = 4 + n; i < r->elements; i++, out->nqueue++) {
		if (lkc_rs_bytes(&out->queue[out->nqueue], r->element[i]) != 0) {
			return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	out->waiters = (int64_t) out->nqueue;
	return LKC_OK;
}

/* Who holds the resource and who waits for it, from one run of the inspect script (a read: sent again after a failure). */
lkc_rc lkc_rs_inspect_io(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	size_t key_len;
	char *key = lkc_rs_lock_key(s, resource, len, &key_len);
	redisReply *reply = NULL;
	lkc_rs_op op;
	lkc_rc rc;

	if (key == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	lkc_rs_op_start(s, &op);
	for (;;) {
		rc = lkc_rs_eval(s, &op, LKC_RS_INSPECT, key, key_len, NULL, NULL, NULL, 0, &reply, err);
		if (!lkc_rs_may_recover(&op, rc)) {
			break;
		}
		op.recovered = 1;
	}
	free(key);
	if (rc == LKC_OK) {
		rc = lkc_rs_read_inspect(s, reply, out, err);
		freeReplyObject(reply);
	}
	return rc;
}
