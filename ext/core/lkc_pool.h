/*
 * The process's idle persistent connections of one kind (Redis, PostgreSQL,
 * MySQL, memcached), each kept under its store's settings key, for the next
 * store of this process made with the same settings. A connection belongs to
 * the process that pooled it: a forked child never reuses its parent's, and
 * closes its copies on its own side only (the kind's close says how). Keys
 * may hold passwords: they are zeroed before they are freed. Thread-safe, and
 * a fork never happens while a thread is inside a pool.
 */
#ifndef LKC_POOL_H
#define LKC_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct lkc_pooled lkc_pooled;

typedef struct {
	/* Whether a connection of this process can serve again (open, nothing to read); NULL: always. */
	int (*reusable)(void *conn);
	/*
	 * Closes a connection; ours is 0 for one a parent process pooled, whose session must
	 * stay the parent's. A connection put that is not reusable is closed with ours 1, a
	 * parent's too (one a child's store had idle): reusable and close must tell a
	 * parent's connection by themselves where a child can hold one (PostgreSQL, MySQL).
	 */
	void (*close)(void *conn, int ours);
	/* How many it keeps at most: one more is closed. */
	unsigned max;
	pthread_mutex_t lock;
	lkc_pooled *head;
	unsigned count;
	int registered;      /* known to the fork handlers (lkc_pool.c) */
} lkc_pool;

#define LKC_POOL_INIT(reusable, close, max) { (reusable), (close), (max), PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }

/*
 * A key is the whole identity of what is pooled: every setting that makes one
 * connection unfit for another store (each server and its order, credentials,
 * database, TLS settings, timeouts a connection keeps), nothing cut short, and
 * unambiguous: lkc_pool_key makes one. Two stores that differ in anything a
 * connection carries must never make the same key.
 */

/*
 * A key of n parts (parts[i] of lens[i] bytes, any bytes), each written as its
 * length, ':' and its bytes, so that no two lists of parts make the same key;
 * malloc'd, *len set; NULL when out of memory.
 */
char *lkc_pool_key(size_t n, const char *const *parts, const size_t *lens, size_t *len);

/* An idle connection this process pooled under key, known reusable; NULL when none. */
void *lkc_pool_take(lkc_pool *pool, const char *key, size_t key_len);

/* Keeps conn under key, or closes it (not reusable, the pool full, out of memory). */
void lkc_pool_put(lkc_pool *pool, const char *key, size_t key_len, void *conn);

/* Closes every pooled connection (at module shutdown), and unregisters the pool from the fork handlers. */
void lkc_pool_shutdown(lkc_pool *pool);

#endif
