/* The idle persistent connections of a process: see lkc_pool.h. */
#include "lkc.h"
#include "lkc_pool.h"

#include <stdlib.h>
#include <string.h>

struct lkc_pooled {
	lkc_pooled *next;
	char *key;
	size_t key_len;
	void *conn;
	pid_t pid;
};

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
