/* The idle persistent connections of a process: see lkc_pool.h. */
#include "lkc.h"
#include "lkc_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lkc_pooled {
	lkc_pooled *next;
	char *key;
	size_t key_len;
	void *conn;
	pid_t pid;
};

/*
 * The pools in use, for the fork handlers: a fork waits until no thread is inside a
 * pool (each pool's lock is taken around it), so that the child finds every list whole
 * and every lock free (a lock held by another thread at the fork would never be let go
 * in the child, which has only the forking thread).
 */
#define LKC_POOLS_MAX 8
static lkc_pool *lkc_pools[LKC_POOLS_MAX];
static unsigned lkc_npools;
static pthread_mutex_t lkc_pools_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lkc_pools_once = PTHREAD_ONCE_INIT;

static void lkc_pools_before_fork(void)
{
	pthread_mutex_lock(&lkc_pools_lock);
	for (unsigned i = 0; i < lkc_npools; i++) {
		pthread_mutex_lock(&lkc_pools[i]->lock);
	}
}

static void lkc_pools_after_fork(void)
{
	for (unsigned i = lkc_npools; i > 0; i--) {
		pthread_mutex_unlock(&lkc_pools[i - 1]->lock);
	}
	pthread_mutex_unlock(&lkc_pools_lock);
}

static void lkc_pools_init(void)
{
	pthread_atfork(lkc_pools_before_fork, lkc_pools_after_fork, lkc_pools_after_fork);
}

/* Makes the fork handlers know pool, once. */
static void lkc_pool_register(lkc_pool *pool)
{
	if (__atomic_load_n(&pool->registered, __ATOMIC_ACQUIRE)) {
		return;
	}
	pthread_once(&lkc_pools_once, lkc_pools_init);
	pthread_mutex_lock(&lkc_pools_lock);
	if (!pool->registered && lkc_npools < LKC_POOLS_MAX) {
		lkc_pools[lkc_npools++] = pool;
		__atomic_store_n(&pool->registered, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lkc_pools_lock);
}

char *lkc_pool_key(size_t n, const char *const *parts, const size_t *lens, size_t *len)
{
	size_t size = 1;
	size_t used = 0;
	char *key;

	for (size_t i = 0; i < n; i++) {
		size += lens[i] + 22;
	}
	key = malloc(size);
	if (key == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		used += (size_t) snprintf(key + used, size - used, "%zu:", lens[i]);
		memcpy(key + used, parts[i], lens[i]);
		used += lens[i];
	}
	key[used] = '\0';
	*len = used;
	return key;
}

/* Closes e's connection and frees e; the pool's lock is held or e is unlinked. */
static void lkc_pooled_free(const lkc_pool *pool, lkc_pooled *e)
{
	pool->close(e->conn, e->pid == lkc_pid());
	memset(e->key, 0, e->key_len);
	free(e->key);
	free(e);
}

/* Unlinks and closes the connections another process pooled (a parent's, in a forked child); the lock is held. */
static void lkc_pool_sweep_locked(lkc_pool *pool)
{
	pid_t self = lkc_pid();

	for (lkc_pooled **link = &pool->head; *link != NULL;) {
		lkc_pooled *e = *link;

		if (e->pid == self) {
			link = &e->next;
			continue;
		}
		*link = e->next;
		pool->count--;
		lkc_pooled_free(pool, e);
	}
}

void *lkc_pool_take(lkc_pool *pool, const char *key, size_t key_len)
{
	void *conn = NULL;

	lkc_pool_register(pool);
	pthread_mutex_lock(&pool->lock);
	lkc_pool_sweep_locked(pool);
	for (lkc_pooled **link = &pool->head; *link != NULL && conn == NULL;) {
		lkc_pooled *e = *link;

		if (e->key_len != key_len || memcmp(e->key, key, key_len) != 0) {
			link = &e->next;
			continue;
		}
		*link = e->next;
		pool->count--;
		if (pool->reusable == NULL || pool->reusable(e->conn)) {
			conn = e->conn;
			e->conn = NULL;
			memset(e->key, 0, e->key_len);
			free(e->key);
			free(e);
		} else {
			/* Gone bad while idle (a server's goodbye, a hang-up): a reused connection must be known idle. */
			lkc_pooled_free(pool, e);
		}
	}
	pthread_mutex_unlock(&pool->lock);
	return conn;
}

void lkc_pool_put(lkc_pool *pool, const char *key, size_t key_len, void *conn)
{
	lkc_pooled *e;

	if (pool->reusable != NULL && !pool->reusable(conn)) {
		pool->close(conn, 1);
		return;
	}
	e = malloc(sizeof(*e));
	if (e != NULL && (e->key = malloc(key_len > 0 ? key_len : 1)) == NULL) {
		free(e);
		e = NULL;
	}
	if (e == NULL) {
		pool->close(conn, 1);
		return;
	}
	memcpy(e->key, key, key_len);
	e->key_len = key_len;
	e->conn = conn;
	e->pid = lkc_pid();
	lkc_pool_register(pool);
	pthread_mutex_lock(&pool->lock);
	lkc_pool_sweep_locked(pool);
	if (pool->count >= pool->max) {
		pthread_mutex_unlock(&pool->lock);
		lkc_pooled_free(pool, e);
		return;
	}
	e->next = pool->head;
	pool->head = e;
	pool->count++;
	pthread_mutex_unlock(&pool->lock);
}

void lkc_pool_shutdown(lkc_pool *pool)
{
	lkc_pooled *list;

	/* The fork handlers forget the pool, which may go (a pool on the stack): using it again registers it again. */
	pthread_mutex_lock(&lkc_pools_lock);
	for (unsigned i = 0; i < lkc_npools; i++) {
		if (lkc_pools[i] == pool) {
			lkc_pools[i] = lkc_pools[--lkc_npools];
			__atomic_store_n(&pool->registered, 0, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&lkc_pools_lock);
	pthread_mutex_lock(&pool->lock);
	list = pool->head;
	pool->head = NULL;
	pool->count = 0;
	pthread_mutex_unlock(&pool->lock);
	while (list != NULL) {
		lkc_pooled *e = list;

		list = e->next;
		lkc_pooled_free(pool, e);
	}
}
