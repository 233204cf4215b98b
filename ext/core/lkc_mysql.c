/*
 * The MySQL store: session holds with GET_LOCK through MariaDB Connector/C.
 *
 * A resource maps to one lock name (lkc_my_name). Every hold has a connection
 * (a server session) of its own, taken from the store's idle connections or
 * opened, and kept while the hold lives; the session holds the name with
 * GET_LOCK and gives the connection back idle, holding nothing, when released.
 * GET_LOCK is re-entrant within a session, so two holds never share one: two
 * lock objects of one process then conflict on the server as two processes do.
 * The server frees a hold when its session ends: the process died, the
 * connection dropped, or forceRelease() killed the session.
 *
 * Every call goes through the library's non-blocking API and our own poll(),
 * so each one is bounded by the store's timeout, and a blocking GET_LOCK (the
 * server's own wait queue, bounded by its timeout argument) can be ended by a
 * signal the host wants handled: a second session sends KILL QUERY, and the
 * waiting session is then closed, so that nothing it may have taken stays.
 *
 * Fencing tokens come from a table, lock_fencing (name, token), created in the
 * DSN's database when missing: the holder's session increments the name's row
 * while it holds the name, so tokens strictly increase.
 *
 * Holds in a table (expiring, outliving their session) are lkc_mysql_table.c's,
 * over this file's connections, statements and waits.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"
#include "lkc_mysql_int.h"
#include "lkc_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <errmsg.h>
#include <mysqld_error.h>

/* Idle connections a store keeps for its next holds; more are closed. */
#define LKC_MY_IDLE_MAX 8
/* Idle connections the process keeps for persistent stores, across requests. */
#define LKC_MY_POOL_MAX 16


static const lkc_store_ops lkc_my_ops;
static const lkc_store_ops lkc_my_table_ops;
static const lkc_store_ops lkc_my_session_kind;

int lkc_my_name(const char *prefix, size_t prefix_len, const char *resource, size_t len, char out[LKC_MY_NAME_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[32];
	unsigned char small[512];
	unsigned char *buf = small;
	size_t total = 4 + prefix_len + len;
	size_t tag = sizeof(LKC_MY_TAG) - 1;

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
	memcpy(out, LKC_MY_TAG, tag);
	/* Lowercase hex: a case-insensitive server cannot fold two names into one. */
	for (size_t i = 0; tag + i < LKC_MY_NAME_LEN; i++) {
		out[tag + i] = hex[(i % 2 == 0) ? d[i / 2] >> 4 : d[i / 2] & 15];
	}
	out[LKC_MY_NAME_LEN] = '\0';
	return 0;
}

const char *lkc_my_client_version(void)
{
	return mysql_get_client_info();
}

/*
 * The connections of this thread that a statement runs on, newest first. What
 * a bailout (a fatal error in a PHP signal handler that runs inside our wait)
 * leaves here is known to nobody else: lkc_my_reap ends it.
 */
static __thread lkc_my_conn *lkc_my_busy;

/* Puts c on the busy list while a statement of s runs on it; 0 when it was there already. */
static int lkc_my_busy_on(lkc_my_store *s, lkc_my_conn *c)
{
	if (c->busy) {
		return 0;
	}
	c->store = s;
	c->busy = 1;
	c->busy_prev = NULL;
	c->busy_next = lkc_my_busy;
	if (lkc_my_busy != NULL) {
		lkc_my_busy->busy_prev = c;
	}
	lkc_my_busy = c;
	return 1;
}

static void lkc_my_busy_off(lkc_my_conn *c)
{
	if (!c->busy) {
		return;
	}
	if (c->busy_prev != NULL) {
		c->busy_prev->busy_next = c->busy_next;
	} else {
		lkc_my_busy = c->busy_next;
	}
	if (c->busy_next != NULL) {
		c->busy_next->busy_prev = c->busy_prev;
	}
	c->busy_prev = c->busy_next = NULL;
	c->busy = 0;
}

/*
 * Closes a connection. One a parent process opened, or one left in the middle of
 * a call, is closed on our side only: its socket is pointed at /dev/null first,
 * so that the library's goodbye never reaches a parent's session or waits.
 */
static void lkc_my_conn_close_how(lkc_my_conn *c, int abrupt)
{
	if (c == NULL) {
		return;
	}
	lkc_my_busy_off(c);
	if (abrupt || c->pid != lkc_pid()) {
		int fd = (int) mysql_get_socket(c->my);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0 && null >= 0) {
			dup2(null, fd);
		}
		if (null >= 0) {
			close(null);
		}
	}
	mysql_close(c->my);
	free(c);
}

static void lkc_my_conn_close(lkc_my_conn *c)
{
	lkc_my_conn_close_how(c, 0);
}

/* Ends a connection that is broken or in the middle of a call: the server frees what its session held. */
void lkc_my_conn_drop(lkc_my_conn *c)
{
	lkc_my_conn_close_how(c, 1);
}

/*
 * Waits for what the library asked (status) until deadline: the ready status to
 * go on with, 0 when the deadline passed, -1 when poll failed, -2 when a signal
 * the host wants handled ended the wait (only when abortable).
 */
static int lkc_my_wait(MYSQL *my, int status, uint64_t deadline, int abortable)
{
	uint64_t lib_deadline = 0;

	if (status & MYSQL_WAIT_TIMEOUT) {
		lib_deadline = lkc_now_ns() + (uint64_t) mysql_get_timeout_value_ms(my) * 1000000u;
	}
	/* A signal that came before this wait has no EINTR left to show for itself: the host is asked first. */
	if (abortable && lkc_interrupted()) {
		return -2;
	}
	for (;;) {
		struct pollfd pfd = { .fd = (int) mysql_get_socket(my), .events = 0, .revents = 0 };
		int64_t ms = lkc_ms_left(deadline);
		int64_t lib_ms = lib_deadline != 0 ? lkc_ms_left(lib_deadline) : INT64_MAX;
		int n;

		if (status & MYSQL_WAIT_READ) {
			pfd.events |= POLLIN;
		}
		if (status & MYSQL_WAIT_WRITE) {
			pfd.events |= POLLOUT;
		}
		if (status & MYSQL_WAIT_EXCEPT) {
			pfd.events |= POLLPRI;
		}
		if (lib_ms < ms) {
			ms = lib_ms;
		}
		n = poll(&pfd, 1, ms > 60000 ? 60000 : (int) ms);
		if (n > 0) {
			int ready = 0;

			if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
				ready |= MYSQL_WAIT_READ;
			}
			if (pfd.revents & (POLLOUT | POLLHUP | POLLERR)) {
				ready |= MYSQL_WAIT_WRITE;
			}
			if (pfd.revents & POLLPRI) {
				ready |= MYSQL_WAIT_EXCEPT;
			}
			return (ready & status) != 0 ? (ready & status) : status & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
		}
		if (n == 0) {
			if (lib_deadline != 0 && lkc_ms_left(lib_deadline) == 0) {
				return MYSQL_WAIT_TIMEOUT;
			}
			if (lkc_ms_left(deadline) == 0) {
				return 0;
			}
			continue;
		}
		if (errno != EINTR) {
			return -1;
		}
		if (abortable && lkc_interrupted()) {
			return -2;
		}
	}
}

/* A deadline, kept within the store call's. */
uint64_t lkc_my_cap(const lkc_my_store *s, uint64_t deadline)
{
	return s->until != 0 && (deadline == 0 || s->until < deadline) ? s->until : deadline;
}

/* The deadline of a statement that does not wait for a lock: the timeout from now, within the call's. */
uint64_t lkc_my_deadline(const lkc_my_store *s)
{
	return lkc_my_cap(s, lkc_now_ns() + (uint64_t) s->timeout_ms * 1000000u);
}

/*
 * The library's error with the address it was given (addr, in quotes) written
 * back as the host name the user gave.
 */
static void lkc_my_named_error(char *out, size_t size, const char *msg, const char *addr, const char *host)
{
	char quoted[NI_MAXHOST + 2];
	const char *at;

	snprintf(quoted, sizeof(quoted), "'%s'", addr);
	at = addr != host ? strstr(msg, quoted) : NULL;
	if (at == NULL) {
		snprintf(out, size, "%s", msg);
		return;
	}
	snprintf(out, size, "%.*s'%s'%s", (int) (at - msg), msg, host, at + strlen(quoted));
}

/* Opens a new session with the server at host (the store's host or one of its addresses) by deadline. */
static lkc_rc lkc_my_connect_at(lkc_my_store *s, const char *host, uint64_t deadline, lkc_my_conn **out, lkc_err *err)
{
	unsigned int protocol = s->socket != NULL ? MYSQL_PROTOCOL_SOCKET : MYSQL_PROTOCOL_TCP;
	unsigned int seconds = (unsigned int) ((s->timeout_ms + 999) / 1000);
	MYSQL *my = mysql_init(NULL);
	MYSQL *ret = NULL;
	lkc_my_conn *c;
	int status;

	if (my == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "MySQL at %s: out of memory", s->endpoint);
	}
	/* TCP even for "localhost" (which the library would take for its default socket), and no option files. */
	mysql_options(my, MYSQL_OPT_NONBLOCK, 0);
	mysql_options(my, MYSQL_OPT_PROTOCOL, &protocol);
	mysql_options(my, MYSQL_OPT_CONNECT_TIMEOUT, &seconds);
	status = mysql_real_connect_start(&ret, my, host, s->user, s->password, s->dbname,
		s->socket != NULL ? 0 : (unsigned int) s->port, s->socket, 0);
	while (status != 0) {
		int ready = lkc_my_wait(my, status, deadline, 0);

		if (ready <= 0) {
			int fd = (int) mysql_get_socket(my);
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);

			if (fd >= 0 && null >= 0) {
				dup2(null, fd);
			}
			if (null >= 0) {
				close(null);
			}
			mysql_close(my);
			if (ready == 0) {
				return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: cannot connect: timed out after %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
			}
			return lkc_err_errno(err, LKC_ERR_IO, errno, "MySQL at %s: cannot connect", s->endpoint);
		}
		status = mysql_real_connect_cont(&ret, my, ready);
	}
	if (ret == NULL) {
		unsigned int n = mysql_errno(my);
		/* A server that answered and said no (user, password, database) refused; anything else is unreachable. */
		lkc_rc rc = n >= 2000 && n < 3000 ? LKC_ERR_IO : LKC_ERR_REFUSED;
		char text[512];

		lkc_my_named_error(text, sizeof(text), mysql_error(my), host, s->host);
		lkc_err_set(err, rc, "MySQL at %s: cannot connect: %s", s->endpoint, text);
		mysql_close(my);
		return rc;
	}
	{
		/* The client notices a dead server on an idle held connection too. */
		int on = 1;
		int fd = (int) mysql_get_socket(my);

		if (fd >= 0 && s->socket == NULL) {
			setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
		}
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		mysql_close(my);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "MySQL at %s: out of memory", s->endpoint);
	}
	c->my = my;
	c->pid = lkc_pid();
	c->mariadb = strstr(mysql_get_server_info(my), "MariaDB") != NULL;
	*out = c;
	return LKC_OK;
}

/*
 * Opens a new session within the store's timeout. A host name is resolved first
 * within the same deadline (the library's own lookup is a getaddrinfo() that
 * nothing bounds) and its addresses tried in turn while the server is not
 * reached and time is left. "localhost" is left to the library, to which the
 * name means more than its addresses (its default socket when the protocol is
 * not TCP); an address or a socket needs no lookup.
 */
static lkc_rc lkc_my_connect(lkc_my_store *s, lkc_my_conn **out, lkc_err *err)
{
	uint64_t deadline = lkc_my_deadline(s);
	struct addrinfo *res = NULL;
	char text[256];
	lkc_rc rc = LKC_ERR_IO;

	if (s->socket != NULL || strcmp(s->host, "localhost") == 0) {
		return lkc_my_connect_at(s, s->host, deadline, out, err);
	}
	if (lkc_is_address(s->host)) {
		return lkc_my_connect_at(s, s->host, deadline, out, err);
	}
	if (lkc_resolve(s->host, s->port, deadline, &res, text, sizeof(text)) != 0) {
		return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: cannot connect: %s", s->endpoint, text);
	}
	lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: cannot connect: %s has no usable address", s->endpoint, s->host);
	for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		char addr[NI_MAXHOST];

		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0) {
			continue;
		}
		if (rc != LKC_ERR_IO || (ai != res && lkc_ms_left(deadline) == 0)) {
			break;
		}
		lkc_err_clear(err);
		rc = lkc_my_connect_at(s, addr, deadline, out, err);
	}
	freeaddrinfo(res);
	return rc;
}

/*
 * Whether an idle connection can serve again: ours and silent. An idle session
 * has nothing to say: anything to read is the end of the stream (a restart, a KILL).
 */
int lkc_my_reusable(const lkc_my_conn *c)
{
	struct pollfd pfd;

	if (c->pid != lkc_pid()) {
		return 0;
	}
	pfd.fd = (int) mysql_get_socket(c->my);
	pfd.events = POLLIN;
	pfd.revents = 0;
	return pfd.fd >= 0 && poll(&pfd, 1, 0) == 0;
}

static int lkc_my_reusable_any(void *c)
{
	return lkc_my_reusable(c);
}

/* Closes an idle session: with a goodbye when it is ours and silent, else on our side only. */
static void lkc_my_unpool(void *c, int ours)
{
	(void) ours;
	if (lkc_my_reusable(c)) {
		lkc_my_conn_close(c);
	} else {
		lkc_my_conn_drop(c);
	}
}

/* The process's idle sessions of persistent stores, each under its store's pool_key. */
static lkc_pool lkc_my_pool = LKC_POOL_INIT(lkc_my_reusable_any, lkc_my_unpool, LKC_MY_POOL_MAX);

/* A session for one hold or one request: an idle one of the store or the process, or a new one. */
lkc_rc lkc_my_get(lkc_my_store *s, lkc_my_conn **out, lkc_err *err)
{
	while (s->idle != NULL) {
		lkc_my_conn *c = s->idle;

		s->idle = c->next;
		s->nidle--;
		c->next = NULL;
		if (lkc_my_reusable(c)) {
			*out = c;
			return LKC_OK;
		}
		lkc_my_conn_drop(c);
	}
	if (s->persistent && (*out = lkc_pool_take(&lkc_my_pool, s->pool_key, s->pool_key_len)) != NULL) {
		return LKC_OK;
	}
	return lkc_my_connect(s, out, err);
}

/* Gives a session that holds nothing back for reuse, or closes it. */
void lkc_my_put(lkc_my_store *s, lkc_my_conn *c)
{
	if (c == NULL) {
		return;
	}
	if (!lkc_my_reusable(c)) {
		/* Closed by the server, or not ours: no goodbye to write into it. */
		lkc_my_conn_drop(c);
		return;
	}
	if (s->nidle >= LKC_MY_IDLE_MAX) {
		lkc_my_conn_close(c);
		return;
	}
	c->next = s->idle;
	s->idle = c;
	s->nidle++;
}

/* Maps the connection's last error to a code and message. LKC_ERR_IO means the connection is broken. */
static lkc_rc lkc_my_error(lkc_my_store *s, lkc_my_conn *c, lkc_err *err)
{
	unsigned int n = mysql_errno(c->my);

	/* The server broke a deadlock between sessions by failing this wait, and the other one goes on. */
	if (n == ER_LOCK_DEADLOCK || n == 3058) {
		return LKC_BUSY;
	}
	if ((n >= 2000 && n < 3000) || n == ER_SERVER_SHUTDOWN || n == ER_CONNECTION_KILLED || n == 0) {
		return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: connection lost: %s", s->endpoint,
			n == 0 ? "no answer" : mysql_error(c->my));
	}
	return lkc_err_set(err, LKC_ERR_REFUSED, "MySQL at %s: %s", s->endpoint, mysql_error(c->my));
}


static lkc_rc lkc_my_kill_query_now(lkc_my_store *s, unsigned long id);

/* lkc_my_exec, with the connection on the busy list. */
static lkc_rc lkc_my_exec_busy(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int flags,
	MYSQL_RES **out, lkc_err *err)
{
	MYSQL *my = (*c)->my;
	int abortable = (flags & LKC_MY_ABORTABLE) != 0;
	MYSQL_RES *res = NULL;
	int killed = 0;
	int ret = 0;
	int status;
	int ready;
	lkc_rc rc;

	status = mysql_real_query_start(&ret, my, sql, strlen(sql));
	while (status != 0) {
		ready = lkc_my_wait(my, status, deadline, abortable && !killed);
		if (ready == -2) {
			/* The answer still comes: the statement ends killed, or it finished first. */
			killed = 1;
			if (lkc_my_kill_query_now(s, mysql_thread_id(my)) != LKC_OK) {
				lkc_my_conn_drop(*c);
				*c = NULL;
				return LKC_INTERRUPTED;
			}
			/* The killed statement's answer gets a timeout of its own, as the kill did. */
			deadline = lkc_now_ns() + (uint64_t) s->timeout_ms * 1000000u;
			continue;
		}
		if (ready == 0 && !killed && (flags & LKC_MY_PARK)) {
			/* The statement may still run, and take what it asked for: it is killed later, not left to run. */
			lkc_my_busy_off(*c);
			(*c)->next = s->strays;
			s->strays = *c;
			*c = NULL;
			return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: no answer within %" PRId64 " ms",
				s->endpoint, s->timeout_ms);
		}
		if (ready <= 0) {
			lkc_my_conn_drop(*c);
			*c = NULL;
			if (killed) {
				return LKC_INTERRUPTED;
			}
			if (ready == 0) {
				return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: no answer within %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
			}
			return lkc_err_errno(err, LKC_ERR_IO, errno, "MySQL at %s: connection lost", s->endpoint);
		}
		status = mysql_real_query_cont(&ret, my, ready);
	}
	if (ret != 0) {
		rc = killed ? LKC_INTERRUPTED : lkc_my_error(s, *c, err);
		if (rc == LKC_ERR_IO || rc == LKC_INTERRUPTED) {
			lkc_my_conn_drop(*c);
			*c = NULL;
		}
		return rc;
	}
	if (mysql_field_count(my) > 0) {
		status = mysql_store_result_start(&res, my);
		while (status != 0) {
			ready = lkc_my_wait(my, status, killed ? deadline : lkc_my_deadline(s), 0);
			if (ready <= 0) {
				lkc_my_conn_drop(*c);
				*c = NULL;
				if (killed) {
					return LKC_INTERRUPTED;
				}
				return lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: no answer within %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
			}
			status = mysql_store_result_cont(&res, my, ready);
		}
		if (res == NULL) {
			/* A killed SLEEP() ends its rows with the error of the kill. */
			rc = killed ? LKC_INTERRUPTED : lkc_my_error(s, *c, err);
			lkc_my_conn_drop(*c);
			*c = NULL;
			return rc == LKC_ERR_IO || rc == LKC_INTERRUPTED ? rc : LKC_ERR_IO;
		}
	}
	if (killed) {
		/* The statement finished before the kill came: the session may hold what it took, and goes. */
		mysql_free_result(res);
		lkc_my_conn_drop(*c);
		*c = NULL;
		return LKC_INTERRUPTED;
	}
	if (out != NULL) {
		*out = res;
	} else {
		mysql_free_result(res);
	}
	return LKC_OK;
}

lkc_rc lkc_my_exec(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int flags,
	MYSQL_RES **out, lkc_err *err)
{
	int linked = lkc_my_busy_on(s, *c);
	lkc_rc rc = lkc_my_exec_busy(s, c, sql, deadline, flags, out, err);

	/* A connection closed under the statement left the list as it was closed. */
	if (linked && *c != NULL) {
		lkc_my_busy_off(*c);
	}
	return rc;
}

/*
 * Runs one statement and sets *value to the first column of its first row
 * (value_size bytes, "" for SQL NULL, *null set) when it returns rows; as
 * lkc_my_exec otherwise.
 */
static lkc_rc lkc_my_query(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int abortable,
	char *value, size_t value_size, int *null, lkc_err *err)
{
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_rc rc = lkc_my_exec(s, c, sql, deadline, abortable, value != NULL ? &res : NULL, err);

	if (rc != LKC_OK || value == NULL) {
		return rc;
	}
	row = res != NULL ? mysql_fetch_row(res) : NULL;
	if (row == NULL || mysql_num_fields(res) < 1) {
		mysql_free_result(res);
		return lkc_err_set(err, LKC_ERR_PROTOCOL, "MySQL at %s: unexpected answer", s->endpoint);
	}
	*null = row[0] == NULL;
	snprintf(value, value_size, "%s", row[0] != NULL ? row[0] : "");
	mysql_free_result(res);
	return LKC_OK;
}

/*
 * Sends KILL QUERY for a session of ours from another session, within a timeout
 * of its own: a wait that a signal ends must not stay queued on the server,
 * whatever is left of the call's time.
 */
static lkc_rc lkc_my_kill_query_now(lkc_my_store *s, unsigned long id)
{
	uint64_t until = s->until;
	char sql[64];
	lkc_my_conn *k;
	lkc_err ignored;
	lkc_rc rc;

	lkc_err_clear(&ignored);
	s->until = 0;
	if ((rc = lkc_my_get(s, &k, &ignored)) == LKC_OK) {
		snprintf(sql, sizeof(sql), "KILL QUERY %lu", id);
		rc = lkc_my_query(s, &k, sql, lkc_my_deadline(s), 0, NULL, 0, NULL, &ignored);
		if (k != NULL) {
			lkc_my_put(s, k);
		}
	}
	s->until = until;
	return rc;
}

/*
 * Whether the server still has the session of a connection left mid-statement:
 * what it sent is read and dropped (the connection goes anyway), and the end of
 * the stream says the server ended it (a restart, a KILL), after which its id
 * may name somebody else's session.
 */
static int lkc_my_session_open(const lkc_my_conn *c)
{
	int fd = (int) mysql_get_socket(c->my);
	char buf[4096];

	if (fd < 0) {
		return 0;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			continue;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
}

void lkc_my_kill_strays(lkc_my_store *s)
{
	uint64_t until = s->until;
	lkc_my_conn *k = NULL;
	int reachable = 1;
	lkc_err ignored;

	if (s->strays == NULL) {
		return;
	}
	lkc_err_clear(&ignored);
	s->until = lkc_my_deadline(s);
	while (s->strays != NULL) {
		lkc_my_conn *c = s->strays;
		char sql[128];
		unsigned long id;
		lkc_rc rc;

		s->strays = c->next;
		c->next = NULL;
		if (c->pid != lkc_pid() || !lkc_my_session_open(c)) {
			lkc_my_conn_drop(c);
			continue;
		}
		id = mysql_thread_id(c->my);
		if (k == NULL && reachable && lkc_my_get(s, &k, &ignored) != LKC_OK) {
			/* The server cannot be reached: closing is all that is left, for every stray. */
			reachable = 0;
		}
		if (k != NULL) {
			snprintf(sql, sizeof(sql), "KILL CONNECTION %lu", id);
			rc = lkc_my_query(s, &k, sql, lkc_my_deadline(s), 0, NULL, 0, NULL, &ignored);
			if (rc == LKC_ERR_REFUSED && k != NULL && mysql_errno(k->my) == ER_NO_SUCH_THREAD) {
				rc = LKC_OK;
			}
			/* The server frees the session's locks and queued waits as it ends it: wait for that. */
			snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lu", id);
			while (rc == LKC_OK && k != NULL) {
				int64_t n = 0;

				if (lkc_my_int(s, &k, sql, lkc_my_deadline(s), 0, &n, &ignored) != LKC_OK || n == 0
					|| lkc_ms_left(s->until) == 0) {
					break;
				}
				usleep(2000);
			}
		}
		lkc_my_conn_drop(c);
	}
	if (k != NULL) {
		lkc_my_put(s, k);
	}
	s->until = until;
}

void lkc_my_reap(lkc_my_store *s)
{
	lkc_my_conn *c = s != NULL ? lkc_my_busy : NULL;

	/* What is still busy when no call of the store runs was left by a bailout: a stray. */
	while (c != NULL) {
		lkc_my_conn *next = c->busy_next;

		if (c->store == s) {
			lkc_my_busy_off(c);
			c->next = c->store->strays;
			c->store->strays = c;
		}
		c = next;
	}
	if (s != NULL) {
		/* The bound of a call that a bailout ended is stale. */
		s->until = 0;
		lkc_my_kill_strays(s);
		return;
	}
	/* Every store's, one store at a time. */
	while (lkc_my_busy != NULL) {
		lkc_my_reap(lkc_my_busy->store);
	}
}

/* Ends what bailouts left mid-statement in this thread's stores (request end). */
void lkc_my_request_end(void)
{
	lkc_my_reap(NULL);
}

/* Runs a statement that answers one integer (or NULL, as -1) into *out, on *c. */
lkc_rc lkc_my_int(lkc_my_store *s, lkc_my_conn **c, const char *sql, uint64_t deadline, int abortable,
	int64_t *out, lkc_err *err)
{
	char value[32];
	int null = 0;
	lkc_rc rc = lkc_my_query(s, c, sql, deadline, abortable, value, sizeof(value), &null, err);

	if (rc == LKC_OK) {
		*out = null ? -1 : strtoll(value, NULL, 10);
	}
	return rc;
}

/* The lock name of a resource; LKC_ERR_SYSTEM when out of memory. */
lkc_rc lkc_my_name_of(const lkc_my_store *s, const char *resource, size_t len, char out[LKC_MY_NAME_LEN + 1],
	lkc_err *err)
{
	if (lkc_my_name((const char *) s->prefix, s->prefix_len, resource, len, out) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	return LKC_OK;
}

/* Whether anybody holds the name, asked on a session of its own; *locked set. */
static lkc_rc lkc_my_locked(lkc_my_store *s, const char *name, int *locked, lkc_err *err)
{
	char sql[128];
	lkc_my_conn *c;
	int64_t free_ = 0;
	lkc_rc rc;

	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "SELECT IS_FREE_LOCK('%s')", name);
	rc = lkc_my_int(s, &c, sql, lkc_my_deadline(s), 0, &free_, err);
	lkc_my_put(s, c);
	if (rc == LKC_OK) {
		*locked = free_ == 0;
	}
	return rc;
}

/* A hold whose session is gone: LKC_LOST when somebody holds the name now, else LKC_EXPIRED. */
static lkc_rc lkc_my_gone(lkc_my_store *s, lkc_hold *hold, lkc_err *err)
{
	char name[LKC_MY_NAME_LEN + 1];
	int locked = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_locked(s, name, &locked, err)) != LKC_OK) {
		return rc;
	}
	return locked ? LKC_LOST : LKC_EXPIRED;
}

/*
 * After the hold's session failed with rc (LKC_OK: it holds nothing): whether the
 * hold is gone, asked on another session, unless rc is a failure that used up the
 * call's time (a server that does not answer would not answer that either).
 */
static lkc_rc lkc_my_gone_after(lkc_my_store *s, lkc_hold *hold, lkc_rc rc, lkc_err *err)
{
	if (rc == LKC_ERR_IO && s->until != 0 && lkc_ms_left(s->until) == 0) {
		return rc;
	}
	return lkc_my_gone(s, hold, err);
}

/* The GET_LOCK timeout of a wait, in seconds with milliseconds. */
void lkc_my_seconds(char *out, size_t size, int64_t wait_ms)
{
	if (wait_ms == LKC_WAIT_FOREVER || wait_ms / 1000 >= LKC_MY_FOREVER_S) {
		snprintf(out, size, "%d", LKC_MY_FOREVER_S);
	} else {
		snprintf(out, size, "%" PRId64 ".%03d", wait_ms / 1000, (int) (wait_ms % 1000));
	}
}

/*
 * Takes name on the session *c with GET_LOCK, waiting up to wait_ms; *got set to
 * whether it did. A wait without end asks again each time GET_LOCK's own runs out.
 */
lkc_rc lkc_my_get_lock(lkc_my_store *s, lkc_my_conn **c, const char *name, const char *then, int64_t wait_ms,
	int *got, lkc_err *err)
{
	char sql[512], secs[32];
	uint64_t deadline;
	int64_t answer = 0;
	lkc_rc rc;

	for (;;) {
		/*
		 * A server's or user's statement time limit must not cut a wait we were asked
		 * to make: MariaDB's max_statement_time is lifted for the statement, MySQL's
		 * max_execution_time by the optimizer hint (a comment to MariaDB).
		 */
		const char *lift = (*c)->mariadb && wait_ms != 0 ? "SET STATEMENT max_statement_time = 0 FOR " : "";

		lkc_my_seconds(secs, sizeof(secs), wait_ms);
		if (then != NULL) {
			snprintf(sql, sizeof(sql), "%sSELECT /*+ MAX_EXECUTION_TIME(0) */ IF(GET_LOCK('%s', %s) = 1, %s, 0)",
				lift, name, secs, then);
		} else {
			snprintf(sql, sizeof(sql), "%sSELECT /*+ MAX_EXECUTION_TIME(0) */ GET_LOCK('%s', %s)", lift, name, secs);
		}
		/* The server ends the wait at GET_LOCK's timeout; the client allows one more timeout for the answer. */
		deadline = lkc_my_cap(s, lkc_my_deadline(s) + (wait_ms == LKC_WAIT_FOREVER
			? (uint64_t) LKC_MY_FOREVER_S * 1000000000u : (uint64_t) wait_ms * 1000000u));
		rc = lkc_my_int(s, c, sql, deadline, wait_ms != 0, &answer, err);
		if (rc != LKC_OK) {
			return rc;
		}
		if (answer == 1 || wait_ms != LKC_WAIT_FOREVER) {
			break;
		}
	}
	*got = answer == 1;
	return LKC_OK;
}

static lkc_rc lkc_my_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	lkc_my_conn *c = NULL;
	int got = 0;
	lkc_rc rc;

	(void) ttl_ms;
	(void) mode;
	if (hold->mode != LKC_MODE_NONE) {
		/* Exclusive is the only mode: there is nothing to convert. */
		return LKC_OK;
	}
	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_my_get_lock(s, &c, name, NULL, wait_ms, &got, err);
	if (rc == LKC_OK && got) {
		hold->session = c;
		return LKC_OK;
	}
	if (rc == LKC_OK) {
		rc = LKC_BUSY;
	}
	if (c != NULL) {
		/* Not taken (or a deadlock was broken): the session holds nothing of the name. */
		lkc_my_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_my_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	lkc_my_conn *c = hold->session;
	char name[LKC_MY_NAME_LEN + 1];
	char sql[128];
	int64_t answer = 0;
	lkc_rc rc;

	(void) delay_ms;
	if (c == NULL) {
		return lkc_my_gone(s, hold, err);
	}
	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "SELECT RELEASE_LOCK('%s')", name);
	rc = lkc_my_int(s, &c, sql, lkc_my_deadline(s), 0, &answer, err);
	if (rc == LKC_OK && answer == 1) {
		hold->session = NULL;
		lkc_my_put(s, c);
		return LKC_OK;
	}
	/* The session no longer held it, or cannot say: it ends, and with it whatever it held. */
	lkc_my_conn_drop(c);
	hold->session = NULL;
	if (rc != LKC_OK && rc != LKC_ERR_IO) {
		return rc;
	}
	return lkc_my_gone_after(s, hold, rc, err);
}

/* Whether the hold's session still holds its name. */
static lkc_rc lkc_my_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	lkc_my_conn *c = hold->session;
	char name[LKC_MY_NAME_LEN + 1];
	char sql[128];
	int64_t answer = 0;
	lkc_rc rc;

	if (c == NULL) {
		return lkc_my_gone(s, hold, err);
	}
	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "SELECT IFNULL(IS_USED_LOCK('%s') = CONNECTION_ID(), 0)", name);
	rc = lkc_my_int(s, &c, sql, lkc_my_deadline(s), 0, &answer, err);
	if (rc == LKC_OK && answer == 1) {
		return LKC_OK;
	}
	if (rc == LKC_OK || rc == LKC_ERR_IO) {
		/* The session is gone (the connection dropped, or was killed by forceRelease()), or holds nothing. */
		lkc_my_conn_drop(c);
		hold->session = NULL;
		return lkc_my_gone_after(s, hold, rc, err);
	}
	return rc;
}

static lkc_rc lkc_my_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	/* Session holds have no TTL: refreshing checks that the hold is still ours. */
	(void) ttl_ms;
	return lkc_my_check(store, hold, err);
}

static lkc_rc lkc_my_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	return lkc_my_locked(s, name, locked, err);
}

static lkc_rc lkc_my_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	/* Kills the session that holds the name, and waits (up to the timeout) until the name is free of it. */
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char sql[128];
	uint64_t deadline = lkc_my_deadline(s);
	lkc_my_conn *c;
	int64_t holder = -1;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "SELECT IS_USED_LOCK('%s')", name);
	rc = lkc_my_int(s, &c, sql, deadline, 0, &holder, err);
	if (rc == LKC_OK && holder > 0) {
		char kill[64];

		snprintf(kill, sizeof(kill), "KILL CONNECTION %" PRId64, holder);
		rc = lkc_my_query(s, &c, kill, deadline, 0, NULL, 0, NULL, err);
		if (rc == LKC_ERR_REFUSED && c != NULL && mysql_errno(c->my) == ER_NO_SUCH_THREAD) {
			/* It ended by itself meanwhile. */
			rc = LKC_OK;
		}
		/* The server frees the session's locks as it ends it: wait for that. */
		while (rc == LKC_OK) {
			int64_t now_holder = -1;

			rc = lkc_my_int(s, &c, sql, deadline, 0, &now_holder, err);
			if (rc != LKC_OK || now_holder != holder) {
				break;
			}
			if (lkc_ms_left(deadline) == 0) {
				rc = lkc_err_set(err, LKC_ERR_IO, "MySQL at %s: the session holding the lock did not end within %" PRId64 " ms",
					s->endpoint, s->timeout_ms);
				break;
			}
			usleep(2000);
		}
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_my_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	/*
	 * Queued as a waiter of GET_LOCK, woken by the release, and let go in the same
	 * statement: it passes no earlier waiter and holds the name for no longer than
	 * that statement takes.
	 */
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char then[96];
	lkc_my_conn *c;
	int got = 0;
	lkc_rc rc;

	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK) {
		return rc;
	}
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	snprintf(then, sizeof(then), "RELEASE_LOCK('%s')", name);
	rc = lkc_my_get_lock(s, &c, name, then, wait_ms, &got, err);
	if (rc == LKC_OK && !got) {
		rc = LKC_BUSY;
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

static lkc_rc lkc_my_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	static const char create[] =
		"CREATE TABLE IF NOT EXISTS lock_fencing (name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY,"
		" token BIGINT NOT NULL) ENGINE=InnoDB";
	lkc_my_store *s = (lkc_my_store *) store;
	lkc_my_conn *c = hold->session;
	char name[LKC_MY_NAME_LEN + 1];
	char sql[256];
	lkc_rc rc;

	if (c == NULL) {
		return lkc_my_gone(s, hold, err);
	}
	if ((rc = lkc_my_name_of(s, hold->resource, hold->resource_len, name, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "INSERT INTO lock_fencing (name, token) VALUES ('%s', LAST_INSERT_ID(1))"
		" ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1)", name);
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = lkc_my_query(s, &c, sql, lkc_my_deadline(s), 0, NULL, 0, NULL, err);
		if (rc != LKC_ERR_REFUSED || attempt == 1 || mysql_errno(c->my) != ER_NO_SUCH_TABLE) {
			break;
		}
		/* The table is missing (the first token of this database): create it, then ask again. */
		if ((rc = lkc_my_query(s, &c, create, lkc_my_deadline(s), 0, NULL, 0, NULL, err)) != LKC_OK) {
			break;
		}
	}
	if (rc == LKC_OK) {
		rc = lkc_my_int(s, &c, "SELECT LAST_INSERT_ID()", lkc_my_deadline(s), 0, fence, err);
	}
	if (c == NULL) {
		/* The session is gone, and the hold with it. */
		hold->session = NULL;
		return lkc_my_gone_after(s, hold, rc, err);
	}
	if (rc == LKC_ERR_REFUSED && mysql_errno(c->my) == ER_NO_DB_ERROR) {
		return lkc_err_set(err, LKC_ERR_REFUSED, "MySQL at %s: fencing tokens need a database (the DSN's path or the "
			"\"database\" option) for their table lock_fencing", s->endpoint);
	}
	return rc;
}

static void lkc_my_abandon(lkc_store *store, lkc_hold *hold)
{
	/* Ending our session frees what it held; a parent's session is only let go of on our side. */
	(void) store;
	lkc_my_conn_drop(hold->session);
	hold->session = NULL;
}

void lkc_my_destroy(lkc_store *store)
{
	lkc_my_store *s = (lkc_my_store *) store;

	lkc_my_reap(s);
	while (s->idle != NULL) {
		lkc_my_conn *c = s->idle;

		s->idle = c->next;
		c->next = NULL;
		if (s->persistent) {
			lkc_pool_put(&lkc_my_pool, s->pool_key, s->pool_key_len, c);
		} else {
			lkc_my_unpool(c, 1);
		}
	}
	free(s->host);
	free(s->socket);
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
	free(s->table);
	free(s);
}

void lkc_my_pool_shutdown(void)
{
	lkc_pool_shutdown(&lkc_my_pool);
}

void lkc_my_config_init(lkc_my_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = 3306;
	cfg->timeout_ms = 5000;
}

void lkc_my_config_free(lkc_my_config *cfg)
{
	lkc_sql_config_free(cfg);
	lkc_my_config_init(cfg);
}

static char *lkc_my_strdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

lkc_rc lkc_my_open(lkc_store **out, const lkc_my_config *cfg, lkc_err *err)
{
	lkc_my_store *s;
	size_t len;

	if (cfg->host == NULL || cfg->host[0] == '\0') {
		return lkc_err_set(err, LKC_ERR_INVALID, "a MySQL store needs a host or a socket path");
	}
	if (cfg->timeout_ms <= 0) {
		return lkc_err_set(err, LKC_ERR_INVALID, "a MySQL store needs a timeout above 0");
	}
	if (cfg->table_holds && (cfg->dbname == NULL || cfg->dbname[0] == '\0')) {
		return lkc_err_set(err, LKC_ERR_INVALID, "table holds need a database for their table");
	}
	if (cfg->table_holds && cfg->table != NULL && !lkc_my_table_name_ok(cfg->table, strlen(cfg->table))) {
		return lkc_err_set(err, LKC_ERR_INVALID, "the table of table holds must be 1 to 64 characters of [A-Za-z0-9_$]");
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	s->base.ops = cfg->table_holds ? &lkc_my_table_ops : &lkc_my_ops;
	s->kind = cfg->table_holds ? &lkc_my_table_kind : &lkc_my_session_kind;
	s->timeout_ms = cfg->timeout_ms;
	s->persistent = cfg->persistent;
	s->port = cfg->port;
	if (cfg->host[0] == '/') {
		s->socket = strdup(cfg->host);
	} else {
		s->host = strdup(cfg->host);
	}
	s->user = lkc_my_strdup(cfg->user);
	s->password = lkc_my_strdup(cfg->password);
	s->dbname = lkc_my_strdup(cfg->dbname);
	if (cfg->table_holds) {
		s->table = strdup(cfg->table != NULL ? cfg->table : LKC_MY_TABLE_DEFAULT);
	}
	s->prefix = malloc(cfg->prefix_len + 1);
	len = strlen(cfg->host) + 16;
	s->endpoint = malloc(len);
	if ((s->host == NULL && s->socket == NULL) || s->prefix == NULL || s->endpoint == NULL
		|| (cfg->user != NULL && s->user == NULL) || (cfg->password != NULL && s->password == NULL)
		|| (cfg->dbname != NULL && s->dbname == NULL) || (cfg->table_holds && s->table == NULL)) {
		lkc_my_destroy(&s->base);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	if (s->socket != NULL) {
		snprintf(s->endpoint, len, "%s", cfg->host);
	} else {
		snprintf(s->endpoint, len, strchr(cfg->host, ':') != NULL ? "[%s]:%d" : "%s:%d", cfg->host, cfg->port);
	}
	if (cfg->prefix_len > 0) {
		memcpy(s->prefix, cfg->prefix, cfg->prefix_len);
	}
	s->prefix_len = cfg->prefix_len;
	if (s->persistent) {
		/* The whole identity of a session: where, as whom (unset and empty differ), in which database. */
		char port[16];
		const char *parts[8] = { cfg->host, port, s->user ? "+" : "-", s->user ? s->user : "",
			s->password ? "+" : "-", s->password ? s->password : "", s->dbname ? "+" : "-", s->dbname ? s->dbname : "" };
		size_t lens[8];

		snprintf(port, sizeof(port), "%d", s->port);
		for (int i = 0; i < 8; i++) {
			lens[i] = strlen(parts[i]);
		}
		s->pool_key = lkc_pool_key(8, parts, lens, &s->pool_key_len);
		if (s->pool_key == NULL) {
			lkc_my_destroy(&s->base);
			return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}

int lkc_my_table_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > 64) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char) name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '$')) {
			return 0;
		}
	}
	return 1;
}

const char *lkc_my_endpoint(const lkc_store *store)
{
	return ((const lkc_my_store *) store)->endpoint;
}

/* What the server says it is (host name, port, data directory), whatever name or address reached it. */
lkc_rc lkc_my_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char value[1024];
	int null = 0;
	lkc_my_conn *c;
	lkc_rc rc;

	*id = NULL;
	*len = 0;
	if ((rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	rc = lkc_my_query(s, &c, "SELECT CONCAT_WS(' ', @@hostname, @@port, @@datadir)", lkc_my_deadline(s), 0,
		value, sizeof(value), &null, err);
	lkc_my_put(s, c);
	if (rc == LKC_OK) {
		*id = strdup(null ? "" : value);
		*len = *id != NULL ? strlen(*id) : 0;
		if (*id == NULL) {
			rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
		}
	}
	return rc;
}

/*
 * The session holding the name (IS_USED_LOCK) and the name's last fencing
 * token, in one statement; without the fencing table (no token yet, or no
 * database), the holder alone. Owner tokens stay in their processes, and the
 * server shows nobody its GET_LOCK queue: owners, waiters and queue are unknown.
 */
static lkc_rc lkc_my_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	char name[LKC_MY_NAME_LEN + 1];
	char sql[256];
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	lkc_my_conn *c;
	lkc_rc rc;

	out->mode = LKC_SEEN_FREE;
	out->ttl_ms = LKC_TTL_NONE;
	out->holders_known = 1;
	if ((rc = lkc_my_name_of(s, resource, len, name, err)) != LKC_OK || (rc = lkc_my_get(s, &c, err)) != LKC_OK) {
		return rc;
	}
	snprintf(sql, sizeof(sql), "SELECT IS_USED_LOCK('%s'), (SELECT token FROM lock_fencing WHERE name = '%s')", name, name);
	rc = lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, &res, err);
	if (rc == LKC_ERR_REFUSED && c != NULL
		&& (mysql_errno(c->my) == ER_NO_SUCH_TABLE || mysql_errno(c->my) == ER_NO_DB_ERROR)) {
		lkc_err_clear(err);
		snprintf(sql, sizeof(sql), "SELECT IS_USED_LOCK('%s'), NULL", name);
		rc = lkc_my_exec(s, &c, sql, lkc_my_deadline(s), 0, &res, err);
	}
	if (rc == LKC_OK) {
		row = res != NULL && mysql_num_fields(res) == 2 ? mysql_fetch_row(res) : NULL;
		if (row == NULL) {
			rc = lkc_err_set(err, LKC_ERR_PROTOCOL, "MySQL at %s: unexpected answer", s->endpoint);
		} else if (row[0] != NULL) {
			out->mode = LKC_SEEN_WRITE;
			if (lkc_inspect_holder(out, strtoll(row[0], NULL, 10)) != 0) {
				rc = lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
			}
		}
		if (row != NULL && row[1] != NULL) {
			out->fence = strtoll(row[1], NULL, 10);
		}
		mysql_free_result(res);
	}
	if (c != NULL) {
		lkc_my_put(s, c);
	}
	return rc;
}

static const lkc_store_ops lkc_my_session_kind = {
	.name = "MySQL",
	.caps = LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND,
	.acquire = lkc_my_acquire,
	.release = lkc_my_release,
	.refresh = lkc_my_refresh,
	.check = lkc_my_check,
	.is_locked = lkc_my_is_locked,
	.force_release = lkc_my_force_release,
	.abandon = lkc_my_abandon,
	.destroy = lkc_my_destroy,
	.fence = lkc_my_fence,
	.settle = NULL,
	.wait_free = lkc_my_wait_free,
	.inspect = lkc_my_inspect,
	.stats = &lkc_stats_of[LKC_KIND_MYSQL],
};

/*
 * Every operation of either kind runs under one bound: the timeout (plus the
 * wait, for a call that waits) from the start of the call, so that a step after
 * one that timed out (asking on a new session whether the hold is gone) cannot
 * add a timeout of its own. A call nested in our own I/O (from a signal
 * handler) has its own bound, and the outer call gets its own back.
 */
static uint64_t lkc_my_begin(lkc_my_store *s, int64_t wait_ms)
{
	uint64_t until = s->until;

	s->until = 0;
	if (wait_ms != LKC_WAIT_FOREVER) {
		s->until = lkc_my_deadline(s) + (uint64_t) wait_ms * 1000000u;
	}
	return until;
}

#define LKC_MY_BOUNDED(s, wait_ms, call) do { \
	uint64_t until_ = lkc_my_begin((s), (wait_ms)); \
	lkc_rc rc_ = (call); \
	(s)->until = until_; \
	return rc_; \
} while (0)

static lkc_rc lkc_myb_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode, int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, wait_ms, s->kind->acquire(store, hold, mode, ttl_ms, wait_ms, err));
}

static lkc_rc lkc_myb_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->release(store, hold, delay_ms, err));
}

static lkc_rc lkc_myb_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->refresh(store, hold, ttl_ms, err));
}

static lkc_rc lkc_myb_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->check(store, hold, err));
}

static lkc_rc lkc_myb_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->is_locked(store, resource, len, locked, err));
}

static lkc_rc lkc_myb_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->force_release(store, resource, len, err));
}

static lkc_rc lkc_myb_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->fence(store, hold, fence, err));
}

static lkc_rc lkc_myb_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, wait_ms, s->kind->wait_free(store, resource, len, wait_ms, err));
}

static lkc_rc lkc_myb_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, s->kind->inspect(store, resource, len, out, err));
}

static void lkc_myb_settle(lkc_store *store, lkc_hold *hold)
{
	lkc_my_store *s = (lkc_my_store *) store;
	uint64_t until = lkc_my_begin(s, 0);

	s->kind->settle(store, hold);
	s->until = until;
}

static lkc_rc lkc_myb_server_id(lkc_store *store, char **id, size_t *len, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;

	LKC_MY_BOUNDED(s, 0, lkc_my_server_id(store, id, len, err));
}

static void lkc_myb_abandon(lkc_store *store, lkc_hold *hold)
{
	((lkc_my_store *) store)->kind->abandon(store, hold);
}

/*
 * A store of the same settings whose sessions are its own and never pooled,
 * for the auto-refresh thread (table holds only: session holds do not expire).
 * Its refresh extends the row alone (lkc_myt_refresh); the sessions it opens
 * are on that thread's busy list (lkc_my_busy is per thread), never the host's.
 */
static lkc_rc lkc_myb_twin(lkc_store *store, lkc_store **out, lkc_err *err)
{
	lkc_my_store *s = (lkc_my_store *) store;
	lkc_my_config cfg;
	lkc_rc rc;

	*out = NULL;
	/* Borrowed strings: lkc_my_open copies what it keeps. */
	lkc_my_config_init(&cfg);
	cfg.host = s->socket != NULL ? s->socket : s->host;
	cfg.port = s->port;
	cfg.user = s->user;
	cfg.password = s->password;
	cfg.dbname = s->dbname;
	cfg.prefix = (char *) s->prefix;
	cfg.prefix_len = s->prefix_len;
	cfg.timeout_ms = s->timeout_ms;
	cfg.table_holds = 1;
	cfg.table = s->table;
	if ((rc = lkc_my_open(out, &cfg, err)) != LKC_OK) {
		return rc;
	}
	((lkc_my_store *) *out)->twin = 1;
	return lkc_store_twin_ns(out, store, err);
}

static const lkc_store_ops lkc_my_ops = {
	.name = "MySQL",
	.caps = LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND,
	.acquire = lkc_myb_acquire,
	.release = lkc_myb_release,
	.refresh = lkc_myb_refresh,
	.check = lkc_myb_check,
	.is_locked = lkc_myb_is_locked,
	.force_release = lkc_myb_force_release,
	.abandon = lkc_myb_abandon,
	.destroy = lkc_my_destroy,
	.fence = lkc_myb_fence,
	.settle = NULL,
	.wait_free = lkc_myb_wait_free,
	.server_id = lkc_myb_server_id,
	.inspect = lkc_myb_inspect,
	.stats = &lkc_stats_of[LKC_KIND_MYSQL],
};

static const lkc_store_ops lkc_my_table_ops = {
	.name = "MySQL",
	.caps = LKC_CAP_EXPIRY | LKC_CAP_FENCING,
	.acquire = lkc_myb_acquire,
	.release = lkc_myb_release,
	.refresh = lkc_myb_refresh,
	.check = lkc_myb_check,
	.is_locked = lkc_myb_is_locked,
	.force_release = lkc_myb_force_release,
	.abandon = lkc_myb_abandon,
	.destroy = lkc_my_destroy,
	.fence = lkc_myb_fence,
	.settle = lkc_myb_settle,
	.wait_free = lkc_myb_wait_free,
	.server_id = lkc_myb_server_id,
	.inspect = lkc_myb_inspect,
	.twin = lkc_myb_twin,
	.stats = &lkc_stats_of[LKC_KIND_MYSQL],
};
