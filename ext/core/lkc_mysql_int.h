/*
 * What the MySQL store's two kinds of hold share (lkc_mysql.c: connections,
 * statements, waits and session holds; lkc_mysql_table.c: holds in a table).
 * Internal to ext/core.
 */
#ifndef LKC_MYSQL_INT_H
#define LKC_MYSQL_INT_H

#include "lkc.h"

#include <mysql.h>

/* The GET_LOCK timeout of a wait without end (a year); the wait is asked again when it passes. */
#define LKC_MY_FOREVER_S 31536000
/* A lock name: the tag and 59 hex digits of SHA-256, 64 characters, GET_LOCK's limit on MySQL. */
#define LKC_MY_TAG "lock:"
#define LKC_MY_NAME_LEN 64

struct lkc_my_store;

/* One server session. */
typedef struct lkc_my_conn {
	MYSQL *my;
	pid_t pid;                   /* the process that opened it: a forked child never uses it */
	int mariadb;                 /* the server is MariaDB (else MySQL): how a wait lifts the statement time limit */
	int named;                   /* table holds: the session holds its hold's GET_LOCK name (1), may hold it (2) */
	struct lkc_my_conn *next;    /* in an idle list, or the store's strays */
	/*
	 * While a statement runs on it (lkc_my_exec), the connection is on the thread's
	 * list of busy ones, with its store: one a bailout left there is a stray.
	 */
	struct lkc_my_store *store;
	struct lkc_my_conn *busy_prev, *busy_next;
	int busy;
} lkc_my_conn;

/* lkc_my_exec's flags. */
#define LKC_MY_ABORTABLE 1       /* a signal the host wants handled ends the statement (KILL QUERY) */
#define LKC_MY_PARK 2            /* unanswered in time, the session is kept as a stray to be killed, not closed */

typedef struct lkc_my_store {
	lkc_store base;
	const lkc_store_ops *kind;   /* the operations of the kind of hold (session or table), under lkc_my_bounded's bound */
	char *host;                  /* TCP host, NULL for a socket */
	char *socket;                /* unix socket path, NULL for TCP */
	int port;
	char *user;
	char *password;
	char *dbname;
	char *endpoint;              /* "host:port" or the socket path, for messages */
	char *pool_key;              /* what a persistent connection must match to be reused (lkc_pool_key) */
	size_t pool_key_len;
	unsigned char *prefix;
	size_t prefix_len;
	int64_t timeout_ms;
	int persistent;
	char *table;                 /* table holds: the table's name (an identifier); NULL for session holds */
	lkc_my_conn *idle;
	unsigned nidle;
	/*
	 * Sessions left in the middle of a statement that may still run on the
	 * server (a take whose answer did not come in time): lkc_my_reap kills them.
	 */
	lkc_my_conn *strays;
	uint64_t until;              /* the deadline of the store call under way, 0 for none */
	/*
	 * Set on a twin (lkc_myb_twin), whose refresh extends rows that another
	 * store's sessions mark: hold->session, the GET_LOCK name and the row's conn
	 * stay that store's.
	 */
	int twin;
} lkc_my_store;

/* The operations of table holds (lkc_mysql_table.c), run under the store call's bound. */
extern const lkc_store_ops lkc_my_table_kind;

/* The deadline of a statement that does not wait for a lock: the timeout from now, within the call's. */
uint64_t lkc_my_deadline(const lkc_my_store *s);
/* A deadline, kept within the store call's. */
uint64_t lkc_my_cap(const lkc_my_store *s, uint64_t deadline);
/*
 * Ends, for real, every session of the store (NULL: of every store of this
 * thread) that was left mid-statement: a bailout's (still on the busy list) and
 * the strays. Each one still open is killed (KILL CONNECTION from another
 * session), and waited for until the server has ended it (within the timeout),
 * so that nothing it holds or waits for stays; then it is closed.
 */
void lkc_my_reap(lkc_my_store *s);
/* Kills the store's strays only (none of its busy sessions), within the call's bound. */
void lkc_my_kill_strays(lkc_my_store *s);
/* A session for one hold or one request: an idle one of the store or the process, or a new one. */
lkc_rc lkc_my_get(lkc_my_store *s, lkc_my_conn **out, lkc_err *err);
/* Gives a session that holds nothing back for reuse, or closes it. */
void lkc_my_put(lkc_my_store *s, lkc_my_conn *c);
/* Whether an idle connection can serve again: ours and silent. */
int lkc_my_reusable(const lkc_my_conn *c);
/* Ends a connection that is broken or in the middle of a call: the server frees what its session held. */
void lkc_my_conn_drop(lkc_my_conn *c);
/*
 * Runs one statement on *c; *out (when not NULL) gets its result set, NULL when
 * it has none, for the caller to free. A wait on the server is allowed until
 * deadline (0: none); with LKC_MY_ABORTABLE, a signal the host wants handled
 * sends KILL QUERY from another session and the answer is LKC_INTERRUPTED. On
 * LKC_ERR_IO and LKC_INTERRUPTED the connection is closed and *c cleared: a
 * session interrupted mid-statement is never reused, and its end frees
 * whatever it may have taken; with LKC_MY_PARK, one whose answer did not come
 * in time is kept among the store's strays instead, for lkc_my_reap to kill.
 * A server error leaves *c for mysql_errno().
 */
lkc_rc lkc_my_exec(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int flags,
	MYSQL_RES **out, lkc_err *err);
/* Runs a statement that answers one integer (or NULL, as -1) into *out, on *c. */
lkc_rc lkc_my_int(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int abortable,
	int64_t *out, lkc_err *err);
/* The lock name of a resource; LKC_ERR_SYSTEM when out of memory. */
lkc_rc lkc_my_name_of(const lkc_my_store *s, const char *resource, size_t len, char out[LKC_MY_NAME_LEN + 1],
	lkc_err *err);
/* The GET_LOCK timeout of a wait, in seconds with milliseconds. */
void lkc_my_seconds(char *out, size_t size, int64_t wait_ms);
/*
 * Takes name on the session *c with GET_LOCK, waiting up to wait_ms; *got set to
 * whether it did. With then, the statement answers then (an SQL expression) when
 * it got the name, 0 when not. A wait without end asks again each time GET_LOCK's
 * own runs out.
 */
lkc_rc lkc_my_get_lock(lkc_my_store *s, lkc_my_conn **c, const char *name, const char *then, int64_t wait_ms,
	int *got, lkc_err *err);
/* What the server says it is, for lkc_store_same (the server_id of either kind, bounded in lkc_mysql.c). */
lkc_rc lkc_my_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err);
/* Frees a store of either kind and its idle connections. */
void lkc_my_destroy(lkc_store *store);

#endif
