/*
 * What the PostgreSQL store's two modes share: the connection layer of
 * lkc_pgsql.c (sessions, pool, statements with deadlines and cancellable
 * waits), used by the session mode there and the table mode of
 * lkc_pgsql_table.c. Not part of the core's interface.
 */
#ifndef LKC_PGSQL_INT_H
#define LKC_PGSQL_INT_H

#include "lkc.h"

#include <libpq-fe.h>

/* Idle connections a store keeps for its next holds; more are closed. */
#define LKC_PG_IDLE_MAX 8
/* Idle connections the process keeps for persistent stores, across requests. */
#define LKC_PG_POOL_MAX 16

/* One server session. */
typedef struct lkc_pg_conn {
	PGconn *pg;
	pid_t pid;                   /* the process that opened it: a forked child never uses it */
	long backend;                /* the server's pg_backend_pid() its first reporting statement saw, 0 before */
	int64_t timeout_ms;          /* its store's timeout: what a cancel of its statement may take */
	int cancelled;               /* the statement under way was sent a cancel, or could not be */
	PGresult *keep;              /* the answer lkc_pg_exec keeps while the statement's later ones come */
	struct lkc_pg_conn *next;    /* in an idle list */
	/* In its store's list of connections lent out (s->out), while out_head is set. */
	struct lkc_pg_conn **out_head;
	struct lkc_pg_conn *out_prev;
	struct lkc_pg_conn *out_next;
} lkc_pg_conn;

/* The table mode's own state (lkc_pgsql_table.c). */
typedef struct lkc_pg_table lkc_pg_table;

typedef struct {
	lkc_store base;
	const char *keys[8];         /* libpq connection keywords, NULL-terminated */
	const char *values[8];
	char *host;                  /* owned strings the keywords point to */
	char *port;
	char *user;
	char *password;
	char *dbname;
	char *endpoint;              /* "host:port" or the socket directory, for messages */
	char *pool_key;              /* what a persistent connection must match to be reused (lkc_pool_key) */
	size_t pool_key_len;
	unsigned char *prefix;
	size_t prefix_len;
	int64_t timeout_ms;
	int persistent;
	lkc_pg_conn *idle;
	unsigned nidle;
	/*
	 * Connections lent out by lkc_pg_get and not yet put back or closed: a hold's
	 * session, a statement's. One a bailout left behind (a fatal error in a signal
	 * handler the host ran while we waited) is known here only: the store's end
	 * cancels what it still runs and closes it.
	 */
	lkc_pg_conn *out;
	int fencing_table;           /* the fencing table is known to exist */
	int timed_out;               /* the last statement got no answer in time (its connection was given up) */
	int session_changed;         /* the last statement ran on another server session (its connection was given up) */
	char sqlstate[6];            /* SQLSTATE of the last failed statement, "" when none */
	lkc_pg_table *table;         /* table mode: the holds' table; NULL in session mode */
} lkc_pg_store;

/*
 * Closes a connection; one of a parent process is let go of on our side only.
 * A statement still under way on it is cancelled first: the server would
 * otherwise run it to its end (a lock wait, granted later to nobody).
 */
void lkc_pg_conn_close(lkc_pg_conn *c);
/*
 * Waits until fd is ready for events or deadline passes: 1 ready, 0 timed out,
 * -1 failed, -2 interrupted (only when abortable).
 */
int lkc_pg_wait_fd(int fd, short events, uint64_t deadline, int abortable);
/* A session for one hold or one request: an idle one of the store or the process, or a new one. */
lkc_rc lkc_pg_get(lkc_pg_store *s, lkc_pg_conn **out, lkc_err *err);
/* Gives a session that holds nothing back for reuse, or closes it. */
void lkc_pg_put(lkc_pg_store *s, lkc_pg_conn *c);
/* Gives c back after a statement that answered rc, or closes it when it broke. */
void lkc_pg_done(lkc_pg_store *s, lkc_pg_conn *c, lkc_rc rc);
/*
 * Runs sql (several statements when nparams is 0) and sets *out to the last
 * statement's result; LKC_ERR_IO means the connection is broken, or the
 * statement timed out and was cancelled (the caller closes it). See lkc_pgsql.c.
 */
lkc_rc lkc_pg_exec(lkc_pg_store *s, lkc_pg_conn *c, const char *sql, int nparams,
	const char *const *params, uint64_t deadline, int abortable, PGresult **out, lkc_err *err);
/* The advisory key of a resource, as text for a statement's parameter. */
lkc_rc lkc_pg_key_text(const lkc_pg_store *s, const char *resource, size_t len, char out[24], lkc_err *err);
/* The store's server_id operation, for either mode. */
lkc_rc lkc_pg_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err);
/* Frees a store of either mode and everything it owns. */
void lkc_pg_destroy(lkc_store *store);

/* The deadline of a statement that does not wait for a lock. */
static inline uint64_t lkc_pg_deadline(const lkc_pg_store *s)
{
	return lkc_now_ns() + (uint64_t) s->timeout_ms * 1000000u;
}

/* The operations of table mode. */
extern const lkc_store_ops lkc_pg_table_ops;
/* Sets up table mode on s for the table named table (checked by lkc_pg_table_name_check). */
lkc_rc lkc_pg_table_setup(lkc_pg_store *s, const char *table, lkc_err *err);
/* Frees what lkc_pg_table_setup made; NULL is fine. */
void lkc_pg_table_free(lkc_pg_table *t);

#endif
