/*
 * What the pieces of the Redis store share; internal to ext/core.
 *
 *   lkc_redis.c         the store: its keys and their protocol (the comment at
 *                       its top), its operations table, the entry and exit of
 *                       its calls, its messages, opening and closing it
 *   lkc_redis_io.c      exchanges with one server on the store's connection:
 *                       an operation's budget, connecting and logging in, the
 *                       idle and pooled connections
 *   lkc_redis_route.c   which server gets a key's commands: the one server,
 *                       the sentinels' master, the master of the key's slot in
 *                       a cluster, and the redirections on the way
 *   lkc_redis_script.c  the scripts, their calls, and the keys a call declares
 *   lkc_redis_wait.c    the acquire script's steps and the wait loop (queue,
 *                       sleep, hand-offs), and waitUntilFree()
 *   lkc_redis_hold.c    a hold's operations: take, release (and its cooldown),
 *                       refresh, check, fencing, isLocked() and forceRelease()
 *
 * over the connection layer (lkc_redis_conn.h) and the topology layer
 * (lkc_redis_topo.h).
 */
#ifndef LKC_REDIS_INT_H
#define LKC_REDIS_INT_H

#include "lkc.h"
#include "lkc_redis_conn.h"
#include "lkc_redis_topo.h"
/* The constants the scripts (ext/core/lua) share with the code: LKC_RS_GRACE, LKC_RS_FENCE_TTL, ... */
#include "lkc_redis_lua_const.h"

#include <stdint.h>

/* How deep calls may nest inside store I/O (signal handlers that use the store). */
#define LKC_RS_NEST_MAX 8
/* Idle connections a store keeps to the nodes of a cluster (or masters of a Sentinel) besides its current one. */
#define LKC_RS_IDLE_MAX 8
/* The most wake lists one script call declares: hints past them are not pushed (their waiters look again within their sleep), and a "need" for more fails the call (see lkc_rs_run). */
#define LKC_RS_LISTS_MAX 16

/*
 * A script, the SHA-1 Redis names it by in its cache, and the keys it
 * declares: the lock key, the suffixes of the lock key that follow it, and
 * whether wake lists may follow them (then it answers {result, guess, guess,
 * hints...}, see lib/end.lua).
 */
typedef struct {
	const char *name;
	const char *body;
	const char *const *keys;
	int lists;
	char sha[41];
} lkc_rs_lua;

enum {
	LKC_RS_ACQUIRE, LKC_RS_RELEASE, LKC_RS_REFRESH, LKC_RS_CHECK, LKC_RS_FENCE, LKC_RS_FORCE, LKC_RS_WATCH,
	LKC_RS_DELIVER, LKC_RS_DROP, LKC_RS_INSPECT, LKC_RS_FLOOR, LKC_RS_NSCRIPTS
};

/* The scripts, by the enum above (lkc_redis_script.c). */
extern lkc_rs_lua lkc_rs_scripts[LKC_RS_NSCRIPTS];

/*
 * The wake lists a script call declares, by ticket: the caller's own, the
 * tickets its hold guessed would head the queue, those a watch message or a
 * "need" answer named. A script touches no other list (see wk in
 * lib/core.lua).
 */
typedef struct {
	int64_t ticket[LKC_RS_LISTS_MAX];
	int n;
} lkc_rs_lists;

/* A Redis store (lkc_redis_open): its settings, what it knows of the topology, its connections. */
typedef struct {
	lkc_store base;
	lkc_redis_config cfg;
	char *endpoint;          /* "host:port" or the socket path, for messages; Sentinel, Cluster: the seeds */
	char *label;             /* how messages begin: "Redis at host:port", "Redis Cluster at h1:p1,h2:p2", ... */
	char at[320];            /* Sentinel, Cluster: the server the last connection went to ("node h:p"), for messages */
	lkc_rtopo topo;          /* who gets a resource's commands */
	char *topo_key;          /* Sentinel, Cluster: what the process remembers of the topology is kept under */
	size_t topo_key_len;
	int recalled;            /* the process's memory of the topology was looked at */
	int conn_node;           /* the node of conn (topo), 0 for the one server */
	int demoted;             /* the last connect found a replica where the master was expected */
	lkc_rconn *idle[LKC_RS_IDLE_MAX]; /* idle connections to other nodes (Sentinel, Cluster) */
	int idle_node[LKC_RS_IDLE_MAX];
	int nidle;
	char *pool_key;          /* what a pooled connection must match to be reused */
	size_t pool_key_len;
	lkc_rtls *tls;           /* NULL: plain text */
	lkc_rconn *conn;         /* NULL until first use and after an I/O error */
	int interrupted;         /* a signal the host wants handled arrived during I/O */
	int abortable;           /* the current exchange is a sleep that such a signal ends */
	int busy;                /* conn is mid-exchange: sent, its replies not all read */
	int tentative;           /* the exchanges under way are not what the operation must deliver: a login, a topology lookup */
	lkc_rconn *parked[LKC_RS_NEST_MAX]; /* busy connections of outer calls (see lkc_rs_enter) */
	int parked_node[LKC_RS_NEST_MAX];
	int nparked;
	lkc_rconn *spare;        /* the idle connection of the last nested call, for the next one */
	int spare_node;
	uint64_t conn_gen;       /* counts the times conn was dropped or swapped */
	uint64_t write_gen;      /* conn_gen when the last commands were sent: WAIT covers only that connection's writes */
	int fence_wanted;        /* a fencing token was asked for: a single attempt takes one with the hold */
} lkc_rs_store;

/* The budget of one store operation. */
typedef struct {
	uint64_t deadline;       /* every connect, write and read ends by then */
	int sent;                /* the last failure came after a command may have reached the server */
	int recovered;           /* the one reconnect allowed after a failed command is spent */
} lkc_rs_op;

/* One command as binary-safe arguments. */
typedef struct {
	int argc;
	const char **argv;
	const size_t *lens;
} lkc_rs_cmd;

/* Who a new connection talks to, which says how it logs in. */
typedef enum {
	LKC_RS_TO_SERVER,        /* the one server, or a cluster's node: the DSN's credentials and database */
	LKC_RS_TO_MASTER,        /* a Sentinel's master: as a server, then ROLE must say master */
	LKC_RS_TO_SENTINEL       /* a sentinel: its own credentials, no database */
} lkc_rs_peer;

/* What one acquire call sends with every step: the keys and the arguments that stay the same. */
typedef struct {
	char *key;               /* the lock key */
	size_t key_len;
	char *wake;              /* our wake list, P{R}:w:<ticket>, once we have a ticket (room for any) */
	size_t wake_len;
	char *shared;            /* the list we also sleep on: P{R}:wl (a waiter), P{R}:fl (a waitUntilFree() caller) */
	size_t shared_len;
	int64_t ticket;          /* the ticket our wake list is named by, 0 none yet */
	char ticket_arg[24];     /* as text, "" none */
	lkc_rs_lists lists;      /* what a step declares: our list, and those a watch message named */
	const char *owner;       /* the hold's owner, owner_len bytes */
	size_t owner_len;
	char ttl[24];            /* ms, "" for none */
	char want;               /* 'w' the write hold, 'r' a read hold */
	char held;               /* what the caller holds now: 'w', 'r' or 'n' */
	char fair;               /* '1' or '0' */
	char stay[24];           /* how long a waiter's liveness deadline lasts (ms) */
} lkc_rs_req;

/* What a step of the acquire script answered. */
typedef enum {
	LKC_RS_TAKEN,            /* the hold is ours; fence is its token for a write hold, else -1 */
	LKC_RS_REFUSED,          /* not taken, not queued (or left the queue) */
	LKC_RS_PROMOTING,        /* not taken: another reader's promotion is pending */
	LKC_RS_QUEUED            /* queued: sleep bound ms at most (-1 no bound) */
} lkc_rs_outcome;

typedef struct {
	lkc_rs_outcome outcome;
	int64_t fence;
	int64_t bound;
	uint64_t sent_ns;        /* monotonic time the step was first sent: before it ran */
	int64_t server_ms;       /* the server's time when it ran (queued answers), -1 unknown */
	int64_t heads[2];        /* taken: the tickets a release is guessed to serve (see heads in lib/core.lua) */
} lkc_rs_answer;

/* lkc_redis.c */
/* Fills err with the store's label, the server when a topology has several, and the formatted cause; returns code. */
lkc_rc lkc_rs_fail(const lkc_rs_store *s, lkc_err *err, lkc_rc code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Copies server or system text into out for a message: control bytes as '?', the passwords masked. */
void lkc_rs_quote(const lkc_rs_store *s, const char *text, size_t len, char *out, size_t size);
/* As lkc_rs_quote for a system message, its first letter lowered. */
void lkc_rs_quote_errstr(const lkc_rs_store *s, const char *text, char *out, size_t size);
/* A malloc'd printf. */
char *lkc_rs_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* lkc_redis_io.c */
/* The monotonic time ms milliseconds from now, saturating. */
uint64_t lkc_rs_deadline(int64_t ms);
/* Starts the budget of one operation: the store's timeout from now. */
void lkc_rs_op_start(const lkc_rs_store *s, lkc_rs_op *op);
/* Whether a failed command may be recovered by one reconnect within the operation's budget. */
int lkc_rs_may_recover(const lkc_rs_op *op, lkc_rc rc);
/* Drops the store's connection; the next operation connects anew. */
void lkc_rs_discard(lkc_rs_store *s);
/* Frees the first n replies. */
void lkc_rs_free_replies(redisReply **replies, int n);
/* Fills err for an error reply to what; the server's words are quoted, never the password. */
lkc_rc lkc_rs_refused(const lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err);
/* Sends n commands in one write on the current connection and reads their n replies by op's deadline. */
lkc_rc lkc_rs_exchange(lkc_rs_store *s, lkc_rs_op *op, const lkc_rs_cmd *cmds, int n,
	redisReply **replies, lkc_err *err);
/* Fills err for a reply of a type that what never returns. */
lkc_rc lkc_rs_unexpected(lkc_rs_store *s, const char *what, const redisReply *reply, lkc_err *err);
/* Whether reply is the status "OK". */
int lkc_rs_is_ok(const redisReply *reply);
/* Whether a reply is the simple status text. */
int lkc_rs_is_status(const redisReply *reply, const char *text);
/* Lets go of a connection to node: pooled when persistent, healthy and idle, else closed. */
void lkc_rs_put_back(lkc_rs_store *s, lkc_rconn *c, int node);
/* Sets the current connection aside among the idle ones (Sentinel, Cluster). */
void lkc_rs_shelve(lkc_rs_store *s);
/* Makes s->conn a connection of this process to node: current, idle, pooled or new. */
lkc_rc lkc_rs_use(lkc_rs_store *s, lkc_rs_op *op, int node, lkc_rs_peer peer, lkc_err *err);

/* lkc_redis_route.c */
/* Runs n commands once on the server that gets key's commands, following redirections. */
lkc_rc lkc_rs_send(lkc_rs_store *s, lkc_rs_op *op, const char *key, size_t key_len, const lkc_rs_cmd *cmds,
	int n, redisReply **replies, lkc_err *err);

/* lkc_redis_script.c */
/* Names every script by the SHA-1 of its body (once per process, from lkc_redis_open). */
void lkc_rs_scripts_init(void);
/* The lock key of a resource, prefix + "{" + tag + "}"; NULL when out of memory. */
char *lkc_rs_lock_key(const lkc_rs_store *s, const char *resource, size_t len, size_t *key_len);
/* A key of the resource: its lock key and suffix; NULL when out of memory. */
char *lkc_rs_subkey(const char *key, size_t key_len, const char *suffix, size_t *len);
/* Whether the prefix's first '{' is followed at once by '}': an empty hash tag. */
int lkc_rs_prefix_empties_tag(const char *prefix, size_t len);
/*
 * Builds script's EVALSHA on a resource's lock key into *cmd, as lkc_rs_eval
 * sends it; returns the memory that holds it (the caller frees it), NULL when
 * out of memory.
 */
char *lkc_rs_eval_build(int script, const char *key, size_t key_len, const lkc_rs_lists *lists,
	const char *const *args, const size_t *arg_lens, int nargs, lkc_rs_cmd *cmd);
/* Runs a script on a resource's lock key by its SHA-1 (EVAL when the server lacks it); *reply is the caller's. */
lkc_rc lkc_rs_eval(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	const lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, redisReply **reply,
	lkc_err *err);
/* Adds ticket to lists unless it is there; 0, or -1 when lists is full. */
int lkc_rs_lists_add(lkc_rs_lists *lists, int64_t ticket);
/* A ticket a script answered (a bulk string of digits), 0 when it is none. */
int64_t lkc_rs_ticket_of(const redisReply *reply);
/* Runs a script as lkc_rs_eval does and reads the answer of one that takes wake lists. */
lkc_rc lkc_rs_run(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	redisReply **reply, const redisReply **result, lkc_err *err);
/* As lkc_rs_run, for a script that answers an integer, sent again when it is unknown whether it ran. */
lkc_rc lkc_rs_eval_int(lkc_rs_store *s, lkc_rs_op *op, int script, const char *key, size_t key_len,
	lkc_rs_lists *lists, const char *const *args, const size_t *arg_lens, int nargs, int64_t heads[2],
	long long *result, lkc_err *err);

/* lkc_redis_wait.c */
/* Prepares the steps of an acquire in mode (shared: the list slept on besides our own); 0, or -1. */
int lkc_rs_req_init(const lkc_rs_store *s, lkc_rs_req *req, const lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, const char *shared);
/* Frees what lkc_rs_req_init allocated. */
void lkc_rs_req_free(lkc_rs_req *req);
/* Runs one step of the acquire script (how: 't', 'q', 'l' or 'i'). */
lkc_rc lkc_rs_step(lkc_rs_store *s, lkc_rs_req *req, char how, lkc_rs_answer *ans, lkc_err *err);
/* Fills err for an acquire that did not get the hold. */
lkc_rc lkc_rs_busy(const lkc_rs_store *s, lkc_rs_outcome outcome, lkc_err *err);
/* Waits for the hold after the step that queued us: sleep until woken or unblocked, step again. */
lkc_rc lkc_rs_wait(lkc_rs_store *s, lkc_hold *hold, lkc_rs_req *req, const lkc_rs_answer *queued,
	int64_t wait_ms, lkc_err *err);
/* Waits, taking nothing, until nobody holds the resource nor is queued for it. */
lkc_rc lkc_rs_wait_free_io(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err);

/* lkc_redis_hold.c: the store's operations, each run between lkc_rs_enter and lkc_rs_leave (lkc_redis.c). */
lkc_rc lkc_rs_acquire_io(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err);
lkc_rc lkc_rs_release_io(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err);
void lkc_rs_settle_io(lkc_store *store, lkc_hold *hold);
lkc_rc lkc_rs_refresh_io(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err);
/* Most refreshes one round trip of lkc_rs_refresh_many_io carries. */
#define LKC_RS_BATCH_MAX 64
void lkc_rs_refresh_many_io(lkc_store *store, lkc_hold **holds, const int64_t *ttl_ms, int n, lkc_rc *rcs,
	lkc_err *errs);
lkc_rc lkc_rs_check_io(lkc_store *store, lkc_hold *hold, lkc_err *err);
lkc_rc lkc_rs_is_locked_io(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err);
lkc_rc lkc_rs_force_release_io(lkc_store *store, const char *resource, size_t len, lkc_err *err);
lkc_rc lkc_rs_fence_io(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err);
lkc_rc lkc_rs_inspect_io(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err);
lkc_rc lkc_rs_floor_io(lkc_store *store, lkc_hold *hold, int64_t floor, lkc_err *err);

#endif
