/*
 * Which server gets a Redis key's commands (see lkc_redis_int.h), over the
 * topology layer (lkc_redis_topo.c), which keeps what is known and does no
 * I/O: this file asks. One server: the configured one. Sentinel: the master
 * the sentinels name, asked again now and then. Cluster: the master of the
 * key's slot in the slot map, read from the nodes, and the redirections
 * (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, READONLY) a command meets on the way.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The most commands one exchange sends (the acquire transaction). */
#define LKC_RS_CMDS_MAX 7
/* Redirections (MOVED, ASK) one command may follow: a slot moves once or twice while a command is under way. */
#define LKC_RS_REDIRECTS_MAX 5
/*
 * How long a Sentinel store goes on with a master before it asks the sentinels
 * again (ms): a master cut off and back after a failover takes writes until
 * the sentinels demote it (about 10 s, see docs/redis.md); a store that asks
 * again leaves it once the sentinels name the new one. A second's round trip
 * to a sentinel, shared by the stores of the process.
 */
#define LKC_RS_SENTINEL_RECHECK_MS 1000
/* The longest pause between two tries of a command the cluster asked to try again (TRYAGAIN, CLUSTERDOWN), ms. */
#define LKC_RS_RETRY_NAP_MAX 100

/* Sleeps ms, or less when the operation's deadline comes first. */
static void lkc_rs_nap(const lkc_rs_op *op, int64_t ms)
{
	int64_t left = lkc_ms_left(op->deadline);
	struct timespec ts;

	if (left < ms) {
		ms = left;
	}
	ts.tv_sec = (time_t) (ms / 1000);
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/*
 * Asks the sentinels, in the order given, for the master's address, each
 * within its share of what is left of the operation's time; the answer is
 * the topology's master. LKC_ERR_IO names every sentinel tried when none
 * named it.
 */
static lkc_rc lkc_rs_ask_sentinels(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	const char *argv[3] = { "SENTINEL", "get-master-addr-by-name", s->cfg.master_name };
	size_t lens[3] = { 8, 23, strlen(s->cfg.master_name) };
	lkc_rs_cmd cmd = { 3, argv, lens };
	char tried[sizeof(err->msg)];
	size_t used = 0, skip = strlen(s->label) + 2;
	lkc_rc last = LKC_ERR_IO;

	tried[0] = '\0';
	lkc_rs_shelve(s);
	for (int i = 0; i < s->topo.nseeds; i++) {
		lkc_rs_op sub = { .deadline = op->deadline };
		int64_t left = lkc_ms_left(op->deadline);
		redisReply *reply;
		lkc_rc rc;

		if (left == 0) {
			break;
		}
		/* A sentinel that does not answer leaves time for the others. */
		if (i + 1 < s->topo.nseeds) {
			sub.deadline = lkc_rs_deadline(left / (s->topo.nseeds - i) > 0 ? left / (s->topo.nseeds - i) : 1);
		}
		rc = lkc_rs_use(s, &sub, i, LKC_RS_TO_SENTINEL, err);
		if (rc == LKC_OK) {
			s->tentative++;
			rc = lkc_rs_exchange(s, &sub, &cmd, 1, &reply, err);
			s->tentative--;
		}
		if (rc == LKC_OK) {
			if (lkc_rtopo_read_master(&s->topo, reply) >= 0) {
				s->topo.checked_ns = lkc_now_ns();
				freeReplyObject(reply);
				lkc_rs_discard(s);
				s->at[0] = '\0';
				return LKC_OK;
			}
			rc = reply->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "SENTINEL get-master-addr-by-name", reply, err)
				: lkc_rs_fail(s, err, LKC_ERR_IO, "does not know master \"%s\"", s->cfg.master_name);
			freeReplyObject(reply);
		}
		lkc_rs_discard(s);
		if (rc == LKC_ERR_SYSTEM) {
			return rc;
		}
		last = rc == LKC_ERR_REFUSED ? LKC_ERR_REFUSED : last;
		/* err reads "LABEL: sentinel h:p: cause": the part after the label goes into the list. */
		if (strlen(err->msg) > skip && used + 2 < sizeof(tried)) {
			used += (size_t) snprintf(tried + used, sizeof(tried) - used, "%s%s", used > 0 ? "; " : "", err->msg + skip);
			if (used >= sizeof(tried)) {
				used = sizeof(tried) - 1;
			}
		}
	}
	s->at[0] = '\0';
	if (used == 0) {
		return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before a sentinel could be asked",
			(long long) s->cfg.timeout_ms);
	}
	return lkc_rs_fail(s, err, last, "no sentinel named the master (%s)", tried);
}

/*
 * Reads the cluster's slot map (CLUSTER SLOTS) from the first node that
 * answers, the seeds first, then the nodes the last map named.
 */
static lkc_rc lkc_rs_read_map(lkc_rs_store *s, lkc_rs_op *op, lkc_err *err)
{
	const char *argv[2] = { "CLUSTER", "SLOTS" };
	size_t lens[2] = { 7, 5 };
	lkc_rs_cmd cmd = { 2, argv, lens };
	int nnodes = s->topo.nnodes;
	/* LKC_OK until a node was asked: none was when the time was up first. */
	lkc_rc rc = LKC_OK;

	for (int k = 0; k < nnodes; k++) {
		/* The node the store is connected to answers first: no connect. */
		int i = k == 0 && s->conn != NULL && s->conn_node >= 0 ? s->conn_node : k;
		lkc_rs_op sub = { .deadline = op->deadline };
		int64_t left = lkc_ms_left(op->deadline);
		redisReply *reply;

		if (k > 0 && i == s->conn_node) {
			continue;
		}
		if (left == 0) {
			break;
		}
		if (k + 1 < nnodes) {
			sub.deadline = lkc_rs_deadline(left / 2 > 0 ? left / 2 : 1);
		}
		rc = lkc_rs_use(s, &sub, i, LKC_RS_TO_SERVER, err);
		if (rc == LKC_OK) {
			s->tentative++;
			rc = lkc_rs_exchange(s, &sub, &cmd, 1, &reply, err);
			s->tentative--;
		}
		if (rc == LKC_OK) {
			if (lkc_rtopo_read_slots(&s->topo, reply, i) == 0) {
				freeReplyObject(reply);
				return LKC_OK;
			}
			rc = reply->type == REDIS_REPLY_ERROR ? lkc_rs_refused(s, "CLUSTER SLOTS", reply, err)
				: lkc_rs_fail(s, err, LKC_ERR_PROTOCOL, "CLUSTER SLOTS answered no slot map");
			freeReplyObject(reply);
		}
		if (rc == LKC_ERR_SYSTEM) {
			return rc;
		}
	}
	if (rc == LKC_OK) {
		rc = lkc_rs_fail(s, err, LKC_ERR_IO, "timed out after %lld ms before the slot map was read",
			(long long) s->cfg.timeout_ms);
	}
	return rc;
}

/*
 * Asks the sentinels again whether the master is still the one in use, within
 * a quarter of the timeout: a master they no longer name is left now (the
 * next command goes to the new one). When none answers, the store goes on
 * with the master it has and asks again a period later.
 */
static void lkc_rs_recheck_master(lkc_rs_store *s, lkc_rs_op *op)
{
	int was = s->topo.master;
	int64_t quarter = s->cfg.timeout_ms / 4 > 0 ? s->cfg.timeout_ms / 4 : 1;
	lkc_rs_op sub = *op;
	uint64_t by = lkc_rs_deadline(quarter);
	lkc_err ignored;

	if (by < sub.deadline) {
		sub.deadline = by;
	}
	s->topo.master = -1;
	if (lkc_rs_ask_sentinels(s, &sub, &ignored) != LKC_OK) {
		s->topo.master = was;
		s->topo.checked_ns = lkc_now_ns();
		return;
	}
	lkc_rtopo_remember(&s->topo, s->topo_key, s->topo_key_len);
}

/*
 * Makes s->conn the connection to the server that gets the commands of key:
 * the one server, a Sentinel's master, or the master of key's slot in a
 * cluster. Once that is known it costs a lookup; else the sentinels are
 * asked or the slot map is read, and a master that cannot be reached or is
 * a replica now is looked for again until the operation's deadline.
 */
static lkc_rc lkc_rs_ensure(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, lkc_err *err)
{
	int64_t nap = 10;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		if (s->conn != NULL && lkc_rconn_pid(s->conn) != lkc_pid()) {
			lkc_rs_discard(s);
		}
		if (s->conn != NULL) {
			return LKC_OK;
		}
		return lkc_rs_use(s, op, 0, LKC_RS_TO_SERVER, err);
	}
	if (s->topo.kind == LKC_REDIS_SENTINEL && s->topo.master >= 0
		&& lkc_now_ns() - s->topo.checked_ns > (uint64_t) LKC_RS_SENTINEL_RECHECK_MS * 1000000u) {
		lkc_rs_recheck_master(s, op);
	}
	for (int tries = 0; ; tries++) {
		int node = lkc_rtopo_target(&s->topo, key, key_len);
		lkc_rc rc = LKC_OK;

		if (node >= 0 && s->conn != NULL && s->conn_node == node && lkc_rconn_pid(s->conn) == lkc_pid()) {
			return LKC_OK;
		}
		if (node < 0 && !s->recalled) {
			/* Another store of this process may have found it out: a hint, checked by using it. */
			s->recalled = 1;
			if (lkc_rtopo_recall(&s->topo, s->topo_key, s->topo_key_len) == 0) {
				node = lkc_rtopo_target(&s->topo, key, key_len);
			}
		}
		if (node < 0) {
			rc = s->topo.kind == LKC_REDIS_SENTINEL ? lkc_rs_ask_sentinels(s, op, err) : lkc_rs_read_map(s, op, err);
			if (rc == LKC_OK) {
				lkc_rtopo_remember(&s->topo, s->topo_key, s->topo_key_len);
			}
			node = rc == LKC_OK ? lkc_rtopo_target(&s->topo, key, key_len) : -1;
			if (rc == LKC_OK && node < 0) {
				s->at[0] = '\0';
				return lkc_rs_fail(s, err, LKC_ERR_IO, "no master serves slot %u in the cluster's slot map",
					lkc_rtopo_slot(key, key_len));
			}
		}
		if (rc == LKC_OK) {
			rc = lkc_rs_use(s, op, node, s->topo.kind == LKC_REDIS_SENTINEL ? LKC_RS_TO_MASTER : LKC_RS_TO_SERVER, err);
		}
		/* Nobody to ask (no sentinel answered, no node gave a map) ends it; a master that went is looked for again. */
		if (rc == LKC_OK || node < 0 || (rc != LKC_ERR_IO && !s->demoted) || lkc_ms_left(op->deadline) == 0) {
			return rc;
		}
		/* The master went (or is a replica now): find it again, pausing while a failover runs. */
		lkc_rtopo_forget(&s->topo);
		if (tries > 0) {
			lkc_rs_nap(op, nap);
			nap = nap * 2 < LKC_RS_RETRY_NAP_MAX ? nap * 2 : LKC_RS_RETRY_NAP_MAX;
		}
	}
}

/*
 * Connects when needed, then runs n commands once on the server that gets
 * key's commands; a caller that may resend decides after a failure. On a
 * Sentinel or a cluster, what certainly did not run is sent again within
 * the operation's deadline: after MOVED to the node named (the map updated),
 * after ASK once to the node named behind ASKING, after TRYAGAIN or
 * CLUSTERDOWN after a pause, after READONLY (a demoted master) once to the
 * master found anew. A dropped connection makes the store find the master
 * (or read the map) again before its next command.
 */
lkc_rc lkc_rs_send(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, const lkc_rs_cmd *cmds,
	int n, redisReply **replies, lkc_err *err)
{
	static const char *asking_argv[1] = { "ASKING" };
	static const size_t asking_lens[1] = { 6 };
	lkc_rs_cmd with_asking[2 * LKC_RS_CMDS_MAX];
	redisReply *asked[2 * LKC_RS_CMDS_MAX];
	int at[LKC_RS_CMDS_MAX];
	int ask = -1, redirects = 0, readonly = 0, migrating = 0;
	int64_t nap = 5;

	if (s->topo.kind == LKC_REDIS_SINGLE) {
		lkc_rc rc = lkc_rs_ensure(s, op, key, key_len, err);

		return rc != LKC_OK ? rc : lkc_rs_exchange(s, op, cmds, n, replies, err);
	}
	for (;;) {
		lkc_rtopo_redirect redirect = LKC_RTOPO_HERE;
		const redisReply *said = NULL;
		int node = -1;
		lkc_rc rc;

		if (ask >= 0 && n <= LKC_RS_CMDS_MAX) {
			int m = 0, in_multi = 0;

			/* ASKING holds for the next command only, or for a whole transaction when it precedes MULTI. */
			for (int i = 0; i < n; i++) {
				if (!in_multi) {
					with_asking[m++] = (lkc_rs_cmd) { 1, asking_argv, asking_lens };
				}
				if (cmds[i].lens[0] == 5 && strncasecmp(cmds[i].argv[0], "MULTI", 5) == 0) {
					in_multi = 1;
				} else if (cmds[i].lens[0] == 4 && strncasecmp(cmds[i].argv[0], "EXEC", 4) == 0) {
					in_multi = 0;
				}
				at[i] = m;
				with_asking[m++] = cmds[i];
			}
			rc = lkc_rs_use(s, op, ask, LKC_RS_TO_SERVER, err);
			if (rc == LKC_OK) {
				rc = lkc_rs_exchange(s, op, with_asking, m, asked, err);
			}
			if (rc == LKC_OK) {
				for (int i = 0, k = 0; k < m; k++) {
					if (i < n && at[i] == k) {
						replies[i++] = asked[k];
					} else {
						freeReplyObject(asked[k]);
					}
				}
			}
		} else {
			rc = lkc_rs_ensure(s, op, key, key_len, err);
			if (rc == LKC_OK) {
				rc = lkc_rs_exchange(s, op, cmds, n, replies, err);
			}
		}
		if (rc != LKC_OK) {
			if (rc == LKC_ERR_IO || rc == LKC_ERR_PROTOCOL) {
				lkc_rtopo_forget(&s->topo);
			}
			if (migrating && lkc_ms_left(op->deadline) == 0) {
				return lkc_rs_fail(s, err, LKC_ERR_IO, "timed out retrying for slot %u, which is being migrated",
					lkc_rtopo_slot(key, key_len));
			}
			return rc;
		}
		for (int i = 0; i < n && redirect == LKC_RTOPO_HERE; i++) {
			redirect = lkc_rtopo_redirect_of(&s->topo, replies[i], &node);
			said = replies[i];
		}
		if (redirect == LKC_RTOPO_HERE) {
			return LKC_OK;
		}
		if (redirect == LKC_RTOPO_SPLIT) {
			char text[256];

			/* Not sent again: the script may have run in part (see docs/redis.md on resharding). */
			lkc_rs_quote(s, said->str, said->len, text, sizeof(text));
			lkc_rs_free_replies(replies, n);
			return lkc_rs_fail(s, err, LKC_ERR_REFUSED, "slot %u is being migrated: %s", lkc_rtopo_slot(key, key_len), text);
		}
		/*
		 * A node importing a slot serves a command over several keys (a script,
		 * which declares every key it touches; a transaction) only once it has
		 * them all: that is no redirection, but a wait for the migration's end.
		 */
		if (redirect == LKC_RTOPO_TRYAGAIN && ask >= 0) {
			redirects--;
			migrating = 1;
		}
		ask = -1;
		/* The command did not run: it goes again, or the reply is the error. */
		if (lkc_ms_left(op->deadline) == 0 || (redirect == LKC_RTOPO_READONLY && readonly > 0)
			|| ((redirect == LKC_RTOPO_MOVED || redirect == LKC_RTOPO_ASK) && redirects >= LKC_RS_REDIRECTS_MAX)) {
			char text[256];

			lkc_rs_quote(s, said->str, said->len, text, sizeof(text));
			lkc_rs_free_replies(replies, n);
			return lkc_rs_fail(s, err, redirect == LKC_RTOPO_TRYAGAIN ? LKC_ERR_IO : LKC_ERR_REFUSED,
				"%s for slot %u%s: %s", redirect == LKC_RTOPO_TRYAGAIN ? "timed out retrying"
				: redirect == LKC_RTOPO_READONLY ? "no writable master" : "too many redirections",
				lkc_rtopo_slot(key, key_len), migrating ? ", which is being migrated" : "", text);
		}
		lkc_rs_free_replies(replies, n);
		switch (redirect) {
			case LKC_RTOPO_MOVED:
				redirects++;
				break;
			case LKC_RTOPO_ASK:
				redirects++;
				ask = node;
				break;
			case LKC_RTOPO_READONLY:
				readonly++;
				lkc_rtopo_forget(&s->topo);
				break;
			default:
				lkc_rs_nap(op, nap);
				nap = nap * 2 < LKC_RS_RETRY_NAP_MAX ? nap * 2 : LKC_RS_RETRY_NAP_MAX;
				/* A cluster down for long may have failed over: its map is read again (a migration is no failover). */
				if (nap == LKC_RS_RETRY_NAP_MAX && !migrating) {
					lkc_rtopo_forget(&s->topo);
				}
				break;
		}
	}
}
