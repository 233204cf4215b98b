/*
 * The connection layer of the Redis stores: one connection to one server,
 * over TCP, a unix socket or TLS on TCP, with a socket of our own. hiredis
 * only formats commands and parses replies; every step here is non-blocking
 * and says what it waits for (LKC_RCONN_WANT_READ, LKC_RCONN_WANT_WRITE), so
 * the caller polls: one connection with its deadline and signal rules
 * (lkc_redis_io.c), or many at once in a single poll().
 *
 * A connection belongs to the process that opened it. Closing one never
 * writes (no TLS close_notify): a forked child that closes its copy leaves
 * the parent's session intact.
 */
#ifndef LKC_REDIS_CONN_H
#define LKC_REDIS_CONN_H

#include "lkc.h"

#include <sys/types.h>
#include <hiredis/hiredis.h>

/* The TLS settings that a store's connections share (an OpenSSL context), reference-counted. */
typedef struct lkc_rtls lkc_rtls;

/* Where a connection goes. */
typedef struct {
	const char *host;          /* TCP host, or NULL for the unix socket */
	int port;
	const char *socket_path;   /* NULL for TCP */
	lkc_rtls *tls;             /* NULL: plain text */
	uint64_t deadline;         /* resolving a host name ends by then (lkc_now_ns(); 0: no bound) */
} lkc_rconn_target;

/* What a step of a connection needs next. */
typedef enum {
	LKC_RCONN_DONE = 0,        /* the step finished */
	LKC_RCONN_WANT_READ,       /* call it again once the socket is readable */
	LKC_RCONN_WANT_WRITE,      /* ... writable */
	LKC_RCONN_FAILED           /* the connection is broken: lkc_rconn_error() says why */
} lkc_rconn_step;

/* What broke a connection. */
typedef enum {
	LKC_RCONN_OK = 0,
	LKC_RCONN_ERR_IO,          /* a socket error: errnum */
	LKC_RCONN_ERR_EOF,         /* the server closed the connection */
	LKC_RCONN_ERR_PROTOCOL,    /* a reply hiredis cannot parse */
	LKC_RCONN_ERR_TLS,         /* the handshake or the TLS session failed: text */
	LKC_RCONN_ERR_OOM
} lkc_rconn_err;

typedef struct lkc_rconn lkc_rconn;

/*
 * Makes the TLS settings of cfg (CA, client certificate and key, server name,
 * verification). A file that cannot be read is an error naming it and the option.
 */
lkc_rc lkc_rtls_new(const lkc_redis_config *cfg, lkc_rtls **out, lkc_err *err);
lkc_rtls *lkc_rtls_ref(lkc_rtls *tls);
void lkc_rtls_unref(lkc_rtls *tls);

/*
 * Starts connecting to t: the result is never NULL but on out of memory, and
 * *step says how to go on with lkc_rconn_handshake() (FAILED: see lkc_rconn_error()).
 */
lkc_rconn *lkc_rconn_open(const lkc_rconn_target *t, lkc_rconn_step *step);
/* Goes on connecting (TCP, then the TLS handshake): DONE when ready for commands. */
lkc_rconn_step lkc_rconn_handshake(lkc_rconn *c);
/* Appends a command to the output buffer; 0 on out of memory. */
int lkc_rconn_append(lkc_rconn *c, int argc, const char **argv, const size_t *lens);
/* The longest reply array a connection reads (its element pointers are allocated up front). */
#define LKC_RCONN_ELEMENTS_MAX (1 << 20)
/* A hiredis reader that refuses longer arrays, and then sets *oversized (NULL: nobody asks); NULL when out of memory. */
redisReader *lkc_rconn_reader(int *oversized);
/* Writes what it can of the output buffer: DONE when all went. */
lkc_rconn_step lkc_rconn_flush(lkc_rconn *c);
/*
 * The next reply: DONE with *reply set (the caller frees it with
 * freeReplyObject), or WANT_READ/WANT_WRITE when none is complete yet.
 */
lkc_rconn_step lkc_rconn_reply(lkc_rconn *c, redisReply **reply);
int lkc_rconn_fd(const lkc_rconn *c);
/* Whether it is connected and in its TLS handshake. */
int lkc_rconn_in_handshake(const lkc_rconn *c);
/* The process that opened the connection. */
pid_t lkc_rconn_pid(const lkc_rconn *c);
/* Whether part of a reply was read and not yet parsed (in the reader, or decrypted and kept by TLS). */
int lkc_rconn_buffered(const lkc_rconn *c);
/* Whether it is healthy and idle: nothing unsent, unread or arriving (a hang-up, a stray reply). */
int lkc_rconn_idle(lkc_rconn *c);
/* Why it broke (LKC_RCONN_OK while healthy), with errno or the TLS/protocol text. */
lkc_rconn_err lkc_rconn_error(const lkc_rconn *c, int *errnum, const char **text);
/* Closes the socket and frees everything, writing nothing. NULL is fine. */
/*
 * Marks a new connection that sent nothing before its first command (no AUTH):
 * that command then goes after a PING, whose answer says NOAUTH clearly where
 * the server would refuse a long command from a client not authenticated
 * ("unauthenticated multibulk length") and hang up. lkc_rconn_take_ping says
 * whether it is marked, once.
 */
void lkc_rconn_mark_ping(lkc_rconn *c);
int lkc_rconn_take_ping(lkc_rconn *c);
void lkc_rconn_close(lkc_rconn *c);

/* Idle connections kept for the next store of this process with the same settings (key). */
lkc_rconn *lkc_rconn_pool_take(const char *key, size_t key_len);
void lkc_rconn_pool_put(const char *key, size_t key_len, lkc_rconn *c);
void lkc_rconn_pool_shutdown(void);

#endif
