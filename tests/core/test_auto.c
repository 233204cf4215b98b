/*
 * Auto-refresh (lkc_auto.c) over real redis-servers: holds the thread keeps
 * while the owner sleeps, stops for, gives up on, and leaves alone in a
 * forked child. Built under ASan+UBSan with the others, and under
 * ThreadSanitizer on its own (make tsan).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"
#include "redis_server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_NSERVERS 3
/* Durations: stretched under helgrind (T_SLOW), which runs the threads many times slower. */
#define T_MS(ms) ((ms) * (getenv("T_SLOW") != NULL ? 6 : 1))

static t_redis t_servers[T_NSERVERS];

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

static lkc_store *t_redis_store(const t_redis *r, int64_t timeout_ms)
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

/* Whether another store of the same server can take resource now (and then lets it go). */
static int t_free_for_others(lkc_store *other, const char *resource)
{
	lkc_hold h;
	lkc_err err;
	lkc_rc rc;

	lkc_err_clear(&err);
	lkc_hold_init(&h, resource, strlen(resource), &err);
	rc = lkc_acquire(other, &h, LKC_MODE_EXCLUSIVE, 10000, 0, &err);
	if (rc == LKC_OK) {
		lkc_release(other, &h, 0, &err);
	}
	lkc_hold_dispose(&h);
	return rc == LKC_OK;
}

/* Takes resource name on store for ttl_ms (a write hold) and starts refreshing it into *a. */
static void t_take_refreshed(lkc_store *store, lkc_hold *h, const char *name, int64_t ttl_ms, lkc_auto **a)
{
	lkc_err err;

	lkc_err_clear(&err);
	lkc_hold_init(h, name, strlen(name), &err);
	CHECK_RC(lkc_acquire(store, h, LKC_MODE_EXCLUSIVE, ttl_ms, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_auto_start(store, h, ttl_ms, 0, 0, a, &err), LKC_OK, &err);
}

/* A store of server r that holds resource name for ttl_ms, refreshed into *a. */
static lkc_store *t_refreshed_on(const t_redis *r, int64_t timeout_ms, lkc_hold *h, const char *name, int64_t ttl_ms,
	lkc_auto **a)
{
	lkc_store *store = t_redis_store(r, timeout_ms);

	t_take_refreshed(store, h, name, ttl_ms, a);
	return store;
}

/* A hold of 300 ms outlives many TTLs while its owner sleeps, and the owner sees the expiry move. */
static void refreshes_while_the_owner_sleeps(void)
{
	lkc_store *store, *other;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;
	uint64_t first;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	lkc_hold_init(&h, "auto-a", 6, &err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, T_MS(300), 0, &err), LKC_OK, &err);
	first = h.expires_ns;
	CHECK_RC(lkc_auto_start(store, &h, T_MS(300), 0, 0, &a, &err), LKC_OK, &err);
	CHECK(a != NULL);
	CHECK(lkc_auto_count() == 1);
	for (int i = 0; i < 6; i++) {
		t_sleep_ms(T_MS(200));
		CHECK(!t_free_for_others(other, "auto-a"));
	}
	lkc_auto_peek(a, &h);
	CHECK(h.expires_ns > first + T_MS(900) * 1000000ull);
	CHECK(h.expires_ns > lkc_now_ns());
	CHECK_RC(lkc_auto_pause(a, &h), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_auto_stop(a);
	CHECK(lkc_auto_count() == 0);
	CHECK(t_free_for_others(other, "auto-a"));
	lkc_hold_dispose(&h);
	lkc_store_release(other);
	lkc_store_release(store);
}

/* A hold broken meanwhile is found gone and never taken again. */
static void a_broken_hold_is_not_taken_again(void)
{
	lkc_store *store, *other;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;
	int locked = 1;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	t_take_refreshed(store, &h, "auto-b", T_MS(300), &a);
	CHECK_RC(other->ops->force_release(other, "auto-b", 6, &err), LKC_OK, &err);
	t_sleep_ms(T_MS(400));
	CHECK(lkc_auto_count() == 0);
	CHECK_RC(other->ops->is_locked(other, "auto-b", 6, &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_auto_pause(a, &h), LKC_EXPIRED, &err);
	lkc_auto_stop(a);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&h);
	lkc_store_release(other);
	lkc_store_release(store);
}

/* A bound ends the refreshing: the hold runs out its last TTL. */
static void a_bound_ends_it(void)
{
	lkc_store *store, *other;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;
	uint64_t start;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	lkc_hold_init(&h, "auto-c", 6, &err);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, T_MS(300), 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_auto_start(store, &h, T_MS(300), 0, start + T_MS(600) * 1000000ull, &a, &err), LKC_OK, &err);
	t_sleep_ms(T_MS(500));
	CHECK(!t_free_for_others(other, "auto-c"));
	/* The last refresh is no later than the bound, so the hold is gone by bound + TTL. */
	while (lkc_now_ns() < start + T_MS(950) * 1000000ull) {
		t_sleep_ms(10);
	}
	CHECK(t_free_for_others(other, "auto-c"));
	CHECK(lkc_auto_count() == 0);
	lkc_auto_stop(a);
	lkc_hold_dispose(&h);
	lkc_store_release(other);
	lkc_store_release(store);
}

/* A detached record goes on alone and is adopted back by a hold of the same resource and owner. */
static void detached_then_adopted(void)
{
	lkc_store *store, *again, *other;
	lkc_auto *a = NULL, *b;
	lkc_hold h, r;
	lkc_err err;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	t_take_refreshed(store, &h, "auto-d", T_MS(300), &a);
	lkc_auto_detach(a);
	lkc_abandon(store, &h);
	/* The origin store goes too: the record keeps the twin. */
	lkc_store_release(store);
	t_sleep_ms(T_MS(700));
	CHECK(!t_free_for_others(other, "auto-d"));
	CHECK(lkc_auto_count() == 1);
	again = t_redis_store(&t_servers[0], 1000);
	lkc_hold_init(&r, "auto-d", 6, &err);
	CHECK_RC(lkc_hold_restore(&r, h.owner, h.owner_len, &err), LKC_OK, &err);
	/* Namespaces: the stores were opened alike, and the core test sets none (both empty). */
	b = lkc_auto_adopt(again, &r);
	CHECK(b == a);
	if (b != NULL) {
		CHECK_RC(lkc_auto_pause(b, &r), LKC_OK, &err);
		CHECK(r.expires_ns > lkc_now_ns());
		lkc_auto_stop(b);
	}
	CHECK_RC(lkc_release(again, &r, 0, &err), LKC_OK, &err);
	CHECK(t_free_for_others(other, "auto-d"));
	lkc_hold_dispose(&r);
	lkc_hold_dispose(&h);
	lkc_store_release(again);
	lkc_store_release(other);
}

/* A detached record whose refresh under way finds the hold gone, adopted meanwhile: the adopter keeps it. */
static void adopted_while_found_gone(void)
{
	lkc_store *store, *other;
	lkc_err err;
	int adopted = 0;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	for (int i = 0; i < 200; i++) {
		lkc_auto *a = NULL, *b;
		lkc_hold h, r;

		lkc_hold_init(&h, "auto-u", 6, &err);
		CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, 6, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_auto_start(store, &h, 6, 0, 0, &a, &err), LKC_OK, &err);
		CHECK_RC(other->ops->force_release(other, "auto-u", 6, &err), LKC_OK, &err);
		usleep((useconds_t) (i * 13 % 2500));
		lkc_auto_detach(a);
		lkc_abandon(store, &h);
		lkc_hold_init(&r, "auto-u", 6, &err);
		CHECK_RC(lkc_hold_restore(&r, h.owner, h.owner_len, &err), LKC_OK, &err);
		b = lkc_auto_adopt(store, &r);
		if (b != NULL) {
			adopted++;
			lkc_auto_stop(b);
		}
		lkc_hold_dispose(&r);
		lkc_hold_dispose(&h);
	}
	/* Some were adopted before the thread found them gone and let them go, none twice. */
	CHECK(adopted > 0);
	CHECK(lkc_auto_count() == 0);
	lkc_store_release(other);
	lkc_store_release(store);
}

/* A server frozen for less than the TTL costs nothing; one restarted empty ends the refreshing. */
static void a_server_away(void)
{
	lkc_store *store;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;

	if (!t_started()) {
		return;
	}
	store = t_refreshed_on(&t_servers[2], 100, &h, "auto-e", T_MS(900), &a);
	lkc_err_clear(&err);
	t_sleep_ms(T_MS(350));
	kill(t_servers[2].pid, SIGSTOP);
	t_sleep_ms(T_MS(400));
	kill(t_servers[2].pid, SIGCONT);
	t_sleep_ms(T_MS(600));
	CHECK(lkc_auto_count() == 1);
	CHECK(t_redis_int(&t_servers[2], "PTTL %s", "{auto-e}") > 0);
	t_redis_kill(&t_servers[2], SIGKILL);
	CHECK(t_redis_restart(&t_servers[2]) == 0);
	t_sleep_ms(T_MS(700));
	CHECK(lkc_auto_count() == 0);
	CHECK_RC(lkc_auto_pause(a, &h), LKC_EXPIRED, &err);
	lkc_auto_stop(a);
	lkc_abandon(store, &h);
	lkc_hold_dispose(&h);
	lkc_store_release(store);
}

/*
 * A refresh to a shorter TTL that failed but may have reached the server: the
 * thread refreshes within a third of the shorter TTL, not on the old schedule.
 */
static void a_shorter_ttl_not_confirmed(void)
{
	lkc_store *store;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;

	if (!t_started()) {
		return;
	}
	store = t_refreshed_on(&t_servers[0], 1000, &h, "auto-s", T_MS(1200), &a);
	lkc_err_clear(&err);
	/* After the first refresh (a tenth of the TTL on a new twin), the next is 400 ms later. */
	t_sleep_ms(T_MS(200));
	CHECK_RC(lkc_auto_pause(a, &h), LKC_OK, &err);
	/* What the owner's refresh to 150 ms did on the server before its answer was lost. */
	CHECK(t_redis_int(&t_servers[0], "PEXPIRE %s %d", "{auto-s}", T_MS(150)) == 1);
	lkc_auto_resume(a, &h, T_MS(150), 0, 0);
	t_sleep_ms(T_MS(300));
	CHECK(t_redis_int(&t_servers[0], "PTTL %s", "{auto-s}") > 0);
	CHECK_RC(lkc_auto_pause(a, &h), LKC_OK, &err);
	lkc_auto_stop(a);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	lkc_store_release(store);
}

/* The number after "name:" (or "name:calls=") in the server's INFO section; -1 when missing. */
static long long t_info(t_redis *r, const char *section, const char *name)
{
	redisReply *reply = t_redis_cmd(r, "INFO %s", section);
	long long v = -1;
	const char *at;

	if (reply != NULL && reply->type == REDIS_REPLY_STRING && (at = strstr(reply->str, name)) != NULL) {
		at += strlen(name);
		if (strncmp(at, "calls=", 6) == 0) {
			at += 6;
		}
		v = strtoll(at, NULL, 10);
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return v;
}

/* Holds of one store due together are refreshed together: far fewer reads on the server than refreshes. */
static void a_burst_in_one_round_trip(void)
{
	enum { N = 100 };
	lkc_store *store;
	lkc_auto *a[N];
	lkc_hold h[N];
	lkc_err err;
	char name[32];
	long long reads, calls;
	int refreshed = 0;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[2], 1000);
	lkc_err_clear(&err);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "auto-burst%d", i);
		t_take_refreshed(store, &h[i], name, T_MS(1200), &a[i]);
	}
	reads = t_info(&t_servers[2], "stats", "total_reads_processed:");
	calls = t_info(&t_servers[2], "commandstats", "cmdstat_evalsha:");
	t_sleep_ms(T_MS(1500));
	reads = t_info(&t_servers[2], "stats", "total_reads_processed:") - reads;
	calls = t_info(&t_servers[2], "commandstats", "cmdstat_evalsha:") - calls;
	/* About four rounds of 100: each round two writes (64 + 36), not 100. */
	CHECK(calls >= 2 * N);
	CHECK(reads * 5 < calls);
	for (int i = 0; i < N; i++) {
		refreshed += lkc_auto_pause(a[i], &h[i]) == LKC_OK;
		CHECK_RC(lkc_release(store, &h[i], 0, &err), LKC_OK, &err);
		lkc_auto_stop(a[i]);
		lkc_hold_dispose(&h[i]);
	}
	CHECK(refreshed == N);
	lkc_store_release(store);
}

/* Many holds at once, on two stores and a combined one, all kept (fewer under helgrind: T_SLOW). */
static void many_holds(void)
{
	enum { MAX = 300 };
	const int N = getenv("T_SLOW") != NULL ? 40 : MAX;
	lkc_store *members[T_NSERVERS], *stores[2], *other;
	lkc_auto *a[MAX + 1];
	lkc_hold h[MAX + 1];
	lkc_err err;
	char name[32];
	int kept = 0;

	if (!t_started()) {
		return;
	}
	stores[0] = t_redis_store(&t_servers[0], 1000);
	stores[1] = t_redis_store(&t_servers[1], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "auto-m%d", i);
		t_take_refreshed(stores[i % 2], &h[i], name, T_MS(1200), &a[i]);
	}
	for (int i = 0; i < T_NSERVERS; i++) {
		members[i] = t_redis_store(&t_servers[i], 1000);
	}
	{
		lkc_store *combined = NULL;

		CHECK_RC(lkc_combined_open(&combined, members, T_NSERVERS, 0, &err), LKC_OK, &err);
		lkc_hold_init(&h[N], "auto-cb", 7, &err);
		CHECK_RC(lkc_acquire(combined, &h[N], LKC_MODE_EXCLUSIVE, T_MS(1200), 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_auto_start(combined, &h[N], T_MS(1200), 0, 0, &a[N], &err), LKC_OK, &err);
		t_sleep_ms(T_MS(2600));
		CHECK(lkc_auto_count() == (size_t) N + 1);
		for (int i = 0; i < N; i += 2) {
			kept += !t_free_for_others(other, h[i].resource);
		}
		CHECK(kept == N / 2);
		CHECK(t_redis_int(&t_servers[1], "PTTL %s", "{auto-cb}") > 0);
		CHECK_RC(lkc_auto_pause(a[N], &h[N]), LKC_OK, &err);
		CHECK_RC(lkc_release(combined, &h[N], 0, &err), LKC_OK, &err);
		lkc_auto_stop(a[N]);
		lkc_hold_dispose(&h[N]);
		lkc_store_release(combined);
	}
	{
		int refreshed = 0, released = 0;

		for (int i = 0; i < N; i++) {
			refreshed += lkc_auto_pause(a[i], &h[i]) == LKC_OK;
			released += lkc_release(stores[i % 2], &h[i], 0, &err) == LKC_OK;
			lkc_auto_stop(a[i]);
			lkc_hold_dispose(&h[i]);
		}
		CHECK(refreshed == N);
		CHECK(released == N);
	}
	for (int i = 0; i < T_NSERVERS; i++) {
		lkc_store_release(members[i]);
	}
	lkc_store_release(stores[0]);
	lkc_store_release(stores[1]);
	lkc_store_release(other);
}

/* A forked child has no thread and no records; its parent's thread goes on. */
static void a_child_refreshes_nothing(void)
{
	lkc_store *store, *other;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;
	pid_t pid;
	int status = 0;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	other = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	t_take_refreshed(store, &h, "auto-f", T_MS(300), &a);
	pid = fork();
	if (pid == 0) {
		int bad = lkc_auto_count() != 0;

		/* The parent's record: stopping it here does nothing to it. */
		lkc_auto_stop(a);
		_exit(bad);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t_sleep_ms(T_MS(600));
	CHECK(lkc_auto_count() == 1);
	CHECK(!t_free_for_others(other, "auto-f"));
	CHECK_RC(lkc_auto_pause(a, &h), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_auto_stop(a);
	lkc_hold_dispose(&h);
	lkc_store_release(other);
	lkc_store_release(store);
}

/* Shutdown stops the thread and frees what it still refreshes. */
static void shutdown_frees_all(void)
{
	lkc_store *store;
	lkc_auto *a = NULL;
	lkc_hold h;
	lkc_err err;

	if (!t_started()) {
		return;
	}
	store = t_redis_store(&t_servers[0], 1000);
	lkc_err_clear(&err);
	t_take_refreshed(store, &h, "auto-g", T_MS(300), &a);
	lkc_auto_detach(a);
	lkc_auto_shutdown();
	CHECK(lkc_auto_count() == 0);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	lkc_store_release(store);
}

static void stop_servers(void)
{
	for (int i = 0; i < T_NSERVERS; i++) {
		if (t_servers[i].pid != 0) {
			kill(t_servers[i].pid, SIGCONT);
			t_redis_stop(&t_servers[i]);
		}
	}
}

TEST_MAIN(T(refreshes_while_the_owner_sleeps), T(a_broken_hold_is_not_taken_again), T(a_bound_ends_it),
	T(detached_then_adopted), T(adopted_while_found_gone), T(a_server_away), T(a_shorter_ttl_not_confirmed),
	T(a_burst_in_one_round_trip), T(many_holds), T(a_child_refreshes_nothing), T(shutdown_frees_all),
	T(stop_servers))
