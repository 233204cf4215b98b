/* The pool of idle persistent connections (lkc_pool.c), with stand-in connections. */
#include "t.h"
#include "../../ext/core/lkc_pool.h"

#include <pthread.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A stand-in connection: its number, and whether it may serve again. */
typedef struct {
	int id;
	int good;
} t_conn;

static int t_closed_ours, t_closed_parents;

static int t_reusable(void *c)
{
	return ((t_conn *) c)->good;
}

static void t_close(void *c, int ours)
{
	if (ours) {
		t_closed_ours++;
	} else {
		t_closed_parents++;
	}
	free(c);
}

static t_conn *t_new(int id, int good)
{
	t_conn *c = malloc(sizeof(*c));

	c->id = id;
	c->good = good;
	return c;
}

static void take_gives_what_put_kept_under_its_key(void)
{
	lkc_pool pool = LKC_POOL_INIT(t_reusable, t_close, 4);
	t_conn *c;

	t_closed_ours = 0;
	lkc_pool_put(&pool, "a", 1, t_new(1, 1));
	lkc_pool_put(&pool, "ab", 2, t_new(2, 1));
	CHECK(lkc_pool_take(&pool, "b", 1) == NULL);
	c = lkc_pool_take(&pool, "ab", 2);
	CHECK(c != NULL && c->id == 2);
	free(c);
	c = lkc_pool_take(&pool, "a", 1);
	CHECK(c != NULL && c->id == 1);
	free(c);
	CHECK(lkc_pool_take(&pool, "a", 1) == NULL);
	CHECK(t_closed_ours == 0);
	lkc_pool_shutdown(&pool);
	/* The pool lives on the stack: the fork handlers must have forgotten it, or the next fork locks what is left of it. */
	CHECK(!pool.registered);
}

static void bad_and_surplus_connections_are_closed(void)
{
	lkc_pool pool = LKC_POOL_INIT(t_reusable, t_close, 2);
	t_conn *c;

	t_closed_ours = 0;
	lkc_pool_put(&pool, "k", 1, t_new(1, 0));
	CHECK(t_closed_ours == 1);
	lkc_pool_put(&pool, "k", 1, t_new(2, 1));
	lkc_pool_put(&pool, "k", 1, t_new(3, 1));
	lkc_pool_put(&pool, "k", 1, t_new(4, 1));
	CHECK(t_closed_ours == 2);
	/* One gone bad while idle is closed, and the next one comes. */
	c = lkc_pool_take(&pool, "k", 1);
	CHECK(c != NULL && c->id == 3);
	c->good = 0;
	lkc_pool_put(&pool, "k", 1, c);
	CHECK(t_closed_ours == 3);
	c = lkc_pool_take(&pool, "k", 1);
	CHECK(c != NULL && c->id == 2);
	free(c);
	lkc_pool_shutdown(&pool);
	CHECK(t_closed_ours == 3);
}

static void a_child_never_takes_its_parents(void)
{
	static lkc_pool pool = LKC_POOL_INIT(t_reusable, t_close, 4);
	int status = -1;
	pid_t pid;
	t_conn *c;

	lkc_pool_put(&pool, "k", 1, t_new(1, 1));
	pid = fork();
	if (pid == 0) {
		/* The parent's is closed on our side (ours 0), never handed out. */
		t_closed_parents = 0;
		c = lkc_pool_take(&pool, "k", 1);
		_exit(c == NULL && t_closed_parents == 1 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	c = lkc_pool_take(&pool, "k", 1);
	CHECK(c != NULL && c->id == 1);
	free(c);
	lkc_pool_shutdown(&pool);
}

static lkc_pool t_busy_pool = LKC_POOL_INIT(t_reusable, t_close, 8);
static volatile int t_stop;

static void *t_churn(void *arg)
{
	(void) arg;
	while (!t_stop) {
		void *c = lkc_pool_take(&t_busy_pool, "k", 1);

		lkc_pool_put(&t_busy_pool, "k", 1, c != NULL ? c : t_new(0, 1));
	}
	return NULL;
}

/* A fork while another thread is inside the pool: the child finds the pool whole and free. */
static void forks_while_another_thread_uses_the_pool(void)
{
	pthread_t th;
	int ok = 0;

	t_stop = 0;
	CHECK(pthread_create(&th, NULL, t_churn, NULL) == 0);
	for (int i = 0; i < 200; i++) {
		int status = -1;
		pid_t pid = fork();

		if (pid == 0) {
			void *c;

			alarm(10);
			c = lkc_pool_take(&t_busy_pool, "k", 1);
			lkc_pool_put(&t_busy_pool, "k", 1, c != NULL ? c : t_new(0, 1));
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			ok++;
		}
	}
	t_stop = 1;
	pthread_join(th, NULL);
	CHECK(ok == 200);
	lkc_pool_shutdown(&t_busy_pool);
}

/* Keys of parts never read alike: parts that share their bytes differently, or a long common beginning. */
static void keys_of_parts_are_whole_and_unambiguous(void)
{
	lkc_pool pool = LKC_POOL_INIT(t_reusable, t_close, 4);
	const char *ab_c[] = { "a\nb", "c" }, *a_bc[] = { "a", "b\nc" };
	size_t lens[] = { 3, 1 }, lens2[] = { 1, 3 };
	char long1[400], long2[400];
	const char *l1[] = { long1 }, *l2[] = { long2 };
	size_t llen[] = { sizeof(long1) };
	size_t k1_len, k2_len, k3_len, k4_len;
	char *k1 = lkc_pool_key(2, ab_c, lens, &k1_len);
	char *k2 = lkc_pool_key(2, a_bc, lens2, &k2_len);
	char *k3, *k4;
	t_conn *c;

	CHECK(k1 != NULL && k2 != NULL);
	CHECK(k1_len != k2_len || memcmp(k1, k2, k1_len) != 0);
	/* Two lists alike in their first 399 bytes: the keys differ in the last one. */
	memset(long1, 'x', sizeof(long1));
	memset(long2, 'x', sizeof(long2));
	long2[sizeof(long2) - 1] = 'y';
	k3 = lkc_pool_key(1, l1, llen, &k3_len);
	k4 = lkc_pool_key(1, l2, llen, &k4_len);
	CHECK(k3 != NULL && k4 != NULL && k3_len == k4_len && k3_len > sizeof(long1));
	lkc_pool_put(&pool, k3, k3_len, t_new(3, 1));
	CHECK(lkc_pool_take(&pool, k4, k4_len) == NULL);
	CHECK(lkc_pool_take(&pool, k1, k1_len) == NULL);
	c = lkc_pool_take(&pool, k3, k3_len);
	CHECK(c != NULL && c->id == 3);
	free(c);
	free(k1);
	free(k2);
	free(k3);
	free(k4);
	lkc_pool_shutdown(&pool);
}

TEST_MAIN(T(take_gives_what_put_kept_under_its_key), T(keys_of_parts_are_whole_and_unambiguous), T(bad_and_surplus_connections_are_closed),
	T(a_child_never_takes_its_parents), T(forks_while_another_thread_uses_the_pool))
