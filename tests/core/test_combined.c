/*
 * The combined store (lkc_combined.c) over real redis-servers, and the fan
 * under it (lkc_fan.c): calls side by side, a slow call given up once the
 * outcome is decided, a deadline for all.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"
#include "redis_server.h"
#include "../../ext/core/lkc_fan.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#define T_NSERVERS 3

static t_redis t_servers[T_NSERVERS];

static lkc_store *t_member(const t_redis *r, int64_t timeout_ms)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	lkc_redis_config_init(&cfg);
	cfg.port = r->port;
	cfg.timeout_ms = timeout_ms;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	return store;
}

/* A combined store over the first n servers; the members are the combined store's alone. */
static lkc_store *t_combined(int n, int unanimous, int64_t timeout_ms)
{
	lkc_store *members[T_NSERVERS], *store = NULL;
	lkc_err err;

	for (int i = 0; i < n; i++) {
		members[i] = t_member(&t_servers[i], timeout_ms);
	}
	lkc_err_clear(&err);
	CHECK_RC(lkc_combined_open(&store, members, (size_t) n, unanimous, &err), LKC_OK, &err);
	for (int i = 0; i < n; i++) {
		lkc_store_release(members[i]);
	}
	return store;
}

static int t_started(void)
{
	for (int i = 0; i < T_NSERVERS; i++) {
		if (t_servers[i].pid == 0 && t_redis_start(&t_servers[i]) != 0) {
			fprintf(stderr, "cannot start redis-server\n");
			t_failed++;
			return 0;
		}
	}
	return 1;
}

/*
 * How many servers hold key, once that many are want (or 5 s passed): a call
 * goes on once a majority answered, and what it sent the last server runs
 * when that server reads it.
 */
static int t_holding(const char *key, int want)
{
	uint64_t deadline = lkc_now_ns() + 5000000000ull;
	int n;

	for (;;) {
		n = 0;
		for (int i = 0; i < T_NSERVERS; i++) {
			n += t_redis_int(&t_servers[i], "EXISTS %s", key) == 1;
		}
		if ((want ? n == T_NSERVERS : n == 0) || lkc_now_ns() > deadline) {
			return n;
		}
		t_sleep_ms(10);
	}
}

static double t_ms_since(uint64_t start)
{
	return (double) (lkc_now_ns() - start) / 1e6;
}

static void holds_on_a_majority(void)
{
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	int64_t fence = 0, fence2 = 0;
	int locked = 0;

	if (!t_started()) {
		return;
	}
	store = t_combined(T_NSERVERS, 0, 2000);
	CHECK(lkc_combined_quorum(store) == 2);
	lkc_err_clear(&err);
	lkc_hold_init(&a, "cb-a", 4, &err);
	lkc_hold_init(&b, "cb-a", 4, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK(t_holding("{cb-a}", 1) == T_NSERVERS);
	/* The TTL less the drift allowance (100 + 2 ms) counts from before the take. */
	CHECK(a.expires_ns > lkc_now_ns() + 9000000000ull && a.expires_ns <= lkc_now_ns() + 9898000000ull);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(store->ops->is_locked(store, "cb-a", 4, &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	CHECK_RC(lkc_fence(store, &a, &fence, &err), LKC_OK, &err);
	/* Every member's counter is at least the token now (the floor script). */
	for (int i = 0; i < T_NSERVERS; i++) {
		CHECK(t_redis_int(&t_servers[i], "INCRBY {cb-a}:f 0") >= fence);
	}
	CHECK_RC(lkc_refresh(store, &a, 20000, &err), LKC_OK, &err);
	{
		int extended = 0;

		for (int i = 0; i < T_NSERVERS; i++) {
			extended += t_redis_int(&t_servers[i], "PTTL {cb-a}") > 19000;
		}
		CHECK(extended >= 2);
	}
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_holding("{cb-a}", 0) == 0);
	/* One member counts far ahead: the next token still passes it. */
	t_redis_int(&t_servers[2], "SET {cb-a}:f %lld", (long long) fence + 1000000);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &b, &fence2, &err), LKC_OK, &err);
	CHECK(fence2 > fence + 1000000);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_store_release(store);
}

static void a_frozen_member_costs_nothing(void)
{
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	uint64_t start;

	if (!t_started()) {
		return;
	}
	store = t_combined(T_NSERVERS, 0, 2000);
	lkc_err_clear(&err);
	lkc_hold_init(&a, "cb-f", 4, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	kill(t_servers[1].pid, SIGSTOP);
	for (int i = 0; i < 3; i++) {
		start = lkc_now_ns();
		CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_refresh(store, &a, 10000, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
		/* Each call waits for the frozen one a grace of 5 ms at most, never its 2 s timeout. */
		CHECK(t_ms_since(start) < 1000);
	}
	/* Unanimous: the frozen member is needed, and fails within the timeout. */
	lkc_store_release(store);
	store = t_combined(T_NSERVERS, 1, 300);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_ERR_IO, &err);
	CHECK(t_ms_since(start) >= 290 && t_ms_since(start) < 1000);
	CHECK(strstr(err.msg, "2 of 3 Redis servers answered, 3 needed") != NULL);
	CHECK(t_redis_int(&t_servers[0], "EXISTS {cb-f}") == 0);
	kill(t_servers[1].pid, SIGCONT);
	lkc_hold_dispose(&a);
	lkc_store_release(store);
}

static void a_majority_down_holds_nothing(void)
{
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	uint64_t start;
	int locked;

	if (!t_started()) {
		return;
	}
	store = t_combined(T_NSERVERS, 0, 300);
	lkc_err_clear(&err);
	lkc_hold_init(&a, "cb-d", 4, &err);
	kill(t_servers[1].pid, SIGSTOP);
	t_redis_kill(&t_servers[2], SIGKILL);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_ERR_IO, &err);
	CHECK(t_ms_since(start) < 1000);
	CHECK(t_redis_int(&t_servers[0], "EXISTS {cb-d}") == 0);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 5000, &err), LKC_ERR_IO, &err);
	CHECK(t_ms_since(start) < 1000);
	CHECK_RC(store->ops->is_locked(store, "cb-d", 4, &locked, &err), LKC_ERR_IO, &err);
	kill(t_servers[1].pid, SIGCONT);
	t_redis_restart(&t_servers[2]);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_store_release(store);
}

static void only_redis_stores_of_distinct_servers(void)
{
	lkc_store *members[2], *store = NULL;
	lkc_err err;

	if (!t_started()) {
		return;
	}
	lkc_err_clear(&err);
	CHECK_RC(lkc_combined_open(&store, members, 0, 0, &err), LKC_ERR_INVALID, &err);
	members[0] = t_member(&t_servers[0], 1000);
	CHECK_RC(lkc_sem_open(&members[1], 0600, &err), LKC_OK, &err);
	CHECK_RC(lkc_combined_open(&store, members, 2, 0, &err), LKC_ERR_INVALID, &err);
	CHECK(strstr(err.msg, "cannot expire") != NULL);
	lkc_store_release(members[1]);
	members[1] = members[0];
	CHECK_RC(lkc_combined_open(&store, members, 2, 0, &err), LKC_ERR_INVALID, &err);
	CHECK(strstr(err.msg, "same Redis server") != NULL);
	CHECK(store == NULL);
	lkc_store_release(members[0]);
}

/* The fan's own calls: each waits on the read end of its pipe. */
typedef struct {
	int fds[LKC_FAN_MAX][2];
	int got[LKC_FAN_MAX];
	int yes;
} t_fan_arg;

static void t_fan_call(void *arg, int i)
{
	t_fan_arg *a = arg;
	char c;

	a->got[i] = lkc_fan_wait(a->fds[i][0], POLLIN, lkc_now_ns() + 2000000000ull);
	CHECK(lkc_fan_inside());
	if (a->got[i] == 1) {
		CHECK(read(a->fds[i][0], &c, 1) == 1);
		a->yes++;
	}
}

static int t_fan_two(void *arg)
{
	return ((t_fan_arg *) arg)->yes >= 2;
}

static void the_fan_waits_for_all_at_once(void)
{
	t_fan_arg a;
	uint64_t start;

	memset(&a, 0, sizeof(a));
	for (int i = 0; i < 4; i++) {
		CHECK(pipe(a.fds[i]) == 0);
	}
	/* Ready ones answer at once; the call on the silent pipe is given up once two said yes. */
	CHECK(write(a.fds[0][1], "x", 1) == 1);
	CHECK(write(a.fds[2][1], "x", 1) == 1);
	start = lkc_now_ns();
	lkc_fan_run(4, t_fan_call, t_fan_two, &a, 0, 0);
	CHECK(a.got[0] == 1 && a.got[2] == 1 && a.got[1] == 0 && a.got[3] == 0);
	CHECK(t_ms_since(start) < 500);
	CHECK(!lkc_fan_inside());
	/* Without a decision, the fan's deadline ends every wait. */
	memset(a.got, 0, sizeof(a.got));
	a.yes = 0;
	start = lkc_now_ns();
	lkc_fan_run(4, t_fan_call, NULL, &a, lkc_now_ns() + 100000000ull, 0);
	CHECK(a.got[0] == 0 && a.got[3] == 0);
	CHECK(t_ms_since(start) >= 99 && t_ms_since(start) < 1500);
	/* Calls that deliver and never said they sent it are not given up at the decision: only at the deadline. */
	memset(a.got, 0, sizeof(a.got));
	a.yes = 0;
	CHECK(write(a.fds[0][1], "x", 1) == 1);
	CHECK(write(a.fds[2][1], "x", 1) == 1);
	start = lkc_now_ns();
	lkc_fan_run(4, t_fan_call, t_fan_two, &a, lkc_now_ns() + 100000000ull, 1);
	CHECK(a.got[0] == 1 && a.got[2] == 1 && a.got[1] == 0 && a.got[3] == 0);
	CHECK(t_ms_since(start) >= 99 && t_ms_since(start) < 1500);
	for (int i = 0; i < 4; i++) {
		close(a.fds[i][0]);
		close(a.fds[i][1]);
	}
}

static void t_stop_all(void)
{
	for (int i = 0; i < T_NSERVERS; i++) {
		if (t_servers[i].pid != 0) {
			kill(t_servers[i].pid, SIGCONT);
			t_redis_stop(&t_servers[i]);
		}
	}
}

static void stop_servers(void)
{
	t_stop_all();
}

TEST_MAIN(T(the_fan_waits_for_all_at_once), T(only_redis_stores_of_distinct_servers), T(holds_on_a_majority),
	T(a_frozen_member_costs_nothing), T(a_majority_down_holds_nothing), T(stop_servers))
