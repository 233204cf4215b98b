/*
 * The Redis store's scripts declare every key they touch in KEYS, and touch
 * none outside the lock key's slot. Redis 7.0 enforces neither outside a
 * cluster, so this test watches: a private redis-server, a second connection
 * in MONITOR mode, and every path of every script driven through the core's
 * API (tests/core/monitor_audit.h reads the stream). Each case fails with
 * one line per distinct (script, command, key shape) it is the first to
 * show; the last case fails when a script of redis_scripts.h never ran.
 *
 * It runs with the others (`make -C tests/core check`; one case:
 * T_ONLY=<case> build/test_redis_keys).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"
#include "redis_server.h"
#include "monitor_audit.h"
#include "redis_scripts.h"

#include "../../ext/core/lkc_redis_lua_const.h"

#include <sys/time.h>

static t_redis srv;
static int srv_up;
static redisContext *mon;
static ma_audit audit;

/* Stops everything set up by t_setup, before the leak check runs. */
static void t_teardown(void)
{
	lkc_redis_pool_shutdown();
	ma_free(&audit);
	if (mon != NULL) {
		redisFree(mon);
		mon = NULL;
	}
	if (srv_up) {
		t_redis_stop(&srv);
		srv_up = 0;
	}
}

/* The server, the MONITOR connection and the audit with the store's scripts, on first use. */
static void t_setup(void)
{
	if (srv_up) {
		return;
	}
	if (t_redis_start(&srv) != 0) {
		fprintf(stderr, "cannot start redis-server\n");
		exit(1);
	}
	srv_up = 1;
	atexit(t_teardown);
	/* PASS/FAIL lines in order with the audit's messages on stderr, also in a log. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	mon = ma_monitor("127.0.0.1", srv.port);
	if (mon == NULL) {
		exit(1);
	}
	ma_init(&audit, srv.admin);
	for (size_t i = 0; i < T_REDIS_NSCRIPTS; i++) {
		if (ma_add_script(&audit, t_redis_scripts[i].name, t_redis_scripts[i].body) != 0) {
			fprintf(stderr, "SCRIPT LOAD of %s failed\n", t_redis_scripts[i].name);
			exit(1);
		}
	}
}

/* Starts a case: what MONITOR showed before belongs to the case before. */
static void t_audit_begin(void)
{
	t_setup();
	CHECK(ma_drain(&audit, mon) == 0);
	audit.gen++;
}

/*
 * Ends a case: reads what the case made the scripts do, and fails once for
 * each distinct violation it showed first; violations listed by an earlier
 * case fail it too, on one line.
 */
static void t_audit_end(void)
{
	size_t again = 0;

	CHECK(ma_drain(&audit, mon) == 0);
	for (size_t i = 0; i < audit.nfindings; i++) {
		const ma_finding *f = &audit.findings[i];

		if (f->last_gen != audit.gen) {
			continue;
		}
		t_checks++;
		if (f->first_gen == audit.gen) {
			t_failed++;
			ma_print(stderr, "key audit: ", f);
		} else {
			again++;
		}
	}
	if (again > 0) {
		t_failed++;
		fprintf(stderr, "key audit: and %zu violation%s listed above\n", again, again == 1 ? "" : "s");
	}
}

/* A store on the server with prefix, fair or not. */
static lkc_store *t_store(const char *prefix, int fair)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	lkc_redis_config_init(&cfg);
	cfg.port = srv.port;
	cfg.prefix = strdup(prefix);
	cfg.prefix_len = strlen(prefix);
	cfg.fair = fair;
	cfg.timeout_ms = 5000;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	return store;
}

static void t_hold(lkc_hold *hold)
{
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_hold_init(hold, "res", 3, &err), LKC_OK, &err);
}

/*
 * Polls until want clients are asleep waiting (blocked in a command such as
 * BLPOP, or subscribed); 0 when they were not within 10 s. Holders talk to
 * the test through pipes, so the waiters are the only such clients.
 */
static int t_blocked(int want)
{
	for (int i = 0; i < 2000; i++) {
		redisReply *reply = t_redis_cmd(&srv, "CLIENT LIST");
		int n = 0;

		if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
			for (const char *at = reply->str; (at = strstr(at, " flags=")) != NULL; at++) {
				size_t len = strcspn(at + 7, " ");

				n += memchr(at + 7, 'b', len) != NULL || memchr(at + 7, 'P', len) != NULL;
			}
		}
		freeReplyObject(reply);
		if (n == want) {
			return 1;
		}
		t_sleep_ms(5);
	}
	fprintf(stderr, "%d waiters did not block\n", want);
	return 0;
}

/* What a child process does with "res" under prefix: told by and telling its parent through pipes. */
typedef struct {
	const char *prefix;
	int fair;
	int read_first;          /* a read hold at once ('s'), then it waits for a go before the acquire below */
	lkc_mode mode;
	int64_t ttl_ms;
	int64_t wait_ms;
	long linger_ms;          /* how long it keeps the hold after its go */
} t_kid_spec;

typedef struct {
	pid_t pid;
	int to, from;            /* pipes: go bytes to it, its reports from it */
	char owner[LKC_TOKEN_LEN + 1];
} t_kid;

/*
 * Forks a child that sends its owner token, acquires as spec says and reports
 * 'a' acquired, 'b' busy, 'i' interrupted or 'e' an error; once acquired it
 * waits for a go, keeps the hold linger_ms and reports 'r' released or 'x'.
 */
static void t_kid_start(t_kid *kid, const t_kid_spec *spec)
{
	int to[2], from[2];

	memset(kid, 0, sizeof(*kid));
	CHECK(pipe(to) == 0 && pipe(from) == 0);
	kid->pid = fork();
	if (kid->pid == 0) {
		lkc_store *store = NULL;
		lkc_redis_config cfg;
		lkc_hold hold;
		lkc_err err;
		lkc_rc rc;
		char c = 'e';

		lkc_set_interrupt_hook(NULL);
		close(to[1]);
		close(from[0]);
		lkc_redis_config_init(&cfg);
		cfg.port = srv.port;
		cfg.prefix = strdup(spec->prefix);
		cfg.prefix_len = strlen(spec->prefix);
		cfg.fair = spec->fair;
		if (lkc_redis_open(&store, &cfg, &err) != LKC_OK || lkc_hold_init(&hold, "res", 3, &err) != LKC_OK
			|| write(from[1], hold.owner, LKC_TOKEN_LEN) != LKC_TOKEN_LEN) {
			_exit(1);
		}
		if (spec->read_first) {
			c = lkc_acquire(store, &hold, LKC_MODE_SHARED, spec->ttl_ms, 0, &err) == LKC_OK ? 's' : 'e';
			if (write(from[1], &c, 1) != 1 || c != 's' || read(to[0], &c, 1) != 1) {
				_exit(1);
			}
		}
		rc = lkc_acquire(store, &hold, spec->mode, spec->ttl_ms, spec->wait_ms, &err);
		c = rc == LKC_OK ? 'a' : rc == LKC_BUSY ? 'b' : rc == LKC_INTERRUPTED ? 'i' : 'e';
		if (write(from[1], &c, 1) != 1) {
			_exit(1);
		}
		if (rc == LKC_OK) {
			if (read(to[0], &c, 1) != 1) {
				_exit(1);
			}
			t_sleep_ms(spec->linger_ms);
			c = lkc_release(store, &hold, 0, &err) == LKC_OK ? 'r' : 'x';
			if (write(from[1], &c, 1) != 1) {
				_exit(1);
			}
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	kid->to = to[1];
	kid->from = from[0];
	if (kid->pid > 0) {
		struct pollfd pfd = { kid->from, POLLIN, 0 };

		CHECK(poll(&pfd, 1, 10000) == 1 && read(kid->from, kid->owner, LKC_TOKEN_LEN) == LKC_TOKEN_LEN);
	}
}

/* The child's next report, or '-' when none came within timeout_ms (or it is gone). */
static char t_kid_next(t_kid *kid, int timeout_ms)
{
	struct pollfd pfd = { kid->from, POLLIN, 0 };
	char c = '-';

	if (poll(&pfd, 1, timeout_ms) != 1 || read(kid->from, &c, 1) != 1) {
		return '-';
	}
	return c;
}

/* Lets the child go on. */
static void t_kid_go(t_kid *kid)
{
	CHECK(write(kid->to, "g", 1) == 1);
}

/* Whether kid k, asked to, took its hold and let it go ('a', then 'r'). */
static int t_kid_served(t_kid *k)
{
	if (t_kid_next(k, 10000) != 'a') {
		return 0;
	}
	t_kid_go(k);
	return t_kid_next(k, 10000) == 'r';
}

/* Reaps the child (killed when it has not exited within 30 s); whether it exited with 0. */
static int t_kid_end(t_kid *kid)
{
	uint64_t start = lkc_now_ns();
	int status = -1, ok = 0;

	for (;;) {
		if (waitpid(kid->pid, &status, WNOHANG) == kid->pid) {
			ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			break;
		}
		if (lkc_now_ns() - start > 30000000000ull) {
			kill(kid->pid, SIGKILL);
			waitpid(kid->pid, NULL, 0);
			fprintf(stderr, "child %d hung\n", (int) kid->pid);
			break;
		}
		t_sleep_ms(5);
	}
	close(kid->to);
	close(kid->from);
	return ok;
}

/* Kills the child with SIGKILL, as a process that dies while it waits. */
static void t_kid_kill(t_kid *kid)
{
	kill(kid->pid, SIGKILL);
	waitpid(kid->pid, NULL, 0);
	close(kid->to);
	close(kid->from);
}

/* Starts a child that waits for the resource and checks it is asleep in the queue; want_blocked counts it. */
static void t_kid_queue(t_kid *kid, const t_kid_spec *spec, int want_blocked)
{
	t_kid_start(kid, spec);
	CHECK(t_blocked(want_blocked));
}

/* Whether anybody holds "res", per the store; -1 on error. */
static int t_locked(lkc_store *store)
{
	lkc_err err;
	int locked = -1;

	lkc_err_clear(&err);
	if (store->ops->is_locked(store, "res", 3, &locked, &err) != LKC_OK) {
		return -1;
	}
	return locked;
}


/* The host's verdict: interrupted once our alarm rang. */
static int t_hook(void)
{
	return t_alarmed;
}

/* How many times the audit a saw what in script, by command on a key of shape. */
static unsigned long t_seen(const ma_audit *a, const char *what, const char *script, const char *command, const char *shape)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		const ma_finding *f = &a->findings[i];

		if (strcmp(f->what, what) == 0 && strcmp(f->script, script) == 0 && strcmp(f->command, command) == 0
			&& strcmp(f->shape, shape) == 0) {
			return f->count;
		}
	}
	return 0;
}

/* Parses a MONITOR line given as a C string. */
static int t_parse(const char *line, ma_line *l)
{
	return ma_parse(line, strlen(line), l);
}

/* Feeds a MONITOR line to a. */
static void t_feed(ma_audit *a, const char *line)
{
	ma_feed(a, line, strlen(line));
}

/*
 * The audit itself, on a server of its own: MONITOR's quoting read back, and
 * scripts that keep the rule pass while each way of breaking it is found.
 */
static void the_audit_finds_what_it_must(void)
{
	static const char clean[] = "redis.call('SET', KEYS[2], ARGV[1]) redis.call('TIME') "
		"return redis.call('EXISTS', KEYS[1], KEYS[2])";
	static const char dirty[] = "redis.call('RPUSH', KEYS[1] .. ':w:' .. ARGV[1], 'y') "
		"return redis.call('GET', 'elsewhere')";
	static const char owner[] = "o\"d\\d\n\x01\xff";
	t_redis own;
	redisContext *m;
	ma_audit a;
	ma_line l;
	char line[512];

	/* Every escape MONITOR writes, read back to the bytes. */
	CHECK(t_parse("1.5 [0 lua] \"R\\\"\\\\\\n\\r\\t\\a\\b\\x00\\xfF \"", &l) == 0);
	CHECK(l.lua && l.argc == 1 && l.lens[0] == 11 && memcmp(l.argv[0], "R\"\\\n\r\t\a\b\0\xff ", 11) == 0);
	ma_line_free(&l);
	CHECK(t_parse("1.5 [3 unix:/tmp/x] sock] \"get\" \"k\"", &l) == 0);
	CHECK(!l.lua && l.argc == 2 && strcmp(l.argv[1], "k") == 0);
	ma_line_free(&l);
	CHECK(t_parse("1.5 [0 lua] \"bad\\q\"", &l) != 0);
	CHECK(t_parse("1.5 [0 lua] \"open", &l) != 0);
	CHECK(t_parse("1.5 [0 lua] \"x\\x4\"", &l) != 0);

	own.dir[0] = '\0';
	own.extra = NULL;
	if (t_redis_start_opts(&own, 0, 0, NULL) != 0) {
		CHECK(0);
		return;
	}
	m = ma_monitor("127.0.0.1", own.port);
	CHECK(m != NULL);
	ma_init(&a, own.admin);
	CHECK(ma_add_script(&a, "clean", clean) == 0);
	CHECK(ma_add_script(&a, "dirty", dirty) == 0);
	if (m == NULL || a.nscripts != 2) {
		ma_free(&a);
		redisFree(m);
		t_redis_stop(&own);
		return;
	}
	/* Run for real: the clean script by its SHA-1, the dirty one by its body, with an owner of odd bytes. */
	freeReplyObject(t_redis_cmd(&own, "EVALSHA %s 2 p{r} p{r}:x v", a.scripts[0].sha));
	freeReplyObject(t_redis_cmd(&own, "EVAL %s 1 p{r} %b", dirty, owner, sizeof(owner) - 1));
	CHECK(ma_drain(&a, m) == 0);
	CHECK(a.scripts[0].runs == 1 && a.scripts[1].runs == 1);
	CHECK(t_seen(&a, "undeclared key", "dirty", "RPUSH", "P{R}:w:<token>") == 1);
	CHECK(t_seen(&a, "undeclared key", "dirty", "GET", "<other key>") == 1);
	CHECK(t_seen(&a, "key outside the lock key's slot", "dirty", "GET", "<other key>") == 1);
	CHECK(a.nfindings == 3);

	/* Lines as MONITOR writes them: keys moved by their arguments, declared keys of another slot, unknown scripts. */
	snprintf(line, sizeof(line), "1.5 [0 127.0.0.1:1] \"evalsha\" \"%s\" \"3\" \"p{r}\" \"p{r}:x\" \"q{s}\"", a.scripts[0].sha);
	t_feed(&a, line);
	t_feed(&a, "1.5 [0 lua] \"ZUNIONSTORE\" \"p{r}:d\" \"2\" \"p{r}:x\" \"p{r}:e:0123456789abcdef0123456789abcdef\"");
	t_feed(&a, "1.5 [0 lua] \"SET\" \"q{s}\" \"p{r}:nokey\"");
	t_feed(&a, "1.5 [0 127.0.0.1:1] \"evalsha\" \"0000000000000000000000000000000000000000\" \"1\" \"p{r}\"");
	t_feed(&a, "1.5 [0 lua] \"GET\" \"p{r}:z\"");
	t_feed(&a, "1.5 [0 127.0.0.1:1] \"get\" \"p{r}\"");
	t_feed(&a, "1.5 [0 lua] \"GET\" \"p{r}\"");
	CHECK(t_seen(&a, "declared key outside the lock key's slot", "clean", "EVALSHA", "<other key>") == 1);
	CHECK(t_seen(&a, "undeclared key", "clean", "ZUNIONSTORE", "P{R}:d") == 1);
	CHECK(t_seen(&a, "undeclared key", "clean", "ZUNIONSTORE", "P{R}:e:<token>") == 1);
	CHECK(t_seen(&a, "undeclared key", "clean", "ZUNIONSTORE", "P{R}:x") == 0);
	CHECK(t_seen(&a, "key outside the lock key's slot", "clean", "SET", "<other key>") == 1);
	CHECK(t_seen(&a, "undeclared key", "clean", "SET", "<other key>") == 0);
	CHECK(t_seen(&a, "undeclared key", "unknown script 0000000000000000000000000000000000000000", "GET", "P{R}:z") == 1);
	CHECK(t_seen(&a, "script command without its call", "(no script call seen)", "GET", "") == 1);
	CHECK(t_seen(&a, "script not in the audit's table", "unknown script 0000000000000000000000000000000000000000",
		"EVALSHA", "") == 1);
	CHECK(a.nfindings == 10);
	ma_free(&a);
	redisFree(m);
	t_redis_stop(&own);
}

/* Single attempts, holds without contention, and the scripts that serve them. */
static void holds_without_waiters(void)
{
	lkc_store *store;
	lkc_hold a, b, c;
	lkc_err err;
	int64_t fence = 0;

	t_audit_begin();
	store = t_store("k:plain:", 1);
	lkc_err_clear(&err);
	t_hold(&a);
	t_hold(&b);
	t_hold(&c);
	/* A write hold by a single attempt (a transaction), its token on a new counter, refresh, check. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &fence, &err), LKC_OK, &err);
	CHECK(fence > 0);
	/* A hold restored by its token does not know its token: the fence script tells. */
	CHECK_RC(lkc_hold_restore(&c, a.owner, a.owner_len, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &c, &fence, &err), LKC_OK, &err);
	CHECK(fence > 0);
	lkc_hold_dispose(&c);
	t_hold(&c);
	/* The combined store's floor: raised while ours, refused for a hold that is not. */
	CHECK_RC(lkc_redis_fence_floor(store, &a, fence + 10, &err), LKC_OK, &err);
	CHECK_RC(lkc_redis_fence_floor(store, &c, fence + 20, &err), LKC_LOST, &err);
	CHECK_RC(lkc_refresh(store, &a, 30000, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, LKC_TTL_NONE, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK(t_locked(store) == 1);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	/* Demotion and promotion of the only holder, in one step each. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_EXCLUSIVE);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store) == 0);

	/* Read holds: the first, a second, refreshes, checks, the last one out. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, 20000, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &b, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &b, &fence, &err), LKC_ERR_STATE, &err);
	/* The store's own answers for a reader's token and for nobody's. */
	CHECK_RC(lkc_hold_restore(&c, b.owner, b.owner_len, &err), LKC_OK, &err);
	CHECK(store->ops->fence(store, &c, &fence, &err) != LKC_OK);
	lkc_hold_dispose(&c);
	t_hold(&c);
	CHECK(store->ops->fence(store, &c, &fence, &err) != LKC_OK);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	/* A blocking acquire that finds it free, with no TTL; a read hold without a TTL. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 1000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 1000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	/* Holds that expired: release, refresh and check find them gone. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 100, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 100, 1000, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, 1000, &err), LKC_LOST, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 100, 0, &err), LKC_OK, &err);
	t_sleep_ms(150);
	CHECK_RC(lkc_refresh(store, &a, 1000, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 100, 0, &err), LKC_OK, &err);
	t_sleep_ms(150);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 100, 0, &err), LKC_OK, &err);
	t_sleep_ms(150);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);

	/* force_release of a free, a written and a read resource; waitUntilFree of a free one. */
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_wait_free(store, "res", 3, 1000, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_hold_dispose(&c);
	store->ops->destroy(store);
	t_audit_end();
}

/* The hook below: the holder it releases, and the waiter it queues first. */
static lkc_store *t_handon_store;
static lkc_hold *t_handon_hold;
static t_kid t_handon_kid;
static int t_handon_started;

/*
 * Interrupts once the alarm rang; before that first answer it queues a
 * child behind us and releases the holder, so that the write hold has been
 * handed to the interrupted waiter, which gives it on.
 */
static int t_hook_after_handoff(void)
{
	static const t_kid_spec writer = { "k:queue:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	lkc_err err;

	if (!t_alarmed) {
		return 0;
	}
	if (!t_handon_started) {
		t_handon_started = 1;
		t_kid_queue(&t_handon_kid, &writer, 1);
		lkc_err_clear(&err);
		CHECK_RC(lkc_release(t_handon_store, t_handon_hold, 0, &err), LKC_OK, &err);
	}
	return 1;
}

/* A writer and a reader queue; one wait times out, one is interrupted; the holder hands over. */
static void waits_that_queue_time_out_and_are_interrupted(void)
{
	static const t_kid_spec writer = { "k:queue:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	static const t_kid_spec reader = { "k:queue:", 1, 0, LKC_MODE_SHARED, 60000, 30000, 0 };
	lkc_store *store, *other;
	lkc_hold a, b;
	lkc_err err;
	t_kid w, r;

	t_audit_begin();
	store = t_store("k:queue:", 1);
	other = t_store("k:queue:", 1);
	lkc_err_clear(&err);
	t_hold(&a);
	t_hold(&b);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_kid_queue(&w, &writer, 1);
	t_kid_queue(&r, &reader, 2);
	/* Waits that end: bounded, as a writer and as a reader; interrupted by the host. */
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_EXCLUSIVE, 60000, 300, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_SHARED, 60000, 300, &err), LKC_BUSY, &err);
	lkc_set_interrupt_hook(t_hook);
	t_alarm_in(200);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_EXCLUSIVE, 60000, 30000, &err), LKC_INTERRUPTED, &err);
	t_alarm_in(200);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_SHARED, 60000, 30000, &err), LKC_INTERRUPTED, &err);
	lkc_set_interrupt_hook(NULL);
	signal(SIGALRM, SIG_DFL);
	/* The release hands the write hold to the writer, whose release hands a read hold on. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_kid_served(&w));
	CHECK(t_kid_served(&r));
	CHECK(t_kid_end(&w) && t_kid_end(&r));

	/* A waiter interrupted after the hold was handed to it gives it on to the next. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_handon_store = store;
	t_handon_hold = &a;
	t_handon_started = 0;
	lkc_set_interrupt_hook(t_hook_after_handoff);
	t_alarm_in(200);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_EXCLUSIVE, 60000, 30000, &err), LKC_INTERRUPTED, &err);
	lkc_set_interrupt_hook(NULL);
	signal(SIGALRM, SIG_DFL);
	CHECK(t_handon_started);
	if (t_handon_started) {
		CHECK(t_kid_served(&t_handon_kid));
		CHECK(t_kid_end(&t_handon_kid));
	}
	CHECK(t_locked(store) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	other->ops->destroy(other);
	t_audit_end();
}

/*
 * Hand-offs between waiters, fair or not: a writer, then a batch of readers
 * the writer's release lets in together, then a writer after the readers.
 */
static void t_hand_offs(const char *prefix, int fair)
{
	const t_kid_spec writer = { prefix, fair, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	const t_kid_spec reader = { prefix, fair, 0, LKC_MODE_SHARED, 60000, 30000, 0 };
	lkc_store *store = t_store(prefix, fair);
	lkc_hold a;
	lkc_err err;
	t_kid w1, rs[3], w2;

	lkc_err_clear(&err);
	t_hold(&a);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_kid_queue(&w1, &writer, 1);
	for (int k = 0; k < 3; k++) {
		t_kid_queue(&rs[k], &reader, 2 + k);
	}
	t_kid_queue(&w2, &writer, 5);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_kid_served(&w1));
	/* The readers hold together before any of them lets go. */
	for (int k = 0; k < 3; k++) {
		CHECK(t_kid_next(&rs[k], 10000) == 'a');
	}
	for (int k = 0; k < 3; k++) {
		t_kid_go(&rs[k]);
		CHECK(t_kid_next(&rs[k], 10000) == 'r');
	}
	CHECK(t_kid_served(&w2));
	CHECK(t_kid_end(&w1) && t_kid_end(&w2));
	for (int k = 0; k < 3; k++) {
		CHECK(t_kid_end(&rs[k]));
	}
	CHECK(t_locked(store) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void fair_hand_offs(void)
{
	t_audit_begin();
	t_hand_offs("k:fair:", 1);
	t_audit_end();
}

static void unfair_hand_offs(void)
{
	t_audit_begin();
	t_hand_offs("k:unfair:", 0);
	t_audit_end();
}

/*
 * Promotion while others read: the promoter waits at the front, a second
 * promotion is refused; demotion lets the readers at the head in.
 */
static void promotion_and_demotion_with_waiters(void)
{
	static const t_kid_spec promoter = { "k:promote:", 1, 1, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	static const t_kid_spec writer = { "k:promote:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	static const t_kid_spec reader = { "k:promote:", 1, 0, LKC_MODE_SHARED, 60000, 30000, 0 };
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	t_kid p, w, rs[2];

	t_audit_begin();
	store = t_store("k:promote:", 1);
	lkc_err_clear(&err);
	t_hold(&a);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	t_kid_start(&p, &promoter);
	CHECK(t_kid_next(&p, 10000) == 's');
	t_kid_queue(&w, &writer, 1);
	t_kid_go(&p);
	CHECK(t_blocked(2));
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 5000, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	/* Our read hold goes: the promotion is handed over, then the writer's turn. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_kid_served(&p));
	CHECK(t_kid_served(&w));
	CHECK(t_kid_end(&p) && t_kid_end(&w));

	/* Demotion: two readers wait behind our write hold and come in with us. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	for (int k = 0; k < 2; k++) {
		t_kid_queue(&rs[k], &reader, 1 + k);
	}
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	for (int k = 0; k < 2; k++) {
		CHECK(t_kid_served(&rs[k]));
		CHECK(t_kid_end(&rs[k]));
	}
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	t_audit_end();
}

/* While a writer waits: refreshes to a shorter TTL, and releases with a delay (the cooldown), of a write and a read hold. */
static void shorter_refresh_and_cooldown_while_waiting(void)
{
	static const t_kid_spec writer = { "k:cool:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	lkc_store *store;
	lkc_hold a;
	lkc_err err;

	t_audit_begin();
	store = t_store("k:cool:", 1);
	lkc_err_clear(&err);
	t_hold(&a);
	for (int shared = 0; shared <= 1; shared++) {
		t_kid w;

		CHECK_RC(lkc_acquire(store, &a, shared ? LKC_MODE_SHARED : LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
		t_kid_queue(&w, &writer, 1);
		CHECK_RC(lkc_refresh(store, &a, 5000, &err), LKC_OK, &err);
		CHECK(t_blocked(1));
		CHECK_RC(lkc_release(store, &a, 300, &err), LKC_OK, &err);
		CHECK(t_kid_served(&w));
		CHECK(t_kid_end(&w));
	}
	CHECK(t_locked(store) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	t_audit_end();
}

/* Queues a waiter, kills it while it sleeps, and releases a so that the write hold is handed to the dead. */
static void t_hand_to_the_dead(lkc_store *store, lkc_hold *a, const char *prefix, char owner[LKC_TOKEN_LEN + 1],
	int blocked_before)
{
	const t_kid_spec writer = { prefix, 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	lkc_err err;
	t_kid d;

	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_kid_queue(&d, &writer, blocked_before + 1);
	memcpy(owner, d.owner, LKC_TOKEN_LEN + 1);
	t_kid_kill(&d);
	CHECK(t_blocked(blocked_before));
	CHECK_RC(lkc_release(store, a, 0, &err), LKC_OK, &err);
}

/*
 * A waiter that dies while queued is handed the hold: isLocked(), check, a
 * single attempt, a watching waiter and force_release each find it once the
 * grace is over (force_release at once).
 */
static void holds_handed_to_a_dead_waiter(void)
{
	static const char P[] = "k:dead:";
	static const t_kid_spec writer = { P, 1, 0, LKC_MODE_EXCLUSIVE, 60000, 30000, 0 };
	char owner[LKC_TOKEN_LEN + 1];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	t_kid w;

	t_audit_begin();
	store = t_store(P, 1);
	lkc_err_clear(&err);
	t_hold(&a);
	t_hold(&b);
	/* isLocked(): asked during the grace (held, unless this machine is slow), and after it (free). */
	t_hand_to_the_dead(store, &a, P, owner, 0);
	CHECK(t_locked(store) >= 0);
	t_sleep_ms(LKC_RS_GRACE + 150);
	CHECK(t_locked(store) == 0);

	/* check by the dead waiter's token (a hold restored by it). */
	t_hand_to_the_dead(store, &a, P, owner, 0);
	CHECK_RC(lkc_hold_restore(&b, owner, LKC_TOKEN_LEN, &err), LKC_OK, &err);
	t_sleep_ms(LKC_RS_GRACE + 150);
	CHECK_RC(lkc_check(store, &b, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&b);
	t_hold(&b);

	/* A single attempt of a write hold, and of a read hold. */
	t_hand_to_the_dead(store, &a, P, owner, 0);
	t_sleep_ms(LKC_RS_GRACE + 150);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	t_hand_to_the_dead(store, &a, P, owner, 0);
	t_sleep_ms(LKC_RS_GRACE + 150);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);

	/* A live waiter behind the dead one watches, breaks the hand-off after the grace, and takes the hold. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	{
		t_kid d;

		t_kid_queue(&d, &writer, 1);
		t_kid_queue(&w, &writer, 2);
		t_kid_kill(&d);
		CHECK(t_blocked(1));
	}
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_kid_served(&w));
	CHECK(t_kid_end(&w));

	/* force_release withdraws the hand-off at once and hands the resource to the live waiter. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	{
		t_kid d;

		t_kid_queue(&d, &writer, 1);
		t_kid_queue(&w, &writer, 2);
		t_kid_kill(&d);
		CHECK(t_blocked(1));
	}
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK(t_kid_served(&w));
	CHECK(t_kid_end(&w));
	CHECK(t_locked(store) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	t_audit_end();
}

/* waitUntilFree() while another process holds the resource: a bounded wait ends busy, then its release wakes us. */
static void wait_free_with_a_holder_that_releases(void)
{
	static const t_kid_spec holder = { "k:free:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 0, 300 };
	lkc_store *store;
	lkc_err err;
	t_kid h;

	t_audit_begin();
	store = t_store("k:free:", 1);
	lkc_err_clear(&err);
	t_kid_start(&h, &holder);
	CHECK(t_kid_next(&h, 10000) == 'a');
	CHECK_RC(lkc_wait_free(store, "res", 3, 200, &err), LKC_BUSY, &err);
	t_kid_go(&h);
	CHECK_RC(lkc_wait_free(store, "res", 3, 10000, &err), LKC_OK, &err);
	CHECK(t_kid_next(&h, 10000) == 'r');
	CHECK(t_kid_end(&h));
	CHECK(t_locked(store) == 0);
	store->ops->destroy(store);
	t_audit_end();
}

/* inspect() of a free resource, of a writer with a waiter queued behind it, and of readers: it reads declared keys only. */
static void inspect_reads_declared_keys(void)
{
	static const t_kid_spec waiter = { "k:insp:", 1, 0, LKC_MODE_EXCLUSIVE, 60000, 10000, 0 };
	lkc_store *store;
	lkc_inspect seen;
	lkc_hold a, b;
	lkc_err err;
	t_kid w;

	t_audit_begin();
	store = t_store("k:insp:", 1);
	lkc_err_clear(&err);
	CHECK(lkc_hold_init(&a, "res", 3, &err) == LKC_OK);
	CHECK(lkc_hold_init(&b, "res", 3, &err) == LKC_OK);
	CHECK_RC(lkc_inspect_resource(store, "res", 3, &seen, &err), LKC_OK, &err);
	CHECK(seen.mode == LKC_SEEN_FREE && seen.nowners == 0 && seen.waiters == 0);
	lkc_inspect_free(&seen);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_kid_start(&w, &waiter);
	for (int i = 0; i < 200; i++) {
		CHECK_RC(lkc_inspect_resource(store, "res", 3, &seen, &err), LKC_OK, &err);
		if (seen.waiters == 1) {
			break;
		}
		lkc_inspect_free(&seen);
		t_sleep_ms(10);
	}
	CHECK(seen.mode == LKC_SEEN_WRITE && seen.nowners == 1 && seen.owners[0].len == a.owner_len
		&& memcmp(seen.owners[0].s, a.owner, a.owner_len) == 0 && seen.ttl_ms > 0 && seen.ttl_ms <= 60000);
	CHECK(seen.waiters == 1 && seen.nqueue == 1);
	lkc_inspect_free(&seen);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_kid_served(&w));
	CHECK(t_kid_end(&w));
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_inspect_resource(store, "res", 3, &seen, &err), LKC_OK, &err);
	CHECK(seen.mode == LKC_SEEN_READ && seen.nowners == 2 && seen.ttl_ms == LKC_TTL_NONE);
	lkc_inspect_free(&seen);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	t_audit_end();
}

/*
 * The coverage guard: every script of redis_scripts.h ran in the cases above
 * (so it fails when run alone). Also prints, per script, the shapes of the
 * keys it touched undeclared, a digest of the cases' failures.
 */
static void every_script_ran(void)
{
	t_setup();
	for (size_t i = 0; i < audit.nscripts; i++) {
		char shapes[1024] = " ";

		CHECK(audit.scripts[i].runs > 0);
		if (audit.scripts[i].runs == 0) {
			fprintf(stderr, "key audit: script %s never ran: no case covers it\n", audit.scripts[i].name);
		}
		for (size_t j = 0; j < audit.nfindings; j++) {
			const ma_finding *f = &audit.findings[j];
			char word[160];

			snprintf(word, sizeof(word), " %s ", f->shape);
			if (strcmp(f->script, audit.scripts[i].name) == 0 && strcmp(f->what, "undeclared key") == 0
				&& strstr(shapes, word) == NULL && strlen(shapes) + strlen(word) + 1 < sizeof(shapes)) {
				strcat(shapes, word + 1);
			}
		}
		if (shapes[1] != '\0') {
			shapes[strlen(shapes) - 1] = '\0';
			fprintf(stderr, "key audit: summary: %s (%lu runs) touches undeclared:%s\n", audit.scripts[i].name,
				audit.scripts[i].runs, shapes);
		}
	}
}

TEST_MAIN(T(the_audit_finds_what_it_must), T(holds_without_waiters), T(waits_that_queue_time_out_and_are_interrupted), T(fair_hand_offs),
	T(unfair_hand_offs), T(promotion_and_demotion_with_waiters), T(shorter_refresh_and_cooldown_while_waiting),
	T(holds_handed_to_a_dead_waiter), T(wait_free_with_a_holder_that_releases), T(inspect_reads_declared_keys), T(every_script_ran))
