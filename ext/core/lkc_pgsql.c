/*
 * The PostgreSQL store: session advisory locks through libpq.
 *
 * A resource maps to one 64-bit advisory key (lkc_pg_key). Every hold has a
 * connection (a server session) of its own, taken from the store's idle
 * connections or opened, and kept while the hold lives; the session holds the
 * key exclusively (pg_advisory_lock) or shared (pg_advisory_lock_shared) and
 * gives the connection back idle, holding nothing, when released. Advisory
 * locks are re-entrant within a session, so two holds never share one: two
 * lock objects of one process then conflict on the server as two processes do.
 * The server frees a hold when its session ends: the process died, the
 * connection dropped, or forceRelease() ended the session.
 *
 * Blocking waits are the server's own lock queue: the statement waits, bounded
 * by lock_timeout set for its implicit transaction, and a signal that the host
 * wants handled cancels it (PQcancel). Every other statement is bounded by the
 * store's timeout on the client; a connection that misses it is closed.
 *
 * Fencing tokens come from a table, lock_fencing (key bigint primary key,
 * token bigint), created when missing: the holder's session increments the
 * key's row while it holds the key exclusively, so tokens strictly increase.
 *
 * Table mode (holds => 'table': rows with a TTL, lkc_pgsql_table.c) shares the
 * connection layer here: sessions, the pool, statements with deadlines.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lkc_pgsql_int.h"
#include "lkc_pool.h"


static const lkc_store_ops lkc_pg_ops;

/* Hash input of a key: the prefix's length (4 bytes, big-endian), the prefix, the resource. */
int lkc_pg_key(const char *prefix, size_t prefix_len, const char *resource, size_t len, int64_t *key)
{
	unsigned char d[32];
	unsigned char small[512];
	unsigned char *buf = small;
	size_t total = 4 + prefix_len + len;
	uint64_t k = 0;

	if (total > sizeof(small)) {
		buf = malloc(total);
	}
	if (buf == NULL) {
		return -1;
	}
	buf[0] = (unsigned char) (prefix_len >> 24);
	buf[1] = (unsigned char) (prefix_len >> 16);
	buf[2] = (unsigned char) (prefix_len >> 8);
	buf[3] = (unsigned char) prefix_len;
	if (prefix_len > 0) {
		memcpy(buf + 4, prefix, prefix_len);
	}
	memcpy(buf + 4 + prefix_len, resource, len);
	lkc_sha256(buf, total, d);
	if (buf != small) {
		free(buf);
	}
	for (int i = 0; i < 8; i++) {
		k = (k << 8) | d[i];
	}
	*key = (int64_t) k;
	return 0;
}

const char *lkc_pg_libpq_version(void)
{
	static char version[32];
	int v = PQlibVersion();

	snprintf(version, sizeof(version), "%d.%d", v / 10000, v % 10000);
	return version;
}

static void lkc_pg_quiet(void *arg, const char *message)
{
	/* Notices (such as "you don't own a lock") are the server talking to a console, not to us. */
	(void) arg;
	(void) message;
}

/*
 * PQcancel() within a deadline. It opens a connection of its own and waits for
 * the server to close it, with no bound of its own (a server that accepts and
 * never answers keeps it for ever): a thread of ours sends it, and the caller
 * waits for it no longer than it may. A thread still sending at the deadline is
 * left to finish: whichever of the two lets go of the job last frees it.
 */
typedef struct {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int refs;                  /* the caller and the thread, under mutex */
	int done;
	int ok;
	PGcancel *cancel;
} lkc_pg_cancel_job;

/* Drops one reference to job (its mutex held); the last frees it. */
static void lkc_pg_cancel_unref(lkc_pg_cancel_job *job)
{
	int last = --job->refs == 0;

	pthread_mutex_unlock(&job->mutex);
	if (last) {
		PQfreeCancel(job->cancel);
		pthread_cond_destroy(&job->cond);
		pthread_mutex_destroy(&job->mutex);
		free(job);
	}
}

static void *lkc_pg_cancel_thread(void *arg)
{
	lkc_pg_cancel_job *job = arg;
	char buf[256];
	int ok = PQcancel(job->cancel, buf, sizeof(buf));

	pthread_mutex_lock(&job->mutex);
	job->ok = ok;
	job->done = 1;
	pthread_cond_signal(&job->cond);
	lkc_pg_cancel_unref(job);
	return NULL;
}

/*
 * Asks the server to cancel the statement under way on c, waiting for the
 * request to be delivered until deadline at most: 1 delivered, 0 not. The
 * statement's answer still comes on c: it ends cancelled, or it finished first.
 */
static int lkc_pg_cancel(lkc_pg_conn *c, uint64_t deadline)
{
	pthread_condattr_t cattr;
	pthread_attr_t tattr;
	pthread_t thread;
	sigset_t all, caller;
	lkc_pg_cancel_job *job;
	int ok;

	c->cancelled = 1;
	job = calloc(1, sizeof(*job));
	if (job == NULL) {
		return 0;
	}
	job->cancel = PQgetCancel(c->pg);
	if (job->cancel == NULL) {
		free(job);
		return 0;
	}
	job->refs = 2;
	pthread_mutex_init(&job->mutex, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->cond, &cattr);
	pthread_condattr_destroy(&cattr);
	pthread_attr_init(&tattr);
	pthread_attr_setdetachstate(&tattr, PTHREAD_CREATE_DETACHED);
	/* The host's signals stay the caller's: the thread starts with them all blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &caller);
	ok = pthread_create(&thread, &tattr, lkc_pg_cancel_thread, job) == 0;
	pthread_sigmask(SIG_SETMASK, &caller, NULL);
	pthread_attr_destroy(&tattr);
	pthread_mutex_lock(&job->mutex);
	if (!ok) {
		/* No thread to spare: sent from here, unbounded, as PQcancel() alone would. */
		char buf[256];

		job->refs = 1;
		job->ok = PQcancel(job->cancel, buf, sizeof(buf));
		job->done = 1;
	}
	while (!job->done && lkc_now_ns() < deadline) {
		struct timespec ts;

		ts.tv_sec = (time_t) (deadline / 1000000000u);
		ts.tv_nsec = (long) (deadline % 1000000000u);
		pthread_cond_timedwait(&job->cond, &job->mutex, &ts);
	}
	ok = job->done && job->ok;
	lkc_pg_cancel_unref(job);
	return ok;
}

/* Takes c off its store's list of connections lent out, if it is on it. */
static void lkc_pg_unlend(lkc_pg_conn *c)
{
	if (c->out_head == NULL) {
		return;
	}
	if (c->out_prev != NULL) {
		c->out_prev->out_next = c->out_next;
	} else {
		*c->out_head = c->out_next;
	}
	if (c->out_next != NULL) {
		c->out_next->out_prev = c->out_prev;
	}
	c->out_head = NULL;
	c->out_prev = c->out_next = NULL;
}

/*
 * Closes a connection. One a parent process opened is closed on our side only:
 * its socket is pointed at /dev/null first, so that libpq's goodbye never reaches
 * the parent's session. A statement of ours still under way is cancelled first:
 * the server notices a closed connection only when it next talks to it, and
 * would run the statement on (a lock wait, granted later to a session nobody has).
 */
void lkc_pg_conn_close(lkc_pg_conn *c)
{
	if (c == NULL) {
		return;
	}
	lkc_pg_unlend(c);
	if (c->pid != lkc_pid()) {
		int fd = PQsocket(c->pg);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0 && null >= 0) {
			dup2(null, fd);
		}
		if (null >= 0) {
			close(null);
		}
	} else if (!c->cancelled && PQtransactionStatus(c->pg) == PQTRANS_ACTIVE) {
		lkc_pg_cancel(c, lkc_now_ns() + (uint64_t) c->timeout_ms * 1000000u);
	}
	PQclear(c->keep);
	PQfinish(c->pg);
	free(c);
}

/* The first line of libpq's error message, for ours. */
static void lkc_pg_first_line(char *out, size_t size, const char *msg)
{
	size_t n;

	if (msg == NULL || msg[0] == '\0') {
		msg = "unknown error";
	}
	n = strcspn(msg, "\n");
	if (n >= size) {
		n = size - 1;
	}
	memcpy(out, msg, n);
	out[n] = '\0';
}

/*
 * Waits until fd is ready for events or deadline passes: 1 ready, 0 timed out,
 * -1 failed, -2 interrupted (only when abortable; the host's verdict is asked
 * when a signal ends the poll).
 */
int lkc_pg_wait_fd(int fd, short events, uint64_t deadline, int abortable)
{
	/*
	 * A signal that came before this wait (during the connect, say) has no EINTR
	 * left to show for itself: the host is asked first, or the wait could outlive it unbounded.
	 */
	if (abortable && lkc_interrupted()) {
		return -2;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
		int64_t ms = lkc_ms_left(deadline);
		int n;

		if (ms == 0) {
			return poll(&pfd, 1, 0) > 0 ? 1 : 0;
		}
		n = poll(&pfd, 1, ms > 60000 ? 60000 : (int) ms);
		if (n > 0) {
			return 1;
		}
		if (n < 0) {
			if (errno != EINTR) {
				return -1;
			}
			if (abortable && lkc_interrupted()) {
				return -2;
			}
		}
	}
}

/*
 * Resolves the store's host name within deadline, for libpq's "hostaddr": the
 * addresses comma-separated into *addrs and the name repeated as many times into
 * *hosts (libpq's multi-host form, tried in order). Both stay NULL for a socket
 * directory or an address, which need no lookup.
 */
static lkc_rc lkc_pg_resolve(const lkc_pg_store *s, uint64_t deadline, char **hosts, char **addrs, lkc_err *err)
{
	struct addrinfo *res = NULL;
	size_t n = 0, host_len = strlen(s->host), addrs_len = 0, hosts_len = 0;
	char text[256];
	int rc;

	*hosts = NULL;
	*addrs = NULL;
	if (s->host[0] == '/') {
		return LKC_OK;
	}
	if (lkc_is_address(s->host)) {
		return LKC_OK;
	}
	rc = lkc_resolve(s->host, (int) strtol(s->port, NULL, 10), deadline, &res, text, sizeof(text));
	if (rc != 0) {
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot connect: %s", s->endpoint, text);
	}
	for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		n++;
	}
	if (n == 0) {
		freeaddrinfo(res);
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot connect: %s has no usable address",
			s->endpoint, s->host);
	}
	*addrs = malloc(n * (NI_MAXHOST + 1));
	*hosts = malloc(n * (host_len + 1));
	if (*addrs == NULL || *hosts == NULL) {
		freeaddrinfo(res);
		free(*addrs);
		free(*hosts);
		*addrs = *hosts = NULL;
		return lkc_err_set(err, LKC_ERR_SYSTEM, "PostgreSQL at %s: out of memory", s->endpoint);
	}
	for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		char addr[NI_MAXHOST];

		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0) {
			continue;
		}
		if (addrs_len > 0) {
			(*addrs)[addrs_len++] = ',';
			(*hosts)[hosts_len++] = ',';
		}
		memcpy(*addrs + addrs_len, addr, strlen(addr));
		addrs_len += strlen(addr);
		memcpy(*hosts + hosts_len, s->host, host_len);
		hosts_len += host_len;
	}
	freeaddrinfo(res);
	(*addrs)[addrs_len] = '\0';
	(*hosts)[hosts_len] = '\0';
	if (addrs_len == 0) {
		free(*addrs);
		free(*hosts);
		*addrs = *hosts = NULL;
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot connect: %s has no usable address",
			s->endpoint, s->host);
	}
	return LKC_OK;
}

/*
 * libpq names the server by its hostaddr when it has one: its message is given
 * back the host name, as libpq words it when it looked the name up itself
 * (connection to server at "NAME" (ADDRESS), ...).
 */
static void lkc_pg_named_line(char *line, size_t size, const char *host)
{
	static const char lead[] = "connection to server at \"";
	char copy[256];
	const char *addr, *end;

	if (strncmp(line, lead, sizeof(lead) - 1) != 0) {
		return;
	}
	snprintf(copy, sizeof(copy), "%s", line);
	addr = copy + sizeof(lead) - 1;
	end = strchr(addr, '"');
	if (end == NULL) {
		return;
	}
	snprintf(line, size, "%s%s\" (%.*s)%s", lead, host, (int) (end - addr), addr, end + 1);
}

/*
 * Opens a new session within the store's timeout. A host name is resolved first
 * within the same deadline: libpq's own lookup is a getaddrinfo() that nothing bounds.
 */
static lkc_rc lkc_pg_connect(lkc_pg_store *s, lkc_pg_conn **out, lkc_err *err)
{
	uint64_t deadline = lkc_now_ns() + (uint64_t) s->timeout_ms * 1000000u;
	const char *keys[sizeof(s->keys) / sizeof(s->keys[0]) + 1];
	const char *values[sizeof(s->keys) / sizeof(s->keys[0]) + 1];
	char *hosts, *addrs;
	PGconn *pg;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	char line[256];
	lkc_pg_conn *c;
	lkc_rc rc = lkc_pg_resolve(s, deadline, &hosts, &addrs, err);
	size_t n = 0;
	int resolved;

	if (rc != LKC_OK) {
		return rc;
	}
	for (; s->keys[n] != NULL; n++) {
		keys[n] = s->keys[n];
		/* The name stays libpq's host: it checks a server certificate and finds .pgpass entries by it. */
		values[n] = hosts != NULL && strcmp(s->keys[n], "host") == 0 ? hosts : s->values[n];
	}
	if (addrs != NULL) {
		keys[n] = "hostaddr";
		values[n++] = addrs;
	}
	keys[n] = NULL;
	values[n] = NULL;
	pg = PQconnectStartParams(keys, values, 0);
	resolved = addrs != NULL;
	free(hosts);
	free(addrs);
	if (pg == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "PostgreSQL at %s: out of memory", s->endpoint);
	}
	if (PQstatus(pg) == CONNECTION_BAD) {
		lkc_pg_first_line(line, sizeof(line), PQerrorMessage(pg));
		if (resolved) {
			lkc_pg_named_line(line, sizeof(line), s->host);
		}
		PQfinish(pg);
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot connect: %s", s->endpoint, line);
	}
	while (st != PGRES_POLLING_OK) {
		int ready;

		if (st == PGRES_POLLING_FAILED) {
			const char *msg = PQerrorMessage(pg);

			rc = LKC_ERR_IO;
			/* A server that answered and said no (password, database, role) refused; anything else is unreachable. */
			if (strstr(msg, "authentication failed") != NULL || strstr(msg, "does not exist") != NULL
				|| strstr(msg, "no pg_hba.conf entry") != NULL || strstr(msg, "permission denied") != NULL
				|| strstr(msg, "password") != NULL) {
				rc = LKC_ERR_REFUSED;
			}
			lkc_pg_first_line(line, sizeof(line), msg);
			if (resolved) {
				lkc_pg_named_line(line, sizeof(line), s->host);
			}
			PQfinish(pg);
			return lkc_err_set(err, rc, "PostgreSQL at %s: cannot connect: %s", s->endpoint, line);
		}
		ready = lkc_pg_wait_fd(PQsocket(pg), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline, 0);
		if (ready <= 0) {
			PQfinish(pg);
			if (ready == 0) {
				return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot connect: timed out after %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
			}
			return lkc_err_errno(err, LKC_ERR_IO, errno, "PostgreSQL at %s: cannot connect", s->endpoint);
		}
		st = PQconnectPoll(pg);
	}
	PQsetNoticeProcessor(pg, lkc_pg_quiet, NULL);
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		PQfinish(pg);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "PostgreSQL at %s: out of memory", s->endpoint);
	}
	c->pg = pg;
	c->pid = lkc_pid();
	c->timeout_ms = s->timeout_ms;
	*out = c;
	return LKC_OK;
}

/*
 * Whether an idle connection can serve again: ours, open, outside any transaction,
 * and silent. An idle session has nothing to say: anything to read is the server's
 * goodbye (a restart, pg_terminate_backend()) or the end of the stream.
 */
static int lkc_pg_reusable(const lkc_pg_conn *c)
{
	struct pollfd pfd;

	if (c->pid != lkc_pid() || PQstatus(c->pg) != CONNECTION_OK || PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
		return 0;
	}
	pfd.fd = PQsocket(c->pg);
	pfd.events = POLLIN;
	pfd.revents = 0;
	return pfd.fd >= 0 && poll(&pfd, 1, 0) == 0;
}

/* Closes a pooled session; lkc_pg_conn_close() leaves a parent's alone by itself. */
static void lkc_pg_unpool(void *c, int ours)
{
	(void) ours;
	lkc_pg_conn_close(c);
}

static int lkc_pg_reusable_any(void *c)
{
	return lkc_pg_reusable(c);
}

/* The process's idle sessions of persistent stores, each under its store's pool_key. */
static lkc_pool lkc_pg_pool = LKC_POOL_INIT(lkc_pg_reusable_any, lkc_pg_unpool, LKC_PG_POOL_MAX);

/* Puts c on s's list of connections lent out. */
static void lkc_pg_lend(lkc_pg_store *s, lkc_pg_conn *c)
{
	c->out_head = &s->out;
	c->out_prev = NULL;
	c->out_next = s->out;
	if (s->out != NULL) {
		s->out->out_prev = c;
	}
	s->out = c;
}

/* A session for one hold or one request: an idle one of the store or the process, or a new one. */
lkc_rc lkc_pg_get(lkc_pg_store *s, lkc_pg_conn **out, lkc_err *err)
{
	lkc_rc rc = LKC_OK;

	*out = NULL;
	while (s->idle != NULL) {
		lkc_pg_conn *c = s->idle;

		s->idle = c->next;
		s->nidle--;
		c->next = NULL;
		if (lkc_pg_reusable(c)) {
			*out = c;
			break;
		}
		lkc_pg_conn_close(c);
	}
	if (*out == NULL && s->persistent) {
		*out = lkc_pool_take(&lkc_pg_pool, s->pool_key, s->pool_key_len);
	}
	if (*out == NULL) {
		rc = lkc_pg_connect(s, out, err);
	}
	if (rc == LKC_OK) {
		(*out)->timeout_ms = s->timeout_ms;
		lkc_pg_lend(s, *out);
	}
	return rc;
}

/* Gives a session that holds nothing back for reuse, or closes it. */
void lkc_pg_put(lkc_pg_store *s, lkc_pg_conn *c)
{
	if (c == NULL) {
		return;
	}
	lkc_pg_unlend(c);
	if (!lkc_pg_reusable(c) || s->nidle >= LKC_PG_IDLE_MAX) {
		lkc_pg_conn_close(c);
		return;
	}
	c->next = s->idle;
	s->idle = c;
	s->nidle++;
}

/* Maps a failed statement's result to a code and message; the connection is closed when it is broken. */
static lkc_rc lkc_pg_result_error(lkc_pg_store *s, lkc_pg_conn *c, const PGresult *res, lkc_err *err)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	char line[256];

	if (msg == NULL || msg[0] == '\0') {
		msg = PQerrorMessage(c->pg);
	}
	lkc_pg_first_line(line, sizeof(line), msg);
	snprintf(s->sqlstate, sizeof(s->sqlstate), "%s", state != NULL ? state : "");
	/* lock_timeout ended the wait; or the server broke a deadlock by failing this wait, and the other one goes on. */
	if (state != NULL && (strcmp(state, "55P03") == 0 || strcmp(state, "40P01") == 0)) {
		return LKC_BUSY;
	}
	if (PQstatus(c->pg) != CONNECTION_OK || state == NULL || strncmp(state, "08", 2) == 0
		|| strncmp(state, "57P", 3) == 0) {
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: connection lost: %s", s->endpoint, line);
	}
	if (strcmp(state, "42501") == 0) {
		return lkc_err_set(err, LKC_ERR_PERM, "PostgreSQL at %s: %s", s->endpoint, line);
	}
	return lkc_err_set(err, LKC_ERR_REFUSED, "PostgreSQL at %s: %s", s->endpoint, line);
}

/*
 * Runs sql (several statements when nparams is 0) and sets *out to the last
 * statement's result, or to the first failed one's. A wait on the server is
 * allowed until deadline; when abortable, a signal the host wants handled
 * cancels the statement and the answer is LKC_INTERRUPTED unless the statement
 * finished first. A statement still running at deadline is cancelled too, and
 * its end awaited (one more store timeout at most) before the answer is a
 * timeout: what it did is then done, and whatever the caller does next to
 * settle it (a clean-up, a check) comes after it, not before. LKC_ERR_IO means
 * the connection is broken or timed out (the caller closes it).
 */
lkc_rc lkc_pg_exec(lkc_pg_store *s, lkc_pg_conn *c, const char *sql, int nparams,
	const char *const *params, uint64_t deadline, int abortable, PGresult **out, lkc_err *err)
{
	PGresult *keep;
	PGresult *res;
	int interrupted = 0;
	int late = 0;
	int sent;

	*out = NULL;
	s->timed_out = 0;
	s->session_changed = 0;
	s->sqlstate[0] = '\0';
	c->cancelled = 0;
	PQclear(c->keep);
	c->keep = NULL;
	sent = nparams > 0 ? PQsendQueryParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0) : PQsendQuery(c->pg, sql);
	if (!sent) {
		char line[256];

		lkc_pg_first_line(line, sizeof(line), PQerrorMessage(c->pg));
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: connection lost: %s", s->endpoint, line);
	}
	/*
	 * The answers gathered so far live in c, not here: a bailout out of the wait
	 * (a fatal error in a signal handler) leaves them to lkc_pg_conn_close().
	 */
	for (;;) {
		while (PQisBusy(c->pg)) {
			int ready = lkc_pg_wait_fd(PQsocket(c->pg), POLLIN, deadline, abortable && !c->cancelled);

			if (ready == -2) {
				/* The answer still comes: the statement ends cancelled, or it finished first. */
				interrupted = 1;
				/* The cancel and the answer share one more timeout. */
				deadline = lkc_pg_deadline(s);
				if (!lkc_pg_cancel(c, deadline)) {
					return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: cannot cancel a wait", s->endpoint);
				}
				continue;
			}
			if (ready == 0) {
				if (!c->cancelled) {
					/* Until the statement ends, what it does is not known: it is cancelled, and its end awaited. */
					late = 1;
					deadline = lkc_pg_deadline(s);
					if (lkc_pg_cancel(c, deadline)) {
						continue;
					}
				}
				s->timed_out = 1;
				return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: no answer within %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
			}
			if (ready < 0 || !PQconsumeInput(c->pg)) {
				char line[256];

				lkc_pg_first_line(line, sizeof(line), PQerrorMessage(c->pg));
				return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: connection lost: %s", s->endpoint, line);
			}
		}
		res = PQgetResult(c->pg);
		if (res == NULL) {
			break;
		}
		if (c->keep != NULL && PQresultStatus(c->keep) == PGRES_FATAL_ERROR) {
			/* The first failure is the answer: what follows it was skipped. */
			PQclear(res);
			continue;
		}
		PQclear(c->keep);
		c->keep = res;
	}
	keep = c->keep;
	c->keep = NULL;
	if (late) {
		/* It ended, cancelled or done: the caller learns it timed out, and settles what it may have done. */
		PQclear(keep);
		s->timed_out = 1;
		return lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: no answer within %" PRId64 " ms",
			s->endpoint, s->timeout_ms);
	}
	if (keep == NULL) {
		return lkc_pg_result_error(s, c, NULL, err);
	}
	if (PQresultStatus(keep) == PGRES_FATAL_ERROR) {
		const char *state = PQresultErrorField(keep, PG_DIAG_SQLSTATE);
		lkc_rc rc;

		if (interrupted && state != NULL && strcmp(state, "57014") == 0) {
			PQclear(keep);
			return LKC_INTERRUPTED;
		}
		rc = lkc_pg_result_error(s, c, keep, err);
		PQclear(keep);
		return rc;
	}
	if (PQresultStatus(keep) != PGRES_TUPLES_OK && PQresultStatus(keep) != PGRES_COMMAND_OK) {
		PQclear(keep);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
	}
	*out = keep;
	return LKC_OK;
}

/*
 * The server session (pg_backend_pid()) a statement reports in its column
 * "backend" is the one the connection's first report named: a pooler in
 * transaction or statement mode shows as another one, and a session lock
 * cannot be kept through it. 0 when it is, or when res reports none.
 */
static int lkc_pg_session_changed(lkc_pg_store *s, lkc_pg_conn *c, const PGresult *res, lkc_err *err)
{
	int col = PQfnumber(res, "backend");
	long backend;

	if (col < 0 || PQntuples(res) != 1 || PQgetisnull(res, 0, col)) {
		return 0;
	}
	backend = strtol(PQgetvalue(res, 0, col), NULL, 10);
	if (c->backend == 0 || c->backend == backend) {
		c->backend = backend;
		return 0;
	}
	s->session_changed = 1;
	lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: the server session changed between two statements (pid %ld,"
		" then %ld): a pooler in transaction or statement mode (PgBouncer pool_mode=transaction) sits between"
		" the store and PostgreSQL, and session locks need session mode", s->endpoint, c->backend, backend);
	return 1;
}

/*
 * Runs a statement that answers one boolean into *yes. On LKC_ERR_IO the
 * connection is closed and *c cleared; so it is when the statement ran on
 * another server session than the connection's (lkc_pg_session_changed).
 */
static lkc_rc lkc_pg_bool(lkc_pg_store *s, lkc_pg_conn **c, const char *sql, int nparams, const char *const *params,
	uint64_t deadline, int abortable, int *yes, lkc_err *err)
{
	PGresult *res;
	lkc_rc rc = lkc_pg_exec(s, *c, sql, nparams, params, deadline, abortable, &res, err);

	if (rc == LKC_OK && lkc_pg_session_changed(s, *c, res, err)) {
		PQclear(res);
		rc = LKC_ERR_IO;
	}
	if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(*c);
		*c = NULL;
		return rc;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	if (PQntuples(res) != 1 || PQnfields(res) < 1) {
		PQclear(res);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
	}
	*yes = PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	return LKC_OK;
}

void lkc_pg_done(lkc_pg_store *s, lkc_pg_conn *c, lkc_rc rc)
{
	if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(c);
	} else {
		lkc_pg_put(s, c);
	}
}

/* The advisory key of a resource, as text for a statement's parameter. */
lkc_rc lkc_pg_key_text(const lkc_pg_store *s, const char *resource, size_t len, char out[24], lkc_err *err)
{
	int64_t key;

	if (lkc_pg_key((const char *) s->prefix, s->prefix_len, resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	snprintf(out, 24, "%" PRId64, key);
	return LKC_OK;
}

/* The key's two halves as pg_locks shows them (classid, objid), as text. */
static void lkc_pg_key_halves(const char *key_text, char hi[12], char lo[12])
{
	uint64_t k = (uint64_t) strtoll(key_text, NULL, 10);

	snprintf(hi, 12, "%" PRIu32, (uint32_t) (k >> 32));
	snprintf(lo, 12, "%" PRIu32, (uint32_t) k);
}

/* Whether anybody holds the key, asked on a session of its own; *locked set. */
static lkc_rc lkc_pg_locked(lkc_pg_store *s, const char *key, int *locked, lkc_err *err)
{
	static const char sql[] =
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory'"
		" AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
		" AND classid = $1::oid AND objid = $2::oid AND objsubid = 1 AND granted)";
	char hi[12], lo[12];
	const char *params[2] = { hi, lo };
	lkc_pg_conn *c;
	lkc_rc rc;

	lkc_pg_key_halves(key, hi, lo);
	if ((rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_pg_bool(s, &c, sql, 2, params, lkc_pg_deadline(s), 0, locked, err);
	lkc_pg_put(s, c);
	return rc;
}

/* A hold whose session is gone: LKC_LOST when somebody holds the key now, else LKC_EXPIRED. */
static lkc_rc lkc_pg_gone(lkc_pg_store *s, lkc_hold *hold, lkc_err *err)
{
	char key[24];
	int locked = 0;
	lkc_rc rc;

	if ((s->timed_out || s->session_changed) && err->code == LKC_ERR_IO) {
		/*
		 * We gave the session up ourselves, for want of an answer or because a pooler
		 * moved us to another one: the server may still show it as the holder. That
		 * is a failure to report, not a loss.
		 */
		s->timed_out = 0;
		s->session_changed = 0;
		return LKC_ERR_IO;
	}

	if ((rc = lkc_pg_key_text(s, hold->resource, hold->resource_len, key, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_pg_locked(s, key, &locked, err);
	if (rc != LKC_OK) {
		return rc;
	}
	return locked ? LKC_LOST : LKC_EXPIRED;
}

/*
 * What a statement on a hold's session adds to its answer: the server session
 * it ran on, so that a transaction-mode pooler shows (lkc_pg_session_changed).
 */
#define LKC_PG_BACKEND ", pg_catalog.pg_backend_pid() AS backend"

/* Lock statements: [mode][blocking]. The blocking ones carry their bound in a SET LOCAL before them. */
static const char *const lkc_pg_take_sql[3][2] = {
	[LKC_MODE_EXCLUSIVE] = {
		"SELECT pg_catalog.pg_try_advisory_lock($1::int8)" LKC_PG_BACKEND,
		"SELECT pg_catalog.pg_advisory_lock(%s)" LKC_PG_BACKEND },
	[LKC_MODE_SHARED] = {
		"SELECT pg_catalog.pg_try_advisory_lock_shared($1::int8)" LKC_PG_BACKEND,
		"SELECT pg_catalog.pg_advisory_lock_shared(%s)" LKC_PG_BACKEND },
};

/* Converting a hold in one statement: take the new mode, then give up the old one. */
static const char *const lkc_pg_convert_sql[3][2] = {
	[LKC_MODE_EXCLUSIVE] = {
		"SELECT CASE WHEN pg_catalog.pg_try_advisory_lock($1::int8) THEN pg_catalog.pg_advisory_unlock_shared($1::int8) ELSE false END"
			LKC_PG_BACKEND,
		"SELECT pg_catalog.pg_advisory_lock(%s); SELECT pg_catalog.pg_advisory_unlock_shared(%s)" LKC_PG_BACKEND },
	[LKC_MODE_SHARED] = {
		"SELECT CASE WHEN pg_catalog.pg_try_advisory_lock_shared($1::int8) THEN pg_catalog.pg_advisory_unlock($1::int8) ELSE false END"
			LKC_PG_BACKEND,
		"SELECT pg_catalog.pg_advisory_lock_shared(%s); SELECT pg_catalog.pg_advisory_unlock(%s)" LKC_PG_BACKEND },
};

/* The bound of a blocking statement: lock_timeout in its own transaction (0 waits forever). */
static void lkc_pg_bound(char *out, size_t size, int64_t wait_ms)
{
	if (wait_ms == LKC_WAIT_FOREVER || wait_ms > INT_MAX) {
		wait_ms = 0;
	}
	/* A role's or database's own statement_timeout must not cut a wait we were asked to make. */
	snprintf(out, size, "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = %" PRId64 "; ", wait_ms);
}

/* Sets *ex and *sh to whether the session holds the key exclusively and shared. */
static lkc_rc lkc_pg_modes(lkc_pg_store *s, lkc_pg_conn **c, const char *key, int *ex, int *sh, lkc_err *err)
{
	static const char sql[] =
		"SELECT coalesce(pg_catalog.bool_or(mode = 'ExclusiveLock'), false),"
		" coalesce(pg_catalog.bool_or(mode = 'ShareLock'), false) FROM pg_catalog.pg_locks"
		" WHERE locktype = 'advisory' AND pid = pg_catalog.pg_backend_pid()"
		" AND classid = $1::oid AND objid = $2::oid AND objsubid = 1 AND granted";
	char hi[12], lo[12];
	const char *params[2] = { hi, lo };
	PGresult *res;
	lkc_rc rc;

	lkc_pg_key_halves(key, hi, lo);
	rc = lkc_pg_exec(s, *c, sql, 2, params, lkc_pg_deadline(s), 0, &res, err);
	if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(*c);
		*c = NULL;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	*ex = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
	*sh = PQntuples(res) == 1 && PQgetvalue(res, 0, 1)[0] == 't';
	PQclear(res);
	return LKC_OK;
}

/*
 * Finishes a conversion to mode that was cancelled or failed (answer rc) after it
 * may have taken the new mode: the hold ends up in exactly one mode, the new one
 * (LKC_OK) or the old one (rc).
 */
static lkc_rc lkc_pg_settle_conversion(lkc_pg_store *s, lkc_hold *hold, lkc_mode mode, const char *key,
	lkc_rc rc, lkc_err *err)
{
	lkc_pg_conn *c = hold->session;
	const char *params[1] = { key };
	lkc_err ignored;
	int ex = 0, sh = 0, yes = 0;
	int has_new, has_old;

	lkc_err_clear(&ignored);
	if (lkc_pg_modes(s, &c, key, &ex, &sh, &ignored) != LKC_OK) {
		if (c == NULL) {
			hold->session = NULL;
			return lkc_pg_gone(s, hold, err);
		}
		return rc;
	}
	has_new = mode == LKC_MODE_EXCLUSIVE ? ex : sh;
	has_old = mode == LKC_MODE_EXCLUSIVE ? sh : ex;
	if (has_new && has_old) {
		/* The new mode was taken and the old one not yet given up: give it up now. */
		if (lkc_pg_bool(s, &c, mode == LKC_MODE_EXCLUSIVE ? "SELECT pg_catalog.pg_advisory_unlock_shared($1::int8)"
			: "SELECT pg_catalog.pg_advisory_unlock($1::int8)", 1, params, lkc_pg_deadline(s), 0, &yes, &ignored) != LKC_OK) {
			hold->session = c;
			return c == NULL ? lkc_pg_gone(s, hold, err) : rc;
		}
		return LKC_OK;
	}
	if (has_new) {
		return LKC_OK;
	}
	if (!has_old) {
		/* The session holds nothing of the key any more. */
		lkc_pg_conn_close(c);
		hold->session = NULL;
		return lkc_pg_gone(s, hold, err);
	}
	return rc;
}

static lkc_rc lkc_pg_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_pg_store *s = (lkc_pg_store *) store;
	lkc_pg_conn *c = hold->session;
	int converting = hold->mode != LKC_MODE_NONE;
	char key[24];
	const char *params[1] = { key };
	uint64_t deadline;
	int yes = 0;
	lkc_rc rc;

	(void) ttl_ms;
	if (converting && hold->mode == mode) {
		return LKC_OK;
	}
	if (converting && c == NULL) {
		/* The session of the hold is gone: nothing to convert. */
		return lkc_pg_gone(s, hold, err);
	}
	if ((rc = lkc_pg_key_text(s, hold->resource, hold->resource_len, key, err)) != LKC_OK) {
		return rc;
	}
	if (!converting && (rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	if (wait_ms == 0) {
		const char *sql = converting ? lkc_pg_convert_sql[mode][0] : lkc_pg_take_sql[mode][0];

		rc = lkc_pg_bool(s, &c, sql, 1, params, lkc_pg_deadline(s), 0, &yes, err);
	} else {
		char sql[512];
		size_t used;

		lkc_pg_bound(sql, sizeof(sql), wait_ms);
		used = strlen(sql);
		snprintf(sql + used, sizeof(sql) - used, converting ? lkc_pg_convert_sql[mode][1] : lkc_pg_take_sql[mode][1],
			key, key);
		/* The server ends the wait at lock_timeout; the client allows one more timeout for the answer. */
		deadline = wait_ms == LKC_WAIT_FOREVER ? 0 : lkc_pg_deadline(s) + (uint64_t) wait_ms * 1000000u;
		rc = lkc_pg_bool(s, &c, sql, 0, NULL, deadline, 1, &yes, err);
		if (rc == LKC_OK) {
			/* The last statement answered: a conversion gave up its old mode, a take took. */
			yes = 1;
		}
	}
	if (converting) {
		if (c == NULL) {
			/* The connection broke: the hold went with its session. */
			hold->session = NULL;
			return lkc_pg_gone(s, hold, err);
		}
		if (rc == LKC_OK) {
			return yes ? LKC_OK : LKC_BUSY;
		}
		if (rc == LKC_BUSY) {
			/* The take failed first: the transaction skipped the rest, and the old mode is held as it was. */
			return rc;
		}
		/* Cancelled or failed somewhere: what the session holds now says how far it got. */
		return lkc_pg_settle_conversion(s, hold, mode, key, rc, err);
	}
	if (rc == LKC_OK && yes) {
		hold->session = c;
		return LKC_OK;
	}
	if (rc == LKC_OK) {
		rc = LKC_BUSY;
	}
	if (rc == LKC_BUSY) {
		lkc_pg_put(s, c);
	} else {
		/*
		 * Cancelled or failed: the session may have taken the key just before.
		 * Ending it frees whatever it holds.
		 */
		lkc_pg_conn_close(c);
	}
	return rc;
}

static lkc_rc lkc_pg_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_pg_store *s = (lkc_pg_store *) store;
	lkc_pg_conn *c = hold->session;
	char key[24];
	const char *params[1] = { key };
	int yes = 0;
	lkc_rc rc;

	(void) delay_ms;
	if (c == NULL) {
		return lkc_pg_gone(s, hold, err);
	}
	if ((rc = lkc_pg_key_text(s, hold->resource, hold->resource_len, key, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_pg_bool(s, &c, hold->mode == LKC_MODE_SHARED
		? "SELECT pg_catalog.pg_advisory_unlock_shared($1::int8)" LKC_PG_BACKEND
		: "SELECT pg_catalog.pg_advisory_unlock($1::int8)" LKC_PG_BACKEND,
		1, params, lkc_pg_deadline(s), 0, &yes, err);
	if (rc == LKC_OK && yes) {
		hold->session = NULL;
		lkc_pg_put(s, c);
		return LKC_OK;
	}
	/* The session no longer held it, or cannot say: it ends, and with it whatever it held. */
	lkc_pg_conn_close(c);
	hold->session = NULL;
	if (rc != LKC_OK && rc != LKC_ERR_IO) {
		return rc;
	}
	return lkc_pg_gone(s, hold, err);
}

/* Whether the hold's session still holds its key in the hold's mode. */
static lkc_rc lkc_pg_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	static const char sql[] =
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory'"
		" AND pid = pg_catalog.pg_backend_pid() AND classid = $1::oid AND objid = $2::oid AND objsubid = 1"
		" AND mode = $3 AND granted)" LKC_PG_BACKEND;
	lkc_pg_store *s = (lkc_pg_store *) store;
	lkc_pg_conn *c = hold->session;
	char key[24], hi[12], lo[12];
	const char *params[3] = { hi, lo, hold->mode == LKC_MODE_SHARED ? "ShareLock" : "ExclusiveLock" };
	int yes = 0;
	lkc_rc rc;

	if (c == NULL) {
		return lkc_pg_gone(s, hold, err);
	}
	if ((rc = lkc_pg_key_text(s, hold->resource, hold->resource_len, key, err)) != LKC_OK) {
		return rc;
	}
	lkc_pg_key_halves(key, hi, lo);
	rc = lkc_pg_bool(s, &c, sql, 3, params, lkc_pg_deadline(s), 0, &yes, err);
	if (rc == LKC_OK && yes) {
		return LKC_OK;
	}
	if (rc == LKC_OK || rc == LKC_ERR_IO) {
		/* The session is gone (the connection dropped, or was ended by forceRelease()), or holds nothing. */
		lkc_pg_conn_close(c);
		hold->session = NULL;
		return lkc_pg_gone(s, hold, err);
	}
	return rc;
}

static lkc_rc lkc_pg_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	/* Session holds have no TTL: refreshing checks that the hold is still ours. */
	(void) ttl_ms;
	return lkc_pg_check(store, hold, err);
}

static lkc_rc lkc_pg_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_pg_store *s = (lkc_pg_store *) store;
	char key[24];
	lkc_rc rc;

	if ((rc = lkc_pg_key_text(s, resource, len, key, err)) != LKC_OK) {
		return rc;
	}
	return lkc_pg_locked(s, key, locked, err);
}

static lkc_rc lkc_pg_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	/* Ends the sessions that hold the key, and waits (up to the timeout) until they are gone. */
	static const char sql[] =
		"SELECT pg_catalog.bool_and(pg_catalog.pg_terminate_backend(pid, $3::int8)) FROM pg_catalog.pg_locks"
		" WHERE locktype = 'advisory'"
		" AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
		" AND classid = $1::oid AND objid = $2::oid AND objsubid = 1 AND granted AND pid <> pg_catalog.pg_backend_pid()";
	lkc_pg_store *s = (lkc_pg_store *) store;
	char key[24], hi[12], lo[12], wait[24];
	const char *params[3] = { hi, lo, wait };
	lkc_pg_conn *c;
	PGresult *res;
	lkc_rc rc;

	if ((rc = lkc_pg_key_text(s, resource, len, key, err)) != LKC_OK) {
		return rc;
	}
	lkc_pg_key_halves(key, hi, lo);
	snprintf(wait, sizeof(wait), "%" PRId64, s->timeout_ms);
	if ((rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_pg_exec(s, c, sql, 3, params, lkc_pg_deadline(s) + (uint64_t) s->timeout_ms * 1000000u, 0, &res, err);
	if (rc == LKC_OK) {
		int ended = PQntuples(res) != 1 || PQgetisnull(res, 0, 0) || PQgetvalue(res, 0, 0)[0] == 't';

		PQclear(res);
		if (!ended) {
			rc = lkc_err_set(err, LKC_ERR_IO, "PostgreSQL at %s: a session holding the lock did not end within %" PRId64 " ms",
				s->endpoint, s->timeout_ms);
		}
		lkc_pg_put(s, c);
	} else if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(c);
	} else {
		lkc_pg_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_pg_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	/*
	 * Queued as an exclusive waiter, woken by the release, and let go in the same
	 * transaction: it passes no earlier waiter and holds the key for no longer
	 * than that one statement takes.
	 */
	lkc_pg_store *s = (lkc_pg_store *) store;
	char key[24], sql[512];
	size_t used;
	lkc_pg_conn *c;
	int yes = 0;
	lkc_rc rc;

	if ((rc = lkc_pg_key_text(s, resource, len, key, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	if (wait_ms == 0) {
		/* One look: a try that takes and lets go in one statement. */
		snprintf(sql, sizeof(sql), "SELECT pg_catalog.pg_try_advisory_lock(%s) AND pg_catalog.pg_advisory_unlock(%s)", key, key);
		rc = lkc_pg_bool(s, &c, sql, 0, NULL, lkc_pg_deadline(s), 0, &yes, err);
	} else {
		lkc_pg_bound(sql, sizeof(sql), wait_ms);
		used = strlen(sql);
		snprintf(sql + used, sizeof(sql) - used,
			"SELECT pg_catalog.pg_advisory_lock(%s); SELECT pg_catalog.pg_advisory_unlock(%s)", key, key);
		rc = lkc_pg_bool(s, &c, sql, 0, NULL,
			wait_ms == LKC_WAIT_FOREVER ? 0 : lkc_pg_deadline(s) + (uint64_t) wait_ms * 1000000u, 1, &yes, err);
	}
	if (rc == LKC_OK && !yes) {
		rc = LKC_BUSY;
	}
	if (c != NULL) {
		/* A cancelled wait may have taken the key just before: ending the session frees it. */
		if (rc == LKC_OK || rc == LKC_BUSY) {
			lkc_pg_put(s, c);
		} else {
			lkc_pg_conn_close(c);
		}
	}
	return rc;
}

/* Creates the fencing table when it is missing; a concurrent creator is no failure. */
static lkc_rc lkc_pg_fencing_table(lkc_pg_store *s, lkc_pg_conn *c, lkc_err *err)
{
	static const char sql[] =
		"CREATE TABLE IF NOT EXISTS lock_fencing (key bigint PRIMARY KEY, token bigint NOT NULL)";
	PGresult *res;
	lkc_rc rc = lkc_pg_exec(s, c, sql, 0, NULL, lkc_pg_deadline(s), 0, &res, err);

	if (rc == LKC_OK) {
		PQclear(res);
		s->fencing_table = 1;
	} else if (rc == LKC_ERR_REFUSED) {
		/* Two first creators at once: one of them meets the other's catalog row, and the table exists. */
		rc = LKC_OK;
	}
	return rc;
}

static lkc_rc lkc_pg_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	static const char sql[] =
		"INSERT INTO lock_fencing AS f (key, token) VALUES ($1::int8, 1)"
		" ON CONFLICT (key) DO UPDATE SET token = f.token + 1 RETURNING token";
	lkc_pg_store *s = (lkc_pg_store *) store;
	lkc_pg_conn *c = hold->session;
	char key[24];
	const char *params[1] = { key };
	PGresult *res = NULL;
	lkc_rc rc;

	if (c == NULL) {
		return lkc_pg_gone(s, hold, err);
	}
	if ((rc = lkc_pg_key_text(s, hold->resource, hold->resource_len, key, err)) != LKC_OK) {
		return rc;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		rc = lkc_pg_exec(s, c, sql, 1, params, lkc_pg_deadline(s), 0, &res, err);
		if (rc != LKC_ERR_REFUSED || attempt == 2 || strstr(err->msg, "lock_fencing") == NULL) {
			break;
		}
		/* The table is missing (the first token of this database): create it, then ask again. */
		if ((rc = lkc_pg_fencing_table(s, c, err)) != LKC_OK) {
			break;
		}
	}
	if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(c);
		hold->session = NULL;
		return lkc_pg_gone(s, hold, err) == LKC_ERR_IO ? LKC_ERR_IO : LKC_LOST;
	}
	if (rc != LKC_OK) {
		return rc;
	}
	if (PQntuples(res) != 1) {
		PQclear(res);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
	}
	*fence = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return LKC_OK;
}

static void lkc_pg_abandon(lkc_store *store, lkc_hold *hold)
{
	/* Ending our session frees what it held; a parent's session is only let go of on our side. */
	(void) store;
	lkc_pg_conn_close(hold->session);
	hold->session = NULL;
}

void lkc_pg_destroy(lkc_store *store)
{
	lkc_pg_store *s = (lkc_pg_store *) store;

	/* Lent out and never given back: a bailout left them, perhaps mid-statement (cancelled as they close). */
	while (s->out != NULL) {
		lkc_pg_conn_close(s->out);
	}
	while (s->idle != NULL) {
		lkc_pg_conn *c = s->idle;

		s->idle = c->next;
		c->next = NULL;
		if (s->persistent) {
			lkc_pool_put(&lkc_pg_pool, s->pool_key, s->pool_key_len, c);
		} else {
			lkc_pg_conn_close(c);
		}
	}
	free(s->host);
	free(s->port);
	free(s->user);
	if (s->password != NULL) {
		memset(s->password, 0, strlen(s->password));
	}
	free(s->password);
	free(s->dbname);
	free(s->endpoint);
	if (s->pool_key != NULL) {
		memset(s->pool_key, 0, s->pool_key_len);
	}
	free(s->pool_key);
	free(s->prefix);
	lkc_pg_table_free(s->table);
	free(s);
}

void lkc_pg_pool_shutdown(void)
{
	lkc_pool_shutdown(&lkc_pg_pool);
}

void lkc_pg_config_init(lkc_pg_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = 5432;
	cfg->timeout_ms = 5000;
}

void lkc_pg_config_free(lkc_pg_config *cfg)
{
	lkc_sql_config_free(cfg);
	lkc_pg_config_init(cfg);
}

static char *lkc_pg_strdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

lkc_rc lkc_pg_open(lkc_store **out, const lkc_pg_config *cfg, lkc_err *err)
{
	lkc_pg_store *s;
	int n = 0;
	size_t len;

	if (cfg->host == NULL || cfg->host[0] == '\0') {
		return lkc_err_set(err, LKC_ERR_INVALID, "a PostgreSQL store needs a host or a socket directory");
	}
	if (cfg->timeout_ms <= 0) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a PostgreSQL store needs a timeout above 0");
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->base.ops = &lkc_pg_ops;
	s->timeout_ms = cfg->timeout_ms;
	s->persistent = cfg->persistent;
	s->host = strdup(cfg->host);
	s->port = malloc(8);
	s->user = lkc_pg_strdup(cfg->user);
	s->password = lkc_pg_strdup(cfg->password);
	s->dbname = lkc_pg_strdup(cfg->dbname);
	s->prefix = malloc(cfg->prefix_len + 1);
	len = strlen(cfg->host) + 16;
	s->endpoint = malloc(len);
	if (s->host == NULL || s->port == NULL || s->prefix == NULL || s->endpoint == NULL
		|| (cfg->user != NULL && s->user == NULL) || (cfg->password != NULL && s->password == NULL)
		|| (cfg->dbname != NULL && s->dbname == NULL)) {
		lkc_pg_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	snprintf(s->port, 8, "%d", cfg->port);
	if (cfg->host[0] == '/') {
		snprintf(s->endpoint, len, "%s", cfg->host);
	} else {
		snprintf(s->endpoint, len, strchr(cfg->host, ':') != NULL ? "[%s]:%d" : "%s:%d", cfg->host, cfg->port);
	}
	if (cfg->prefix_len > 0) {
		memcpy(s->prefix, cfg->prefix, cfg->prefix_len);
	}
	s->prefix_len = cfg->prefix_len;
	s->keys[n] = "host"; s->values[n++] = s->host;
	s->keys[n] = "port"; s->values[n++] = s->port;
	if (s->user != NULL) {
		s->keys[n] = "user"; s->values[n++] = s->user;
	}
	if (s->password != NULL) {
		s->keys[n] = "password"; s->values[n++] = s->password;
	}
	if (s->dbname != NULL) {
		s->keys[n] = "dbname"; s->values[n++] = s->dbname;
	}
	s->keys[n] = "application_name"; s->values[n++] = "php-lock";
	/* The client notices a dead server on an idle held connection too. */
	s->keys[n] = "keepalives"; s->values[n++] = "1";
	s->keys[n] = NULL; s->values[n] = NULL;
	if (s->persistent) {
		/* The whole identity of a session: where, as whom (unset and empty differ), in which database. */
		const char *parts[8] = { s->host, s->port, s->user ? "+" : "-", s->user ? s->user : "",
			s->password ? "+" : "-", s->password ? s->password : "", s->dbname ? "+" : "-", s->dbname ? s->dbname : "" };
		size_t lens[8];

		for (int i = 0; i < 8; i++) {
			lens[i] = strlen(parts[i]);
		}
		s->pool_key = lkc_pool_key(8, parts, lens, &s->pool_key_len);
		if (s->pool_key == NULL) {
			lkc_pg_destroy(&s->base);
			return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	if (cfg->table_holds) {
		lkc_rc rc = lkc_pg_table_setup(s, cfg->table != NULL ? cfg->table : LKC_PG_TABLE_DEFAULT, err);

		if (rc != LKC_OK) {
			lkc_pg_destroy(&s->base);
			return rc;
		}
		s->base.ops = &lkc_pg_table_ops;
	}
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}

const char *lkc_pg_endpoint(const lkc_store *store)
{
	return ((const lkc_pg_store *) store)->endpoint;
}

/*
 * What the server says it is (when its postmaster started, its port, its cluster
 * name: readable by every role), whatever name or address reached it.
 */
lkc_rc lkc_pg_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	static const char sql[] = "SELECT pg_catalog.pg_postmaster_start_time()::text || ' ' || pg_catalog.current_setting('port')"
		" || ' ' || pg_catalog.current_setting('cluster_name')";
	lkc_pg_store *s = (lkc_pg_store *) store;
	PGresult *res = NULL;
	lkc_pg_conn *c;
	lkc_rc rc;

	*id = NULL;
	*len = 0;
	if ((rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_pg_exec(s, c, sql, 0, NULL, lkc_pg_deadline(s), 0, &res, err);
	if (rc == LKC_ERR_IO) {
		lkc_pg_conn_close(c);
		c = NULL;
	} else if (rc == LKC_OK) {
		if (PQntuples(res) != 1 || PQnfields(res) < 1) {
			rc = lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
		} else if ((*id = strdup(PQgetvalue(res, 0, 0))) == NULL) {
			rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		} else {
			*len = strlen(*id);
		}
	}
	PQclear(res);
	lkc_pg_put(s, c);
	return rc;
}

/*
 * What pg_locks says of the key, in one statement: the sessions granted it and
 * in which mode, how many wait for it (waitUntilFree() callers among them), and
 * whether the fencing table exists; then, when it does, the key's last token.
 * Owner tokens stay in their processes, and the server's queue is not ours to
 * order: owners and queue are unknown.
 */
static lkc_rc lkc_pg_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	static const char locks_sql[] =
		"SELECT coalesce(pg_catalog.bool_or(granted AND mode = 'ExclusiveLock'), false),"
		" coalesce(pg_catalog.bool_or(granted AND mode = 'ShareLock'), false),"
		" pg_catalog.count(*) FILTER (WHERE NOT granted),"
		" coalesce(pg_catalog.string_agg(pid::text, ' ' ORDER BY pid) FILTER (WHERE granted), ''),"
		" pg_catalog.to_regclass('lock_fencing') IS NOT NULL"
		" FROM pg_catalog.pg_locks WHERE locktype = 'advisory'"
		" AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
		" AND classid = $1::oid AND objid = $2::oid AND objsubid = 1";
	static const char fence_sql[] = "SELECT token FROM lock_fencing WHERE key = $1::int8";
	lkc_pg_store *s = (lkc_pg_store *) store;
	char key[24], hi[12], lo[12];
	const char *params[2] = { hi, lo };
	PGresult *res = NULL;
	lkc_pg_conn *c;
	int fencing;
	lkc_rc rc;

	out->ttl_ms = LKC_TTL_NONE;
	out->holders_known = 1;
	if ((rc = lkc_pg_key_text(s, resource, len, key, err)) != LKC_OK || (rc = lkc_pg_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	lkc_pg_key_halves(key, hi, lo);
	rc = lkc_pg_exec(s, c, locks_sql, 2, params, lkc_pg_deadline(s), 0, &res, err);
	if (rc == LKC_OK && (PQntuples(res) != 1 || PQnfields(res) != 5)) {
		PQclear(res);
		rc = lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
	}
	if (rc != LKC_OK) {
		lkc_pg_done(s, c, rc);
		return rc;
	}
	out->mode = PQgetvalue(res, 0, 0)[0] == 't' ? LKC_SEEN_WRITE : PQgetvalue(res, 0, 1)[0] == 't' ? LKC_SEEN_READ : LKC_SEEN_FREE;
	out->waiters = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	for (const char *p = PQgetvalue(res, 0, 3); *p != '\0' && rc == LKC_OK; ) {
		char *end;
		long long pid = strtoll(p, &end, 10);

		if (end == p) {
			rc = lkc_err_set(err, LKC_ERR_PROTOCOL, "PostgreSQL at %s: unexpected answer", s->endpoint);
		} else if (lkc_inspect_holder(out, pid) != 0) {
			rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
		p = end;
	}
	fencing = PQgetvalue(res, 0, 4)[0] == 't';
	PQclear(res);
	if (rc == LKC_OK && fencing) {
		params[0] = key;
		rc = lkc_pg_exec(s, c, fence_sql, 1, params, lkc_pg_deadline(s), 0, &res, err);
		if (rc == LKC_OK) {
			if (PQntuples(res) == 1) {
				out->fence = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
			}
			PQclear(res);
		}
	}
	lkc_pg_done(s, c, rc);
	return rc;
}

static const lkc_store_ops lkc_pg_ops = {
	.name = "PostgreSQL",
	.caps = LKC_CAP_SHARED | LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND,
	.acquire = lkc_pg_acquire,
	.release = lkc_pg_release,
	.refresh = lkc_pg_refresh,
	.check = lkc_pg_check,
	.is_locked = lkc_pg_is_locked,
	.force_release = lkc_pg_force_release,
	.abandon = lkc_pg_abandon,
	.destroy = lkc_pg_destroy,
	.fence = lkc_pg_fence,
	.settle = NULL,
	.wait_free = lkc_pg_wait_free,
	.server_id = lkc_pg_server_id,
	.inspect = lkc_pg_inspect,
	.stats = &lkc_stats_of[LKC_KIND_PGSQL],
};
