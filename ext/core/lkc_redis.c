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
 * single exclusive attempt is therefore SET NX PX, EXISTS of the hand-off
 * records and GET of the ticket counter (one round trip, no script: an
 * EVALSHA costs the server several times a SET), as a transaction with INCR
 * and PEXPIRE of the fencing counter once the store was asked for a token,
 * and on a cluster (see lkc_rs_try_write); isLocked() is two EXISTS. Only
 * when the lock is taken while a hand-off is on record do they run a script,
 * which breaks a hold handed to a waiter that died (below). A release is one
 * script run that deletes the key when it holds our token and one EXISTS
 * finds no queue, no hand-off record and no waitUntilFree() caller, before
 * it defines anything else. Everything else (read holds, promotion, demotion,
 * waiting) is one run of the acquire script per step. Under contention the
 * server's time goes into two steps, the hand-off of a write hold and a
 * writer joining the queue; both scripts begin with a short way for the
 * common case of each, which ends as the general way would, in about half
 * its calls, and leaves everything else to it.
 *
 * Fencing: every exclusive take by script (a blocking acquisition, a
 * hand-off, a promotion) INCRs P{R}:f in the same script, and so does a
 * single attempt's transaction once the store was asked for a token; a
 * waiter handed the lock gets the value in its wake message ("y<token>"). A
 * hold taken without one gets it from the fence script when first asked,
 * which INCRs while it checks that the hold is ours. Each take also gives the
 * counter LKC_RS_FENCE_TTL to live (less for short holds), so that an idle
 * resource leaves nothing behind; nothing else deletes it, force_release
 * included. One found below 10^12 (new, expired, or lost: a restart without
 * persistence, an eviction, a flush) jumps to the
 * server's clock in microseconds, above every token handed out before as long
 * as the clock did not step back and fewer than a million holds a second were
 * taken. The jump needs a script: after a transaction that took the lock on a
 * new counter, one more round trip makes it (once per idle period). A failed
 * attempt with the INCR burns a token; tokens only ever grow.
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
 *
 * This file: the store's operations table, the entry and exit of its calls,
 * its messages, opening and closing it. The rest is in the files that
 * lkc_redis_int.h lists: sending (lkc_redis_io.c, lkc_redis_route.c), the
 * scripts and their keys (lkc_redis_script.c), waiting (lkc_redis_wait.c),
 * and a hold's operations (lkc_redis_hold.c).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#define LKC_RS_STR2(x) #x
#define LKC_RS_STR(x) LKC_RS_STR2(x)

static pthread_once_t lkc_rs_scripts_once = PTHREAD_ONCE_INIT;

/* What lkc_rs_enter set aside for the call's end. */
typedef struct {
	int parked;              /* the outer call's connection was parked */
	int interrupted;
	int abortable;
} lkc_rs_frame;

/* Fills err with the store's label ("Redis at ENDPOINT: "), the server when a topology has several, and the formatted cause; returns code. */
__attribute__((format(printf, 4, 5)))
lkc_rc lkc_rs_fail(const lkc_rs_store *s, lkc_err *err, lkc_rc code, const char *fmt, ...)
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
void lkc_rs_quote(const lkc_rs_store *s, const char *text, size_t len, char *out, size_t size)
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
void lkc_rs_quote_errstr(const lkc_rs_store *s, const char *text, char *out, size_t size)
{
	lkc_rs_quote(s, text, strlen(text), out, size);
	if (out[0] >= 'A' && out[0] <= 'Z' && (out[1] < 'A' || out[1] > 'Z')) {
		out[0] = (char) (out[0] - 'A' + 'a');
	}
}

/* Closes every pooled connection; a forked child closes only its copies of the sockets. */
void lkc_redis_pool_shutdown(void)
{
	lkc_rconn_pool_shutdown();
	lkc_rtopo_cache_shutdown();
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

static void lkc_rs_refresh_many(lkc_store *store, lkc_hold **holds, const int64_t *ttl_ms, int n, lkc_rc *rcs,
	lkc_err *errs)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc = lkc_rs_enter(s, &f, &errs[0]);

	if (rc != LKC_OK) {
		for (int i = 0; i < n; i++) {
			rcs[i] = rc;
			errs[i] = errs[0];
		}
		return;
	}
	lkc_rs_refresh_many_io(store, holds, ttl_ms, n, rcs, errs);
	lkc_rs_leave(s, &f);
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

static lkc_rc lkc_rs_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_inspect_io(store, resource, len, out, err);
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

static const lkc_store_ops lkc_rs_ops;

int lkc_redis_is(const lkc_store *store)
{
	return store->ops == &lkc_rs_ops;
}

/* The loopback or numeric address host names (family and bytes), without a resolver; 0 when it names none such. */
static int lkc_rs_host_address(const char *host, int *family, unsigned char out[16])
{
	if (strcasecmp(host, "localhost") == 0) {
		/* Redis listens on both loopbacks when bound to localhost; either spelling reaches it. */
		*family = AF_INET;
		return inet_pton(AF_INET, "127.0.0.1", out) == 1;
	}
	if (inet_pton(AF_INET, host, out) == 1) {
		*family = AF_INET;
		return 1;
	}
	if (inet_pton(AF_INET6, host, out) == 1) {
		static const unsigned char loopback6[16] = { [15] = 1 };

		*family = AF_INET6;
		if (memcmp(out, loopback6, 16) == 0) {
			*family = AF_INET;
			memset(out, 0, 16);
			return inet_pton(AF_INET, "127.0.0.1", out) == 1;
		}
		return 1;
	}
	return 0;
}

int lkc_redis_same_address(const lkc_store *a, const lkc_store *b)
{
	const lkc_redis_config *x = &((const lkc_rs_store *) a)->cfg, *y = &((const lkc_rs_store *) b)->cfg;
	unsigned char ax[16] = { 0 }, ay[16] = { 0 };
	int fx, fy;

	return x->topology == LKC_REDIS_SINGLE && y->topology == LKC_REDIS_SINGLE && x->host != NULL && y->host != NULL
		&& x->port == y->port && lkc_rs_host_address(x->host, &fx, ax) && lkc_rs_host_address(y->host, &fy, ay)
		&& fx == fy && memcmp(ax, ay, sizeof(ax)) == 0;
}

int64_t lkc_redis_timeout_ms(const lkc_store *store)
{
	return ((const lkc_rs_store *) store)->cfg.timeout_ms;
}

lkc_rc lkc_redis_fence_floor(lkc_store *store, lkc_hold *hold, int64_t floor, lkc_err *err)
{
	lkc_rs_store *s = (lkc_rs_store *) store;
	lkc_rs_frame f;
	lkc_rc rc;

	LKC_RS_ENTER(s, &f, err);
	rc = lkc_rs_floor_io(store, hold, floor, err);
	lkc_rs_leave(s, &f);
	return rc;
}

static int lkc_rs_config_copy(lkc_redis_config *cfg, const lkc_redis_config *from);

/* A copy of s (settings and namespace) whose connections are its own, for the auto-refresh thread. */
static lkc_rc lkc_rs_twin(lkc_store *store, lkc_store **out, lkc_err *err)
{
	const lkc_rs_store *s = (const lkc_rs_store *) store;
	lkc_redis_config cfg;
	lkc_rc rc;

	if (lkc_rs_config_copy(&cfg, &s->cfg) != 0) {
		lkc_redis_config_free(&cfg);
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory");
	}
	/* Never pooled: the thread's connections are never the host thread's. */
	cfg.persistent = 0;
	rc = lkc_redis_open(out, &cfg, err);
	return rc != LKC_OK ? rc : lkc_store_twin_ns(out, store, err);
}

static const lkc_store_ops lkc_rs_ops = {
	.name = "redis",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING,
	.acquire = lkc_rs_acquire,
	.release = lkc_rs_release,
	.refresh = lkc_rs_refresh,
	.refresh_many = lkc_rs_refresh_many,
	.check = lkc_rs_check,
	.is_locked = lkc_rs_is_locked,
	.inspect = lkc_rs_inspect,
	.force_release = lkc_rs_force_release,
	.abandon = lkc_rs_abandon,
	.destroy = lkc_rs_destroy,
	.fence = lkc_rs_fence,
	.settle = lkc_rs_settle,
	.wait_free = lkc_rs_wait_free,
	.server_id = lkc_rs_server_id,
	.twin = lkc_rs_twin,
	.stats = &lkc_stats_of[LKC_KIND_REDIS],
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

/* Copies a string that may be NULL into *to; -1 when out of memory. */
static int lkc_rs_strdup(char **to, const char *from)
{
	*to = from != NULL ? strdup(from) : NULL;
	return from != NULL && *to == NULL ? -1 : 0;
}

/* Makes cfg a deep copy of from; -1 when out of memory (cfg is then partly filled, freed as usual). */
static int lkc_rs_config_copy(lkc_redis_config *cfg, const lkc_redis_config *from)
{
	int bad = 0;

	*cfg = *from;
	bad |= lkc_rs_strdup(&cfg->host, from->host);
	bad |= lkc_rs_strdup(&cfg->socket_path, from->socket_path);
	bad |= lkc_rs_strdup(&cfg->username, from->username);
	bad |= lkc_rs_strdup(&cfg->password, from->password);
	bad |= lkc_rs_strdup(&cfg->master_name, from->master_name);
	bad |= lkc_rs_strdup(&cfg->sentinel_username, from->sentinel_username);
	bad |= lkc_rs_strdup(&cfg->sentinel_password, from->sentinel_password);
	bad |= lkc_rs_strdup(&cfg->tls_ca_file, from->tls_ca_file);
	bad |= lkc_rs_strdup(&cfg->tls_ca_dir, from->tls_ca_dir);
	bad |= lkc_rs_strdup(&cfg->tls_cert, from->tls_cert);
	bad |= lkc_rs_strdup(&cfg->tls_key, from->tls_key);
	bad |= lkc_rs_strdup(&cfg->tls_server_name, from->tls_server_name);
	cfg->prefix = NULL;
	cfg->seeds = NULL;
	cfg->nseeds = 0;
	if (from->prefix != NULL) {
		cfg->prefix = malloc(from->prefix_len + 1);
		if (cfg->prefix == NULL) {
			cfg->prefix_len = 0;
			return -1;
		}
		memcpy(cfg->prefix, from->prefix, from->prefix_len);
		cfg->prefix[from->prefix_len] = '\0';
	}
	if (from->nseeds > 0) {
		cfg->seeds = calloc(from->nseeds, sizeof(*cfg->seeds));
		if (cfg->seeds == NULL) {
			return -1;
		}
		cfg->nseeds = from->nseeds;
		for (size_t i = 0; i < from->nseeds; i++) {
			cfg->seeds[i].port = from->seeds[i].port;
			bad |= lkc_rs_strdup(&cfg->seeds[i].host, from->seeds[i].host);
		}
	}
	return bad;
}

/* A malloc'd printf. */
__attribute__((format(printf, 1, 2)))
char *lkc_rs_format(const char *fmt, ...)
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
	lkc_store_opened(&s->base);
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
