/*
 * The MySQL store's table holds (holds => 'table'): expiring holds kept as rows
 * of an InnoDB table in the store's database, so that a hold outlives its
 * connection and its process and can be adopted elsewhere by its owner token.
 *
 * The table (lock_holds unless the option "table" names another) is created
 * when missing, as LKC_MYT_CREATE says:
 *   name        lkc_my_name() of the resource, as session holds name it
 *   owner       the owner token; NULL: free; '' (no owner can be empty): kept
 *               blocked by a delayed release
 *   expires_at  UTC, by the server's clock; NULL: never
 *   fence       the fencing token: a new row starts at the server's clock in
 *               microseconds (LKC_MYT_CLOCK_US), and every take of an existing
 *               row adds one. A released row stays, free, with its counter
 *               (expires_at: when it was released), so that no take can meet
 *               a gap in the counter: the clock a statement reads is the
 *               time it started, which can be before the previous row's last
 *               take if it waited. Only rows free or expired for
 *               LKC_MYT_SWEEP_AGE_S go (lkc_myt_sweep): a statement that
 *               started before such a row's last take would have run longer
 *               than any statement may, so the resource's next row starts
 *               above every token of the row before it, unless the server's
 *               clock stepped back or a row was taken a million times a second
 *   conn        the connection id of the holder's session when that session
 *               holds the name with GET_LOCK (below), else NULL
 * A row is held while owner is set and expires_at is NULL or after
 * UTC_TIMESTAMP(6): the start of the statement that asks, the instant NOW(6)
 * gives, free of the session's time zone. Every statement is one autocommitted
 * row operation, so a statement that waited for another's row lock compares
 * with a time a little before the real one: it sees a hold live a little
 * longer, never expired early, and its new expiry is never earlier than the
 * one the client counts from before the call.
 *
 * The row alone says who holds what. GET_LOCK only wakes waiters: while a
 * hold's session lives, it also holds the row's name under the tag "hold:"
 * (lkc_myt_wake) with GET_LOCK, and the row records that session (conn). A
 * waiter reads the row, and when conn's session holds the name it waits in
 * GET_LOCK (and lets go in the same statement), woken by the release (the row
 * is freed first, then the name) or by the holder's end; otherwise (the hold
 * was restored in a process that has not refreshed it yet, its session died,
 * a delayed release, or its holder could not have the name) it looks again
 * after at most LKC_MYT_RECHECK_MS. Either wait ends at the row's expiry and at the waiter's
 * deadline, and a release between the look and the wait lets GET_LOCK return at
 * once, so a waiter is never later than LKC_MYT_RECHECK_MS past a free row.
 * A refresh through the store's twin (the auto-refresh thread's store, on
 * sessions of its own) only extends the row: the name and conn stay the
 * holder's session's, and a hold that no session marks stays unmarked until
 * its own store refreshes it.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"
#include "lkc_mysql_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

/* How long a waiter waits at most before it looks again at a hold that no session marks with GET_LOCK. */
#define LKC_MYT_RECHECK_MS 500
/* A TTL beyond a century is kept to a century: DATETIME ends at the year 9999. */
#define LKC_MYT_TTL_MAX_MS INT64_C(3153600000000)
/* The tag of the GET_LOCK names of table holds, as long as LKC_MY_TAG. */
#define LKC_MYT_WAKE_TAG "hold:"
_Static_assert(sizeof(LKC_MYT_WAKE_TAG) == sizeof(LKC_MY_TAG), "a wake name is as long as a lock name");
/* A quoted owner: X'', two hex digits a byte, and a NUL. */
#define LKC_MYT_OWNER_SQL (4 + 2 * LKC_OWNER_MAX)

#define LKC_MYT_CREATE \
	"CREATE TABLE IF NOT EXISTS `%s` (" \
	"name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY," \
	" owner VARBINARY(255) NULL," \
	" expires_at DATETIME(6) NULL," \
	" fence BIGINT NOT NULL," \
	" conn BIGINT UNSIGNED NULL" \
	") ENGINE=InnoDB"

/* How long a row stays free or expired before a sweep deletes it, and how many a sweep deletes at most. */
#define LKC_MYT_SWEEP_AGE_S 3600
#define LKC_MYT_SWEEP_MAX 16
/* The process's first table-hold release sweeps, and every this many-th after it. */
#define LKC_MYT_SWEEP_EVERY 64
/* The server's clock in microseconds since 1970, free of the session's time zone: a new row's first token. */
#define LKC_MYT_CLOCK_US "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))"

/* Whether the row is held, by anybody. */
#define LKC_MYT_LIVE "(owner IS NOT NULL AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP(6)))"
/* Whether an insert's row may take an existing one: free or expired. */
#define LKC_MYT_TAKES "(owner IS NULL OR expires_at <= UTC_TIMESTAMP(6))"
/* The same, or the same owner's: what a blocking acquire takes (as on Redis). */
#define LKC_MYT_TAKES_OWN "(owner IS NULL OR owner = VALUES(owner) OR expires_at <= UTC_TIMESTAMP(6))"

/* What a look at a row found. */
typedef struct {
	int state;         /* 0: free (or no row), 1: held by the owner asked about, 2: held by another */
	int64_t left_ms;   /* until the hold expires, -1: never (or free) */
	int woken;         /* the holder's session holds the name: its release or end wakes a GET_LOCK waiter */
} lkc_myt_look_t;

/* The owner as an SQL literal. */
static void lkc_myt_owner(char out[LKC_MYT_OWNER_SQL], const lkc_hold *hold)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	out[n++] = 'X';
	out[n++] = '\'';
	for (size_t i = 0; i < hold->owner_len; i++) {
		unsigned char b = (unsigned char) hold->owner[i];

		out[n++] = hex[b >> 4];
		out[n++] = hex[b & 15];
	}
	out[n++] = '\'';
	out[n] = '\0';
}

/* The expiry of a hold of ttl_ms taken now, as SQL. */
static void lkc_myt_expiry(char *out, size_t size, int64_t ttl_ms)
{
	if (ttl_ms == LKC_TTL_NONE) {
		snprintf(out, size, "NULL");
		return;
	}
	if (ttl_ms > LKC_MYT_TTL_MAX_MS) {
		ttl_ms = LKC_MYT_TTL_MAX_MS;
	}
	snprintf(out, size, "TIMESTAMPADD(MICROSECOND, %" PRId64 ", UTC_TIMESTAMP(6))", ttl_ms * 1000);
}

/*
 * The GET_LOCK name that marks the hold of the row name: the row's name under a tag
 * of its own, so that table holds and session holds of one resource never meet.
 */
static void lkc_myt_wake(char out[LKC_MY_NAME_LEN + 1], const char *name)
{
	memcpy(out, name, LKC_MY_NAME_LEN + 1);
	memcpy(out, LKC_MYT_WAKE_TAG, sizeof(LKC_MYT_WAKE_TAG) - 1);
}

/* Runs sql on *c, creating the table first when it is missing; flags and res as lkc_my_exec's. */
static lkc_rc lkc_myt_run_flags(lkc_my_store *s, lkc_my_conn **c, const char *sql, int flags, MYSQL_RES **res,
	lkc_err *err)
{
	lkc_rc rc = lkc_my_exec(s, c, sql, lkc_my_deadline(s), flags, res, err);

	if (rc == LKC_ERR_REFUSED && *c != NULL && mysql_errno((*c)->my) == ER_NO_SUCH_TABLE) {
		char create[512];

		snprintf(create, sizeof(create), LKC_MYT_CREATE, s->table);
		lkc_err_clear(err);
		rc = lkc_my_exec(s, c, create, lkc_my_deadline(s), 0, NULL, err);
		if (rc == LKC_OK) {
			rc = lkc_my_exec(s, c, sql, lkc_my_deadline(s), flags, res, err);
		}
	}
	return rc;
}

/* Runs sql on *c, creating the table first when it is missing; res as lkc_my_exec's. */
static lkc_rc lkc_myt_run(lkc_my_store *s, lkc_my_conn **c, const char *sql, MYSQL_RES **res, lkc_err *err)
{
	return lkc_myt_run_flags(s, c, sql, 0, res, err);
}

/* Runs a statement that answers at most one row of n integers (SQL NULL as -1); *found whether it did. */
static lkc_rc lkc_myt_row(lkc_my_store *s, lkc_my_conn **c, const char *sql, int64_t *vals, unsigned n, int *found,
	lkc_err *err)
{
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_rc rc = lkc_myt_run(s, c, sql, &res, err);

	*found = 0;
	if (rc != LKC_OK) {
		return rc;
	}
	if (res == NULL || mysql_num_fields(res) < n) {
		mysql_free_result(res);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "MySQL at %s: unexpected answer", s->endpoint);
	}
	if ((row = mysql_fetch_row(res)) != NULL) {
		*found = 1;
		for (unsigned i = 0; i < n; i++) {
			vals[i] = row[i] != NULL ? strtoll(row[i], NULL, 10) : -1;
		}
	}
	mysql_free_result(res);
	return LKC_OK;
}

/* Looks at the row of name on *c, for owner (an SQL literal, or "NULL" for nobody). */
static lkc_rc lkc_myt_look(lkc_my_store *s, lkc_my_conn **c, const char *name, const char *owner, lkc_myt_look_t *out,
	lkc_err *err)
{
	char sql[1536], wake[LKC_MY_NAME_LEN + 1];
	int64_t v[3];
	int found = 0;
	lkc_rc rc;

	lkc_myt_wake(wake, name);
	snprintf(sql, sizeof(sql), "SELECT IF(" LKC_MYT_LIVE ", IF(owner = %s, 1, 2), 0),"
		" IF(" LKC_MYT_LIVE " AND expires_at IS NOT NULL,"
		" GREATEST(CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) / 1000), 0), NULL),"
		" IFNULL(IS_USED_LOCK('%s') = conn, 0) FROM `%s` WHERE name = '%s'", owner, wake, s->table, name);
	rc = lkc_myt_row(s, c, sql, v, 3, &found, err);
	if (rc != LKC_OK) {
		return rc;
	}
	out->state = found ? (int) v[0] : 0;
	out->left_ms = found && out->state != 0 ? v[1] : -1;
	out->woken = found && v[2] == 1;
	return LKC_OK;
}

/* Looks at the row of name on a session of its own. */
static lkc_rc lkc_myt_look_aside(lkc_my_store *s, const char *name, const char *owner, lkc_myt_look_t *out, lkc_err *err)
{
	lkc_my_conn *c;
	lkc_rc rc;

	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_myt_look(s, &c, name, owner, out, err);
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

/* A hold that is no longer ours: LKC_LOST when somebody holds the row now, else LKC_EXPIRED. */
static lkc_rc lkc_myt_gone(lkc_my_store *s, const char *name, lkc_err *err)
{
	lkc_myt_look_t look;
	lkc_rc rc = lkc_myt_look_aside(s, name, "NULL", &look, err);

	if (rc != LKC_OK) {
		return rc;
	}
	return look.state != 0 ? LKC_LOST : LKC_EXPIRED;
}

/* Lets the session give name up; 0 when it could not say, and was closed. */
static int lkc_myt_unname(lkc_my_store *s, lkc_my_conn **c, const char *name)
{
	char sql[128], wake[LKC_MY_NAME_LEN + 1];
	int64_t ok = 0;
	lkc_err ignored;

	if (!(*c)->named) {
		return 1;
	}
	lkc_err_clear(&ignored);
	lkc_myt_wake(wake, name);
	/*
	 * A session that may hold it (named 2: asked for within the take) gives up
	 * every name it holds, however often it got this one; it holds no other.
	 */
	if ((*c)->named == 2) {
		snprintf(sql, sizeof(sql), "SELECT RELEASE_ALL_LOCKS()");
	} else {
		snprintf(sql, sizeof(sql), "SELECT RELEASE_LOCK('%s')", wake);
	}
	if (lkc_my_int(s, c, sql, lkc_my_deadline(s), 0, &ok, &ignored) != LKC_OK || (ok != 1 && (*c)->named != 2)) {
		if (*c != NULL) {
			lkc_my_conn_drop(*c);
			*c = NULL;
		}
		return 0;
	}
	(*c)->named = 0;
	return 1;
}

/* Gives the hold's session back, holding nothing. */
static void lkc_myt_let_go(lkc_my_store *s, lkc_hold *hold, const char *name)
{
	lkc_my_conn *c = hold->session;

	hold->session = NULL;
	if (c != NULL && lkc_myt_unname(s, &c, name)) {
		lkc_my_put(s, c);
	}
}

/*
 * Runs sql for a held hold on its own session (a new one when it has none or
 * it broke); res as lkc_my_exec's. A session that broke under the statement
 * (killed by forceRelease(), a server restart) is replaced once: the row, not
 * the session, is the hold.
 */
static lkc_rc lkc_myt_hold_run(lkc_my_store *s, lkc_hold *hold, const char *sql, MYSQL_RES **res, lkc_err *err)
{
	for (;;) {
		lkc_my_conn *c = hold->session;
		int fresh = 0;
		lkc_rc rc;

		if (c != NULL && !lkc_my_reusable(c)) {
			lkc_my_conn_drop(c);
			c = NULL;
		}
		if (c == NULL) {
			if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
				hold->session = NULL;
				return rc;
			}
			c->named = 0;
			fresh = 1;
		}
		rc = lkc_myt_run(s, &c, sql, res, err);
		hold->session = c;
		/* A server that did not answer in the call's time gets no second statement. */
		if (rc != LKC_ERR_IO || fresh || (s->until != 0 && lkc_ms_left(s->until) == 0)) {
			return rc;
		}
	}
}

/*
 * One attempt at the row; *taken set. The session asks for the name first, so
 * that the row records a session that holds it; it keeps the name with the row.
 */
static lkc_rc lkc_myt_take(lkc_my_store *s, lkc_hold *hold, lkc_my_conn **c, const char *name, const char *owner,
	int64_t ttl_ms, int own, int *taken, lkc_err *err)
{
	char sql[2048], expiry[96], conn[128], wake[LKC_MY_NAME_LEN + 1];
	lkc_rc rc;

	*taken = 0;
	lkc_myt_wake(wake, name);
	/*
	 * The session asks for the name in the same statement (one round trip): the
	 * row records the session when it got the name. Whether it did is not
	 * answered, so the session may hold it (named 2) until it gives it up.
	 */
	snprintf(conn, sizeof(conn), "IF(GET_LOCK('%s', 0) = 1, CONNECTION_ID(), NULL)", wake);
	(*c)->named = 2;
	lkc_myt_expiry(expiry, sizeof(expiry), ttl_ms);
	/*
	 * The first assignment decides for all of them (@lkc_take): the row as the
	 * statement found it is free or expired (or, with own, the same owner's).
	 * A test repeated per assignment would see the row the earlier ones changed.
	 */
	snprintf(sql, sizeof(sql), "INSERT INTO `%s` (name, owner, expires_at, fence, conn)"
		" VALUES ('%s', %s, %s, LAST_INSERT_ID(" LKC_MYT_CLOCK_US "), %s) ON DUPLICATE KEY UPDATE"
		" fence = IF((@lkc_take := %s), LAST_INSERT_ID(fence + 1), fence),"
		" conn = IF(@lkc_take, VALUES(conn), conn),"
		" owner = IF(@lkc_take, VALUES(owner), owner),"
		" expires_at = IF(@lkc_take, VALUES(expires_at), expires_at)",
		s->table, name, owner, expiry, conn, own ? LKC_MYT_TAKES_OWN : LKC_MYT_TAKES);
	hold->granted_ns = lkc_now_ns();
	/*
	 * A take whose answer does not come in time (its row lock held by another
	 * transaction, a server that froze) may still take the row: its session is
	 * kept to be killed, and the hold is unsure until lkc_myt_settle gives back
	 * what it took.
	 */
	rc = lkc_myt_run_flags(s, c, sql, LKC_MY_PARK, NULL, err);
	if (rc == LKC_ERR_IO) {
		hold->unsure = 1;
	}
	if (rc == LKC_OK) {
		/* 1: inserted, 2: updated, 0: left as it was (held by another). */
		my_ulonglong n = mysql_affected_rows((*c)->my);

		*taken = n == 1 || n == 2;
		if (*taken) {
			hold->fence = (int64_t) mysql_insert_id((*c)->my);
		}
	}
	if (*c != NULL && !*taken) {
		lkc_myt_unname(s, c, name);
	}
	/* A deadlock the server broke is a row another took. */
	return rc == LKC_BUSY ? LKC_OK : rc;
}

/*
 * Waits, on *c, for a held row to change (see the top of the file): LKC_OK to
 * look again, LKC_BUSY when deadline (0: none) passed first.
 */
static lkc_rc lkc_myt_pause(lkc_my_store *s, lkc_my_conn **c, const char *name, const lkc_myt_look_t *look,
	uint64_t deadline, lkc_err *err)
{
	int64_t t = deadline != 0 ? lkc_ms_left(deadline) : LKC_WAIT_FOREVER;
	char sql[256], secs[32];

	if (deadline != 0 && t == 0) {
		return LKC_BUSY;
	}
	if (look->left_ms >= 0 && (t == LKC_WAIT_FOREVER || look->left_ms < t)) {
		t = look->left_ms;
	}
	if (!look->woken && (t == LKC_WAIT_FOREVER || t > LKC_MYT_RECHECK_MS)) {
		t = LKC_MYT_RECHECK_MS;
	}
	if (t == 0) {
		return LKC_OK;
	}
	if (look->woken) {
		char then[96], wake[LKC_MY_NAME_LEN + 1];
		int got = 0;

		/* Queued behind the holder's session, and gone again in the same statement. */
		lkc_myt_wake(wake, name);
		snprintf(then, sizeof(then), "RELEASE_LOCK('%s')", wake);
		return lkc_my_get_lock(s, c, wake, then, t, &got, err);
	}
	lkc_my_seconds(secs, sizeof(secs), t);
	snprintf(sql, sizeof(sql), "%sSELECT /*+ MAX_EXECUTION_TIME(0) */ SLEEP(%s)",
		(*c)->mariadb ? "SET STATEMENT max_statement_time = 0 FOR " : "", secs);
	return lkc_my_exec(s, c, sql, lkc_my_cap(s, lkc_my_deadline(s) + (uint64_t) t * 1000000u), LKC_MY_ABORTABLE, NULL, err);
}

static void lkc_myt_settle(lkc_store *store, lkc_hold *hold);

static lkc_rc lkc_myt_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	lkc_my_conn *c = NULL;
	lkc_rc rc;

	(void) mode;
	if (hold->mode != LKC_MODE_NONE) {
		/* Exclusive is the only mode: there is nothing to convert. */
		return LKC_OK;
	}
	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_owner(owner, hold);
	if (hold->unsure) {
		/* A row a failed take of ours may have left would keep this take out until its TTL. */
		lkc_myt_settle(store, hold);
		hold->unsure = 0;
	}
	if (hold->session != NULL) {
		/* Left by a hold that is gone: it may hold the name still. */
		lkc_my_conn_drop(hold->session);
		hold->session = NULL;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	c->named = 0;
	for (;;) {
		lkc_myt_look_t look;
		int taken = 0;

		/* Another process's hold under the same owner: a blocking acquire takes it as its own, as on Redis. */
		rc = lkc_myt_take(s, hold, &c, name, owner, ttl_ms, wait_ms != 0, &taken, err);
		if (rc == LKC_OK && taken) {
			hold->session = c;
			return LKC_OK;
		}
		if (rc != LKC_OK) {
			break;
		}
		if (wait_ms == 0) {
			rc = LKC_BUSY;
			break;
		}
		if ((rc = lkc_myt_look(s, &c, name, "NULL", &look, err)) != LKC_OK) {
			break;
		}
		if (look.state == 0) {
			/* Freed since the attempt. */
			continue;
		}
		if ((rc = lkc_myt_pause(s, &c, name, &look, deadline, err)) != LKC_OK) {
			break;
		}
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

/*
 * After the row was freed on the hold's session: when another session marks the
 * hold (marker, the row's conn: the process that took the hold still has its
 * Lock object, and this release came through restoreLock()), the waiters sleep
 * in GET_LOCK on a name that session never gives up. It is ended (KILL
 * CONNECTION, as forceRelease() does) while it still holds the name, which wakes
 * them; its process finds the hold gone. Best effort: a failure (no right to
 * kill the session) leaves the waiters to the hold's expiry, and the release
 * stands.
 */
static void lkc_myt_wake_all(lkc_my_store *s, lkc_hold *hold, const char *name, uint64_t marker)
{
	char sql[256], wake[LKC_MY_NAME_LEN + 1];
	lkc_my_conn *c = hold->session;
	int64_t alive = 0;
	lkc_err ignored;

	if (c == NULL || marker == 0 || marker == mysql_thread_id(c->my)) {
		/* Nobody marks it, or the hold's own session does: its release wakes them. */
		return;
	}
	lkc_err_clear(&ignored);
	lkc_myt_wake(wake, name);
	snprintf(sql, sizeof(sql), "SELECT IFNULL(IS_USED_LOCK('%s') = %" PRIu64 ", 0)", wake, marker);
	if (lkc_my_int(s, &c, sql, lkc_my_deadline(s), 0, &alive, &ignored) == LKC_OK && alive == 1) {
		snprintf(sql, sizeof(sql), "KILL CONNECTION %" PRIu64, marker);
		lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, NULL, &ignored);
	}
	hold->session = c;
}

/* Releases in this process so far: every LKC_MYT_SWEEP_EVERY-th sweeps. */
static unsigned lkc_myt_releases;

/*
 * Deletes up to LKC_MYT_SWEEP_MAX rows that have been free or expired for
 * LKC_MYT_SWEEP_AGE_S (see fence at the top), so that the table holds the
 * resources of the last hour, not every one ever locked. The rows are found by
 * a read that locks nothing, and each is deleted alone by its key, the age
 * asked again under its row lock: a row taken meanwhile stays, and no
 * statement locks more than one row. Best effort: a failure changes nothing
 * and is not reported (the next sweep tries again).
 */
static void lkc_myt_sweep(lkc_my_store *s)
{
	char sql[2048], names[LKC_MYT_SWEEP_MAX][LKC_MY_NAME_LEN + 1];
	unsigned n = 0;
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_my_conn *c = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	if (lkc_my_get(s, &c, &err) != LKC_OK) {
		return;
	}
	snprintf(sql, sizeof(sql), "SELECT name FROM `%s` WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND LIMIT %d",
		s->table, LKC_MYT_SWEEP_AGE_S, LKC_MYT_SWEEP_MAX);
	if (lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, &res, &err) == LKC_OK && res != NULL) {
		while (n < LKC_MYT_SWEEP_MAX && (row = mysql_fetch_row(res)) != NULL) {
			unsigned long *len = mysql_fetch_lengths(res);

			/* Our names only: lkc_my_name()'s 64 characters of [a-z0-9:]. */
			if (row[0] != NULL && len != NULL && len[0] == LKC_MY_NAME_LEN
				&& strspn(row[0], "abcdefghijklmnopqrstuvwxyz0123456789:") == LKC_MY_NAME_LEN) {
				memcpy(names[n], row[0], LKC_MY_NAME_LEN + 1);
				n++;
			}
		}
	}
	mysql_free_result(res);
	for (unsigned i = 0; i < n && c != NULL; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM `%s` WHERE name = '%s' AND expires_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND",
			s->table, names[i], LKC_MYT_SWEEP_AGE_S);
		if (lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, NULL, &err) != LKC_OK) {
			break;
		}
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
}

static lkc_rc lkc_myt_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	char sql[1536];
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_owner(owner, hold);
	/* The row's conn, the session that marks the hold, comes back as LAST_INSERT_ID (lkc_myt_wake_all). */
	if (delay_ms > 0) {
		/* Nobody's any more, and held until the delay ends. */
		snprintf(sql, sizeof(sql), "UPDATE `%s` SET conn = IF(LAST_INSERT_ID(IFNULL(conn, 0)) >= 0, NULL, NULL), owner = '',"
			" expires_at = TIMESTAMPADD(MICROSECOND, %" PRId64 ", UTC_TIMESTAMP(6))"
			" WHERE name = '%s' AND owner = %s AND " LKC_MYT_LIVE,
			s->table, (delay_ms > LKC_MYT_TTL_MAX_MS ? LKC_MYT_TTL_MAX_MS : delay_ms) * 1000, name, owner);
	} else {
		/* Free, since now: a sweep deletes it once it stayed free long enough. */
		snprintf(sql, sizeof(sql), "UPDATE `%s` SET conn = IF(LAST_INSERT_ID(IFNULL(conn, 0)) >= 0, NULL, NULL), owner = NULL,"
			" expires_at = UTC_TIMESTAMP(6) WHERE name = '%s' AND owner = %s AND " LKC_MYT_LIVE, s->table, name, owner);
	}
	if ((rc = lkc_myt_hold_run(s, hold, sql, NULL, err)) != LKC_OK) {
		return rc;
	}
	/* The row is free before the name is: a waiter GET_LOCK wakes finds it free. */
	if (mysql_affected_rows(((lkc_my_conn *) hold->session)->my) == 1) {
		lkc_myt_wake_all(s, hold, name, (uint64_t) mysql_insert_id(((lkc_my_conn *) hold->session)->my));
		lkc_myt_let_go(s, hold, name);
		if (__atomic_fetch_add(&lkc_myt_releases, 1, __ATOMIC_RELAXED) % LKC_MYT_SWEEP_EVERY == 0) {
			lkc_myt_sweep(s);
		}
		return LKC_OK;
	}
	lkc_myt_let_go(s, hold, name);
	return lkc_myt_gone(s, name, err);
}

/* Runs a statement for a held hold that answers at most one integer; *found whether it did. */
static lkc_rc lkc_myt_hold_int(lkc_my_store *s, lkc_hold *hold, const char *sql, int64_t *out, int *found, lkc_err *err)
{
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_rc rc;

	*found = 0;
	if ((rc = lkc_myt_hold_run(s, hold, sql, &res, err)) != LKC_OK) {
		return rc;
	}
	if (res == NULL || mysql_num_fields(res) < 1) {
		mysql_free_result(res);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "MySQL at %s: unexpected answer", s->endpoint);
	}
	if ((row = mysql_fetch_row(res)) != NULL && row[0] != NULL) {
		*found = 1;
		*out = strtoll(row[0], NULL, 10);
	}
	mysql_free_result(res);
	return LKC_OK;
}

/* Whether the hold is still ours, asked on its session; a hold found gone lets its session go. */
static lkc_rc lkc_myt_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	char sql[1536];
	int64_t state = 0;
	int found = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_owner(owner, hold);
	snprintf(sql, sizeof(sql), "SELECT IF(" LKC_MYT_LIVE ", IF(owner = %s, 1, 2), 0) FROM `%s` WHERE name = '%s'",
		owner, s->table, name);
	if ((rc = lkc_myt_hold_int(s, hold, sql, &state, &found, err)) != LKC_OK) {
		return rc;
	}
	if (found && state == 1) {
		return LKC_OK;
	}
	lkc_myt_let_go(s, hold, name);
	return found && state == 2 ? LKC_LOST : LKC_EXPIRED;
}

/* Parses "Rows matched: N" from the answer to an UPDATE: rows that matched, changed or not. */
static long lkc_myt_matched(MYSQL *my)
{
	const char *info = mysql_info(my);
	const char *at = info != NULL ? strstr(info, "matched:") : NULL;

	if (at == NULL) {
		return (long) mysql_affected_rows(my);
	}
	return strtol(at + strlen("matched:"), NULL, 10);
}

/*
 * Runs a refresh's UPDATE (sql) on a session of the twin s: the row's expiry
 * alone changes, and whatever else marks the hold stays its holder's (the
 * session in hold->session, the GET_LOCK name it holds, the row's conn), so
 * that its release still wakes the waiters. A row no longer ours and live is
 * never written: LKC_EXPIRED or LKC_LOST.
 */
static lkc_rc lkc_myt_refresh_aside(lkc_my_store *s, const char *name, const char *sql, lkc_err *err)
{
	lkc_my_conn *c;
	long matched;
	lkc_rc rc;

	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_myt_run(s, &c, sql, NULL, err);
	if (rc != LKC_OK) {
		if (c != NULL) {
			lkc_my_put(s, c);
		}
		return rc;
	}
	matched = lkc_myt_matched(c->my);
	lkc_my_put(s, c);
	return matched == 1 ? LKC_OK : lkc_myt_gone(s, name, err);
}

static lkc_rc lkc_myt_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	char sql[1536], expiry[96], wake[LKC_MY_NAME_LEN + 1];
	lkc_my_conn *c;
	int64_t got = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_owner(owner, hold);
	lkc_myt_expiry(expiry, sizeof(expiry), ttl_ms);
	snprintf(sql, sizeof(sql), "UPDATE `%s` SET expires_at = %s WHERE name = '%s' AND owner = %s AND " LKC_MYT_LIVE,
		s->table, expiry, name, owner);
	if (s->twin) {
		return lkc_myt_refresh_aside(s, name, sql, err);
	}
	if ((rc = lkc_myt_hold_run(s, hold, sql, NULL, err)) != LKC_OK) {
		return rc;
	}
	c = hold->session;
	if (lkc_myt_matched(c->my) != 1) {
		lkc_myt_let_go(s, hold, name);
		return lkc_myt_gone(s, name, err);
	}
	if (c->named) {
		return LKC_OK;
	}
	/*
	 * A restored hold, or one whose session broke: its session takes the name now
	 * when it can, so that waiters are woken by its release again.
	 */
	lkc_myt_wake(wake, name);
	snprintf(sql, sizeof(sql), "SELECT GET_LOCK('%s', 0)", wake);
	rc = lkc_my_int(s, &c, sql, lkc_my_deadline(s), 0, &got, err);
	hold->session = c;
	if (rc != LKC_OK || got != 1) {
		/* The hold is refreshed all the same: its waiters look again now and then. */
		lkc_err_clear(err);
		return LKC_OK;
	}
	c->named = 1;
	snprintf(sql, sizeof(sql), "UPDATE `%s` SET conn = %lu WHERE name = '%s' AND owner = %s",
		s->table, mysql_thread_id(c->my), name, owner);
	rc = lkc_myt_run(s, &c, sql, NULL, err);
	hold->session = c;
	if (rc != LKC_OK) {
		lkc_err_clear(err);
	}
	return LKC_OK;
}

static lkc_rc lkc_myt_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	lkc_myt_look_t look;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_myt_look_aside(s, name, "NULL", &look, err)) != LKC_OK) {
		return rc;
	}
	*locked = look.state != 0;
	return LKC_OK;
}

static lkc_rc lkc_myt_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	/*
	 * Frees the row, then ends the holder's session if it holds the name: waiters
	 * queued on that session wake, and find the row free.
	 */
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1], wake[LKC_MY_NAME_LEN + 1];
	char sql[512];
	lkc_my_conn *c;
	int64_t holder = 0;
	int found = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_wake(wake, name);
	snprintf(sql, sizeof(sql), "SELECT IFNULL(IF(IS_USED_LOCK('%s') = conn, conn, 0), 0) FROM `%s` WHERE name = '%s'",
		wake, s->table, name);
	rc = lkc_myt_row(s, &c, sql, &holder, 1, &found, err);
	if (rc == LKC_OK && found) {
		snprintf(sql, sizeof(sql), "UPDATE `%s` SET conn = NULL, owner = NULL, expires_at = UTC_TIMESTAMP(6) WHERE name = '%s'",
			s->table, name);
		rc = lkc_myt_run(s, &c, sql, NULL, err);
	}
	if (rc == LKC_OK && found && holder > 0) {
		snprintf(sql, sizeof(sql), "KILL CONNECTION %" PRId64, holder);
		rc = lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, NULL, err);
		if (rc == LKC_ERR_REFUSED && c != NULL && mysql_errno(c->my) == ER_NO_SUCH_THREAD) {
			/* It ended by itself meanwhile. */
			lkc_err_clear(err);
			rc = LKC_OK;
		}
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_myt_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	uint64_t deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	char name[LKC_MY_NAME_LEN + 1];
	lkc_my_conn *c;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	for (;;) {
		lkc_myt_look_t look;

		if ((rc = lkc_myt_look(s, &c, name, "NULL", &look, err)) != LKC_OK) {
			break;
		}
		if (look.state == 0) {
			break;
		}
		if (wait_ms == 0) {
			rc = LKC_BUSY;
			break;
		}
		if ((rc = lkc_myt_pause(s, &c, name, &look, deadline, err)) != LKC_OK) {
			break;
		}
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_myt_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	char sql[1536];
	int found = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_owner(owner, hold);
	snprintf(sql, sizeof(sql), "SELECT fence FROM `%s` WHERE name = '%s' AND owner = %s AND " LKC_MYT_LIVE,
		s->table, name, owner);
	if ((rc = lkc_myt_hold_int(s, hold, sql, fence, &found, err)) != LKC_OK) {
		return rc;
	}
	if (found) {
		return LKC_OK;
	}
	lkc_myt_let_go(s, hold, name);
	return lkc_myt_gone(s, name, err);
}

static void lkc_myt_settle(lkc_store *store, lkc_hold *hold)
{
	/*
	 * A take whose answer never came may have taken the row: its statement is
	 * killed (and waited for), then the row given back if it is ours.
	 */
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char owner[LKC_MYT_OWNER_SQL];
	char sql[1536];
	lkc_my_conn *c;
	lkc_err ignored;

	lkc_err_clear(&ignored);
	lkc_my_kill_strays(s);
	if (lkc_my_name_of(s, hold->resource, hold->resource_len, name, &ignored) != LKC_OK
		|| lkc_my_get(s, &c, &ignored) != LKC_OK) {
		return;
	}
	lkc_myt_owner(owner, hold);
	snprintf(sql, sizeof(sql), "UPDATE `%s` SET conn = NULL, owner = NULL, expires_at = UTC_TIMESTAMP(6)"
		" WHERE name = '%s' AND owner = %s AND " LKC_MYT_LIVE, s->table, name, owner);
	lkc_myt_run(s, &c, sql, NULL, &ignored);
	if (c != NULL) {
		lkc_my_put(s, c);
	}
}

static void lkc_myt_abandon(lkc_store *store, lkc_hold *hold)
{
	/* The row stays until its TTL or its owner's release; the session goes, quietly (only on our side in a child). */
	(void) store;
	lkc_my_conn_drop(hold->session);
	hold->session = NULL;
}

/* Adds the owner a row's HEX(owner) gives to out->owners; -1 when out of memory. */
static int lkc_myt_owner_seen(lkc_inspect *out, const char *hex)
{
	char owner[LKC_OWNER_MAX];
	size_t n = 0;

	for (; hex[0] != '\0' && hex[1] != '\0' && n < sizeof(owner); hex += 2) {
		char pair[3] = { hex[0], hex[1], '\0' };

		owner[n++] = (char) strtoul(pair, NULL, 16);
	}
	return lkc_inspect_owner(out, owner, n);
}

/*
 * The resource's row, in one statement: its owner while it is live (an empty
 * owner: a cooldown), the time left, its fencing token (the last take's), and
 * the session that marks the hold with GET_LOCK (unknown for a hold restored
 * elsewhere and not refreshed yet, or whose session ended). Waiters wait in
 * GET_LOCK or a sleep, which the server shows nobody: waiters and queue are
 * unknown.
 */
static lkc_rc lkc_myt_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1], wake[LKC_MY_NAME_LEN + 1];
	char sql[1536];
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_my_conn *c;
	lkc_rc rc;

	out->mode = LKC_SEEN_FREE;
	out->owners_known = out->holders_known = 1;
	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK || (rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	lkc_myt_wake(wake, name);
	snprintf(sql, sizeof(sql), "SELECT IF(" LKC_MYT_LIVE ", HEX(owner), NULL),"
		" IF(expires_at IS NULL, -1, GREATEST(CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) / 1000), 0)),"
		" fence, IF(" LKC_MYT_LIVE " AND IS_USED_LOCK('%s') = conn, conn, NULL) FROM `%s` WHERE name = '%s'",
		wake, s->table, name);
	rc = lkc_myt_run(s, &c, sql, &res, err);
	if (rc == LKC_OK && (res == NULL || mysql_num_fields(res) != 4)) {
		rc = lkc_err_set(err, LKC_ERR_PROTOCOL, "MySQL at %s: unexpected answer", s->endpoint);
	}
	if (rc == LKC_OK && (row = mysql_fetch_row(res)) != NULL) {
		out->fence = row[2] != NULL ? strtoll(row[2], NULL, 10) : -1;
		if (row[0] != NULL) {
			int64_t left = strtoll(row[1], NULL, 10);

			out->mode = row[0][0] != '\0' ? LKC_SEEN_WRITE : LKC_SEEN_COOLDOWN;
			out->ttl_ms = left < 0 ? LKC_TTL_NONE : left;
			if ((row[0][0] != '\0' && lkc_myt_owner_seen(out, row[0]) != 0)
				|| (row[3] != NULL && lkc_inspect_holder(out, strtoll(row[3], NULL, 10)) != 0)) {
				rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
			}
			/* A hold that no session marks (restored elsewhere, its session gone): its holder is unknown. */
			out->holders_known = row[0][0] == '\0' || row[3] != NULL;
		}
	}
	mysql_free_result(res);
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

const lkc_store_ops lkc_my_table_kind = {
	.name = "MySQL",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_FENCING,
	.acquire = lkc_myt_acquire,
	.release = lkc_myt_release,
	.refresh = lkc_myt_refresh,
	.check = lkc_myt_check,
	.is_locked = lkc_myt_is_locked,
	.force_release = lkc_myt_force_release,
	.abandon = lkc_myt_abandon,
	.destroy = lkc_my_destroy,
	.fence = lkc_myt_fence,
	.settle = lkc_myt_settle,
	.wait_free = lkc_myt_wait_free,
	.inspect = lkc_myt_inspect,
	.stats = &lkc_stats_of[LKC_KIND_MYSQL],
};
