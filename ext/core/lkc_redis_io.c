/*
 * The Redis store's exchanges with one server (see lkc_redis_int.h): the
 * budget of an operation, the store's connection (its waits, which a signal
 * the host wants handled may end, and a child forked inside them), sending
 * commands and reading their replies, connecting and logging in (AUTH,
 * SELECT, ROLE), and the connections a store keeps besides its current one
 * (idle ones to other nodes, the process's pool).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"
#include "lkc_fan.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

/* The monotonic time ms milliseconds from now, saturating instead of wrapping for absurd spans. */
uint64_t lkc_rs_deadline(int64_t ms)
{
	uint64_t now = lkc_now_ns();

	if ((uint64_t) ms >= (UINT64_MAX - now) / 1000000u) {
		return UINT64_MAX;
	}
	return now + (uint64_t) ms * 1000000u;
}

/* Starts the budget of one operation: timeout_ms from now. */
void lkc_rs_op_start(const lkc_rs_store *s, lkc_rs_op *op)
{
	op->deadline = lkc_rs_deadline(s->cfg.timeout_ms);
	op->sent = 0;
	op->recovered = 0;
}

/* Whether a failed command may be recovered by one reconnect within the operation's budget. */
int lkc_rs_may_recover(const lkc_rs_op *op, lkc_rc rc)
{
	/* Not in a combined call that no longer waits for this server: another connection would only be closed again. */
	return rc == LKC_ERR_IO && op->sent && !op->recovered && lkc_ms_left(op->deadline) > 0 && !lkc_fan_given_up();
}

/* Drops the store's connection; the next operation connects anew. */
void lkc_rs_discard(lkc_rs_store *s)
{
	lkc_rconn_close(s->conn);
	s->conn = NULL;
	s->conn_node = -1;
	s->conn_gen++;
	s->busy = 0;
}

/*
 * Waits until fd is ready for events or the deadline passes: 1 ready, 0 timed
 * out, -1 failed (errno), -2 interrupted. A signal the host wants handled is
 * remembered for the waiting acquire; it ends the wait only in an abortable
 * exchange (a waiter's sleep), any other one is short and runs to its end.
 */
static int lkc_rs_wait_fd(lkc_rs_store *s, int fd, short events, uint64_t deadline)
{
	if (lkc_fan_inside()) {
		/* One of several calls side by side (the combined store): the fan waits for all at once. */
		return lkc_fan_wait(fd, events, deadline);
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
		int64_t ms = lkc_ms_left(deadline);
		int n;

		if (ms == 0) {
			/* Late to look (a busy machine): what came in time is still read. */
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
			if (lkc_interrupted()) {
				s->interrupted = 1;
			}
			if (s->interrupted && s->abortable) {
				return -2;
			}
		}
	}
}

/*
 * Turns a failed step into an error and drops the connection: waited 0 timed
 * out, -1 a poll error (errnum), 1 the connection itself broke.
 */
static lkc_rc lkc_rs_io_fail(lkc_rs_store *s, int waited, int errnum, const char *doing, lkc_err *err)
{
	char cause[256];
	lkc_rc code = LKC_ERR_IO;

	if (waited == 0) {
		snprintf(cause, sizeof(cause), "timed out after %lld ms %s",
			(long long) s->cfg.timeout_ms, doing);
	} else {
		char text[160];
		const char *said = "";
		lkc_rconn_err kind = LKC_RCONN_ERR_IO;

		if (waited > 0 && s->conn != NULL) {
			kind = lkc_rconn_error(s->conn, &errnum, &said);
		}
		lkc_rs_quote_errstr(s, errnum != 0 ? strerror(errnum) : said, text, sizeof(text));
		switch (kind) {
			case LKC_RCONN_ERR_EOF:
				snprintf(cause, sizeof(cause), "connection closed by the server %s", doing);
				break;
			case LKC_RCONN_ERR_PROTOCOL:
				code = LKC_ERR_PROTOCOL;
				snprintf(cause, sizeof(cause), "protocol error %s: %s", doing, text);
				break;
			case LKC_RCONN_ERR_OOM:
				code = LKC_ERR_SYSTEM;
				snprintf(cause, sizeof(cause), "out of memory %s", doing);
				break;
			case LKC_RCONN_ERR_TLS:
				snprintf(cause, sizeof(cause), "%s", text);
				break;
			default:
				snprintf(cause, sizeof(cause), "connection error %s: %s", doing, text);
				break;
		}
	}
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, code, "%s", cause);
}

/* Waits for what a step of the connection wants: as lkc_rs_wait_fd. */
static int lkc_rs_wait_step(lkc_rs_store *s, lkc_rconn_step step, uint64_t deadline)
{
	int w = lkc_rs_wait_fd(s, lkc_rconn_fd(s->conn), step == LKC_RCONN_WANT_WRITE ? POLLOUT : POLLIN, deadline);

	/*
	 * A signal handler that ran in the wait may have forked: the child must not go
	 * on with its parent's exchange (it could read the parent's hand-off, or break
	 * its TLS session), so it drops its copy unused.
	 */
	return lkc_rconn_pid(s->conn) != lkc_pid() ? -3 : w;
}

/* Ends the call of a child forked inside it (lkc_rs_wait_step's -3), without touching the parent's connection. */
static lkc_rc lkc_rs_io_forked(lkc_rs_store *s, lkc_err *err)
{
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, LKC_ERR_STATE, "the process forked inside this call; the child cannot go on with it");
}

/* Frees the first n replies. */
void lkc_rs_free_replies(redisReply **replies, int n)
{
	for (int i = 0; i < n; i++) {
		if (replies[i] != NULL) {
			freeReplyObject(replies[i]);
			replies[i] = NULL;
		}
	}
}

/* Ends an exchange that an interrupt cut short: the connection is mid-command, so it goes. */
static lkc_rc lkc_rs_io_interrupted(lkc_rs_store *s, lkc_err *err)
{
	lkc_rs_discard(s);
	return lkc_rs_fail(s, err, LKC_INTERRUPTED, "the wait for the lock was interrupted");
}

/* Fills err for an error reply to what; the server's words are quoted, never the password. */
lkc_rc lkc_rs_refused(const lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err)
{
	char text[256];

	lkc_rs_quote(s, reply->str, reply->len, text, sizeof(text));
	return lkc_rs_fail(s, err, LKC_ERR_REFUSED, "%s failed: %s", what, text);
}

/*
 * Reads one reply on the store's connection by op's deadline. sent: the
 * command went out just now and nothing of its answer is buffered, so the
 * first look would find nothing: it waits first (a read that fails is a
 * system call per round trip).
 */
static lkc_rc lkc_rs_read_reply(lkc_rs_store *s, lkc_rs_op *op, int sent, redisReply **reply, lkc_err *err)
{
	for (;;) {
		lkc_rconn_step step = sent ? LKC_RCONN_WANT_READ : lkc_rconn_reply(s->conn, reply);
		int w;

		sent = 0;
		if (step == LKC_RCONN_DONE) {
			return LKC_OK;
		}
		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_io_fail(s, 1, 0, "waiting for a reply", err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -2 || w == -3) {
			return w == -3 ? lkc_rs_io_forked(s, err) : lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_io_fail(s, w, errno, "waiting for a reply", err);
		}
	}
}

/*
 * Sends n commands in one write on the current connection and reads their n
 * replies, all before the operation's deadline. Any failure drops the
 * connection; op->sent then says whether the server may have run them.
 */
lkc_rc lkc_rs_exchange(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmds, int n,
	redisReply **replies, lkc_err *err)
{
	static const char *ping_argv[1] = { "PING" };
	static const size_t ping_lens[1] = { 4 };
	lkc_rconn *conn = s->conn;
	lkc_rconn_step step;
	int got = 0, w, ping, sent;

	op->sent = 0;
	for (int i = 0; i < n; i++) {
		replies[i] = NULL;
	}
	if (lkc_ms_left(op->deadline) == 0) {
		return lkc_rs_io_fail(s, 0, 0, "before sending a command", err);
	}
	ping = lkc_rconn_take_ping(conn);
	if (ping && !lkc_rconn_append(conn, 1, ping_argv, ping_lens)) {
		lkc_rs_discard(s);
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
	}
	for (int i = 0; i < n; i++) {
		if (!lkc_rconn_append(conn, cmds[i].argc, cmds[i].argv, cmds[i].lens)) {
			lkc_rs_discard(s);
			return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory building a command");
		}
	}
	op->sent = 1;
	s->write_gen = s->conn_gen;
	/*
	 * From the first byte sent until the last reply is read the connection is
	 * busy: a bailout in between (a fatal error in a signal handler that runs
	 * in our waits) leaves it so, and then it is closed, never reused.
	 */
	s->busy = 1;
	/* The socket is non-blocking: write first, and wait only when the kernel's buffer is full. */
	while ((step = lkc_rconn_flush(conn)) != LKC_RCONN_DONE) {
		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_io_fail(s, 1, 0, "sending a command", err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -3) {
			return lkc_rs_io_forked(s, err);
		}
		if (w == -2) {
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_io_fail(s, w, errno, "sending a command", err);
		}
	}
	if (!s->tentative) {
		/* Written: a combined call that delivers (a release) may now give this server up. */
		lkc_fan_sent();
	}
	sent = !lkc_rconn_buffered(conn);
	if (ping) {
		redisReply *pong;
		lkc_rc rc = lkc_rs_read_reply(s, op, sent, &pong, err);

		if (rc != LKC_OK) {
			return rc;
		}
		if (pong->type == REDIS_REPLY_ERROR) {
			/* NOAUTH: what follows was refused before it ran, and the server may hang up. */
			rc = lkc_rs_refused(s, "PING", pong, err);
			freeReplyObject(pong);
			lkc_rs_discard(s);
			return rc;
		}
		freeReplyObject(pong);
		sent = 0;
	}
	while (got < n) {
		lkc_rc rc = lkc_rs_read_reply(s, op, sent && got == 0, &replies[got], err);

		if (rc != LKC_OK) {
			lkc_rs_free_replies(replies, got);
			return rc;
		}
		got++;
	}
	s->busy = 0;
	return LKC_OK;
}

/* Fills err for a reply of a type that what never returns. */
lkc_rc lkc_rs_unexpected(lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err)
{
	if (reply->type == REDIS_REPLY_ERROR) {
		return lkc_rs_refused(s, what, reply, err);
	}
	return lkc_rs_fail(s, err, LKC_ERR_PROTOCOL, "unexpected reply to %s (type %d)", what, reply->type);
}

/* Whether reply is the status "OK". */
int lkc_rs_is_ok(const redisReply *reply)
{
	return reply->type == REDIS_REPLY_STATUS && reply->len == 2 && memcmp(reply->str, "OK", 2) == 0;
}

/* Whether a reply is the simple status text. */
int lkc_rs_is_status(const redisReply *reply, const char *text)
{
	size_t len = strlen(text);

	return reply->type == REDIS_REPLY_STATUS && reply->len == len && memcmp(reply->str, text, len) == 0;
}

/* Reports a connect or TLS handshake that failed (waited as lkc_rs_io_fail), and drops the connection. */
static lkc_rc lkc_rs_connect_failed(lkc_rs_store *s, int waited, int errnum, lkc_err *err)
{
	char text[160];
	const char *said = "";
	lkc_rconn_err kind = LKC_RCONN_ERR_IO;

	if (waited == 0) {
		int handshake = s->conn != NULL && lkc_rconn_in_handshake(s->conn);

		lkc_rs_discard(s);
		/* A plain server behind rediss:// waits for the rest of a "command" that never ends. */
		return lkc_rs_fail(s, err, LKC_ERR_IO, "cannot connect: timed out after %lld ms%s",
			(long long) s->cfg.timeout_ms,
			handshake ? " in the TLS handshake (does the server speak TLS on this port?)" : "");
	}
	if (waited > 0) {
		kind = lkc_rconn_error(s->conn, &errnum, &said);
	}
	lkc_rs_quote_errstr(s, errnum != 0 ? strerror(errnum) : said, text, sizeof(text));
	lkc_rs_discard(s);
	if (kind == LKC_RCONN_ERR_OOM) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory connecting");
	}
	return lkc_rs_fail(s, err, LKC_ERR_IO, "cannot connect: %s", text);
}

/*
 * Opens a new connection to node (the one server when the store has one),
 * authenticates and selects the database, all within the operation's
 * deadline; a Sentinel's master must also say it is one (else s->demoted).
 */
static lkc_rc lkc_rs_connect(lkc_rs_store *s, lkc_rs_op *op, int node, lkc_rs_peer peer, lkc_err *err)
{
	const char *auth_argv[3], *select_argv[2], *role_argv[1] = { "ROLE" };
	size_t auth_lens[3], select_lens[2], role_lens[1] = { 4 };
	const char *user = peer == LKC_RS_TO_SENTINEL ? s->cfg.sentinel_username : s->cfg.username;
	const char *password = peer == LKC_RS_TO_SENTINEL ? s->cfg.sentinel_password : s->cfg.password;
	int database = peer == LKC_RS_TO_SENTINEL ? 0 : s->cfg.database;
	lkc_rconn_target target = { .host = s->cfg.host, .port = s->cfg.port, .socket_path = s->cfg.socket_path, .tls = s->tls,
		.deadline = op->deadline };
	lkc_rs_cmd cmds[3];
	redisReply *replies[3];
	char db[16];
	int n = 0, auth = -1, select = -1, role = -1;
	lkc_rconn_step step;
	lkc_rc rc = LKC_OK;

	op->sent = 0;
	s->demoted = 0;
	if (s->topo.kind != LKC_REDIS_SINGLE) {
		target.host = s->topo.nodes[node].host;
		target.port = s->topo.nodes[node].port;
		target.socket_path = NULL;
	}
	if (lkc_ms_left(op->deadline) == 0) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before connecting",
			(long long) s->cfg.timeout_ms);
	}
	s->conn = lkc_rconn_open(&target, &step);
	if (s->conn == NULL) {
		return lkc_rs_fail(s, err, LKC_ERR_SYSTEM, "out of memory connecting");
	}
	s->conn_node = node;
	/* The connect and any TLS handshake run within the operation's deadline, as every command does. */
	while (step != LKC_RCONN_DONE) {
		int w;

		if (step == LKC_RCONN_FAILED) {
			return lkc_rs_connect_failed(s, 1, 0, err);
		}
		w = lkc_rs_wait_step(s, step, op->deadline);
		if (w == -3) {
			return lkc_rs_io_forked(s, err);
		}
		if (w == -2) {
			return lkc_rs_io_interrupted(s, err);
		}
		if (w <= 0) {
			return lkc_rs_connect_failed(s, w, errno, err);
		}
		step = lkc_rconn_handshake(s->conn);
	}

	if (password != NULL || user != NULL) {
		int argc = 0;

		auth_argv[argc] = "AUTH";
		auth_lens[argc++] = 4;
		if (user != NULL) {
			auth_argv[argc] = user;
			auth_lens[argc++] = strlen(user);
		}
		/* An ACL user without a password sends an empty one, which a nopass user accepts. */
		auth_argv[argc] = password != NULL ? password : "";
		auth_lens[argc] = strlen(auth_argv[argc]);
		argc++;
		auth = n;
		cmds[n++] = (lkc_rs_cmd) { argc, auth_argv, auth_lens };
	}
	if (database != 0) {
		snprintf(db, sizeof(db), "%d", database);
		select_argv[0] = "SELECT";
		select_lens[0] = 6;
		select_argv[1] = db;
		select_lens[1] = strlen(db);
		select = n;
		cmds[n++] = (lkc_rs_cmd) { 2, select_argv, select_lens };
	}
	if (peer == LKC_RS_TO_MASTER) {
		role = n;
		cmds[n++] = (lkc_rs_cmd) { 1, role_argv, role_lens };
	}
	if (n == 0) {
		/* Script calls are long (see "Declared keys"); a sentinel gets short commands only. */
		if (peer != LKC_RS_TO_SENTINEL) {
			lkc_rconn_mark_ping(s->conn);
		}
		return LKC_OK;
	}
	s->tentative++;
	rc = lkc_rs_exchange(s, op, cmds, n, replies, err);
	s->tentative--;
	if (rc != LKC_OK) {
		return rc;
	}
	if (auth >= 0 && !lkc_rs_is_ok(replies[auth])) {
		rc = replies[auth]->type == REDIS_REPLY_ERROR
			? lkc_rs_refused(s, "authentication", replies[auth], err)
			: lkc_rs_unexpected(s, "AUTH", replies[auth], err);
	} else if (select >= 0 && !lkc_rs_is_ok(replies[select])) {
		char what[48];

		snprintf(what, sizeof(what), "selecting database %d", database);
		rc = lkc_rs_unexpected(s, what, replies[select], err);
	} else if (role >= 0 && !lkc_rtopo_is_master(replies[role])) {
		/* The sentinels named a server that is a replica now: a failover under way, or a sentinel behind. */
		s->demoted = 1;
		rc = replies[role]->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "ROLE", replies[role], err)
			: lkc_rs_fail(s, err, LKC_ERR_REFUSED, "the server the sentinels named is not a master (ROLE)");
	}
	lkc_rs_free_replies(replies, n);
	if (rc != LKC_OK) {
		lkc_rs_discard(s);
	}
	return rc;
}

/* The pool key of a connection to node: the store's settings and the node's address. NULL when out of memory. */
static const char *lkc_rs_node_pool_key(lkc_rs_store *s, int node, size_t *len)
{
	lkc_rtopo_node *n;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		*len = s->pool_key_len;
		return s->pool_key;
	}
	n = &s->topo.nodes[node];
	if (n->pool_key == NULL) {
		n->pool_key = lkc_rs_format("%s n%zu:%s", s->pool_key, strlen(n->name), n->name);
		if (n->pool_key == NULL) {
			return NULL;
		}
		n->pool_key_len = strlen(n->pool_key);
	}
	*len = n->pool_key_len;
	return n->pool_key;
}

/* Lets go of a connection to node: pooled when the store is persistent and it is healthy and idle, else closed. */
void lkc_rs_put_back(lkc_rs_store *s, lkc_rconn *c, int node)
{
	const char *key;
	size_t key_len;

	if (c != NULL && s->cfg.persistent && node >= 0 && lkc_rconn_pid(c) == lkc_pid() && lkc_rconn_idle(c)
		&& (key = lkc_rs_node_pool_key(s, node, &key_len)) != NULL) {
		lkc_rconn_pool_put(key, key_len, c);
		return;
	}
	lkc_rconn_close(c);
}

/* Sets the current connection aside among the idle ones (Sentinel, Cluster), so that it serves its node again later. */
void lkc_rs_shelve(lkc_rs_store *s)
{
	if (s->conn == NULL) {
		return;
	}
	if (s->busy || s->conn_node < 0 || s->topo.kind == LKC_REDIS_SINGLE) {
		lkc_rs_discard(s);
		return;
	}
	if (s->nidle == LKC_RS_IDLE_MAX) {
		/* The oldest goes. */
		lkc_rs_put_back(s, s->idle[0], s->idle_node[0]);
		memmove(s->idle, s->idle + 1, (LKC_RS_IDLE_MAX - 1) * sizeof(s->idle[0]));
		memmove(s->idle_node, s->idle_node + 1, (LKC_RS_IDLE_MAX - 1) * sizeof(s->idle_node[0]));
		s->nidle--;
	}
	s->idle[s->nidle] = s->conn;
	s->idle_node[s->nidle++] = s->conn_node;
	s->conn = NULL;
	s->conn_node = -1;
	s->conn_gen++;
}

/* Takes an idle connection of this process to node from the store's set, or NULL. */
static lkc_rconn *lkc_rs_unshelve(lkc_rs_store *s, int node)
{
	for (int i = 0; i < s->nidle; i++) {
		lkc_rconn *c = s->idle[i];

		if (s->idle_node[i] != node) {
			continue;
		}
		s->nidle--;
		memmove(s->idle + i, s->idle + i + 1, (size_t) (s->nidle - i) * sizeof(s->idle[0]));
		memmove(s->idle_node + i, s->idle_node + i + 1, (size_t) (s->nidle - i) * sizeof(s->idle_node[0]));
		if (lkc_rconn_pid(c) == lkc_pid() && lkc_rconn_idle(c)) {
			return c;
		}
		lkc_rconn_close(c);
		return NULL;
	}
	return NULL;
}

/* Names the node of the coming connection in messages. */
static void lkc_rs_at(lkc_rs_store *s, const char *role, int node)
{
	snprintf(s->at, sizeof(s->at), "%s %s", role, s->topo.nodes[node].name);
}

/*
 * Makes s->conn a connection of this process to node: the current one, an
 * idle one of the store's, a pooled one, or a new one (see lkc_rs_connect).
 */
lkc_rc lkc_rs_use(lkc_rs_store *s, lkc_rs_op *op, int node, lkc_rs_peer peer, lkc_err *err)
{
	if (s->conn != NULL && lkc_rconn_pid(s->conn) != lkc_pid()) {
		lkc_rs_discard(s);
	}
	if (s->conn != NULL && s->conn_node == node) {
		return LKC_OK;
	}
	if (lkc_fan_given_up()) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "given up by a combined call that a majority of servers answered");
	}
	if (s->topo.kind != LKC_REDIS_SINGLE) {
		lkc_rs_shelve(s);
		lkc_rs_at(s, peer == LKC_RS_TO_SENTINEL ? "sentinel" : peer == LKC_RS_TO_MASTER ? "master" : "node", node);
		if (peer == LKC_RS_TO_SENTINEL) {
			return lkc_rs_connect(s, op, node, peer, err);
		}
		s->conn = lkc_rs_unshelve(s, node);
	}
	if (s->conn == NULL && s->cfg.persistent) {
		size_t key_len;
		const char *key = lkc_rs_node_pool_key(s, node, &key_len);

		s->conn = key != NULL ? lkc_rconn_pool_take(key, key_len) : NULL;
	}
	if (s->conn != NULL) {
		s->conn_node = node;
		return LKC_OK;
	}
	return lkc_rs_connect(s, op, node, peer, err);
}
