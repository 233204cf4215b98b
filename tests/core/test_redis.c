/* Unit tests of the Redis store against real redis-server processes started here. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"
#include "redis_server.h"

#include <sys/time.h>

/* The server most tests share; started on first use, stopped at exit. */
static t_redis shared;
static int shared_up;

/* Stops the shared server and frees the pooled connections before the leak check runs. */
static void t_shared_stop(void)
{
	lkc_redis_pool_shutdown();
	if (shared_up) {
		t_redis_stop(&shared);
		shared_up = 0;
	}
}

/* The shared server, started on first use. */
static t_redis *t_shared(void)
{
	if (!shared_up) {
		if (t_redis_start(&shared) != 0) {
			fprintf(stderr, "cannot start redis-server\n");
			exit(1);
		}
		shared_up = 1;
		atexit(t_shared_stop);
	}
	return &shared;
}

/* Seconds since start, for hang guards only. */
static double t_elapsed(uint64_t start)
{
	return (double) (lkc_now_ns() - start) / 1e9;
}

/* A config for r with a copy of prefix (plen bytes). */
static void t_config(lkc_redis_config *cfg, const t_redis *r, const char *prefix, size_t plen)
{
	lkc_redis_config_init(cfg);
	cfg->port = r->port;
	cfg->prefix = malloc(plen + 1);
	memcpy(cfg->prefix, prefix, plen);
	cfg->prefix[plen] = '\0';
	cfg->prefix_len = plen;
}

/* Opens a store on r with prefix, or fails the test. */
static lkc_store *t_open_ex(const t_redis *r, const char *prefix, int persistent, int database, int64_t timeout_ms)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	t_config(&cfg, r, prefix, strlen(prefix));
	cfg.persistent = persistent;
	cfg.database = database;
	cfg.timeout_ms = timeout_ms;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	return store;
}

static lkc_store *t_open(const t_redis *r, const char *prefix)
{
	return t_open_ex(r, prefix, 0, 0, 2000);
}

/* The lock key of a resource, as the store's documented layout builds it. */
static char *t_key(const char *prefix, size_t plen, const char *res, size_t rlen, size_t *klen)
{
	char *key = malloc(plen + rlen + 3);

	memcpy(key, prefix, plen);
	key[plen] = '{';
	memcpy(key + plen + 1, res, rlen);
	key[plen + 1 + rlen] = '}';
	*klen = plen + rlen + 2;
	return key;
}

/* A hold on a text resource. */
static void t_hold(lkc_hold *hold, const char *resource)
{
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_hold_init(hold, resource, strlen(resource), &err), LKC_OK, &err);
}

/* Whether anybody holds resource, per the store; -1 on error. */
static int t_locked(lkc_store *store, const char *resource, size_t len)
{
	lkc_err err;
	int locked = -1;

	lkc_err_clear(&err);
	if (store->ops->is_locked(store, resource, len, &locked, &err) != LKC_OK) {
		return -1;
	}
	return locked;
}

static void config_defaults_and_validation(void)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	lkc_redis_config_init(&cfg);
	CHECK(cfg.host != NULL && strcmp(cfg.host, "127.0.0.1") == 0);
	CHECK(cfg.port == 6379 && cfg.timeout_ms == 1000 && cfg.database == 0);
	CHECK(cfg.socket_path == NULL && cfg.username == NULL && cfg.password == NULL);
	CHECK(cfg.prefix == NULL && cfg.prefix_len == 0 && cfg.persistent == 0);
	CHECK(cfg.fair == 1);

	/* Open takes the strings: the caller's config is empty afterwards, whatever the outcome. */
	cfg.password = strdup("pw");
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(cfg.host == NULL && cfg.password == NULL);
	CHECK(strcmp(lkc_redis_endpoint(store), "127.0.0.1:6379") == 0);
	CHECK(strcmp(store->ops->name, "redis") == 0);
	CHECK(store->ops->caps == (LKC_CAP_EXPIRY | LKC_CAP_FENCING));
	store->ops->destroy(store);
	lkc_redis_config_free(&cfg);

	lkc_redis_config_init(&cfg);
	cfg.port = 0;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	CHECK(store == NULL && cfg.host == NULL);
	CHECK(strstr(err.msg, "Redis") != NULL && strstr(err.msg, "port") != NULL);
	lkc_redis_config_init(&cfg);
	cfg.port = 65536;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	lkc_redis_config_init(&cfg);
	cfg.database = -1;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	lkc_redis_config_init(&cfg);
	cfg.timeout_ms = 0;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);
	lkc_redis_config_init(&cfg);
	free(cfg.host);
	cfg.host = NULL;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_INVALID, &err);

	lkc_redis_config_init(&cfg);
	free(cfg.host);
	cfg.host = strdup("::1");
	cfg.port = 7000;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(strcmp(lkc_redis_endpoint(store), "[::1]:7000") == 0);
	store->ops->destroy(store);

	CHECK(strcmp(lkc_redis_hiredis_version(), "0.14.1") == 0);
}

static void acquire_conflict_and_release(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:conflict:");
	lkc_hold a, b;
	lkc_err err;
	size_t klen;
	char *key = t_key("t:conflict:", 11, "res", 3, &klen);

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK(a.fence == -1);
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 1);
	CHECK(t_redis_int(r, "PTTL %b", key, klen) > 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_BUSY, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);

	/* Shared holds arrive later: both the store and the lock layer refuse them for now. */
	CHECK_RC(store->ops->acquire(store, &a, LKC_MODE_SHARED, 1000, 0, &err), LKC_ERR_UNSUPPORTED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 1000, 0, &err), LKC_ERR_UNSUPPORTED, &err);

	/* Without a TTL the key never expires. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL %b", key, klen) == -1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 0);

	free(key);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void release_after_ttl_is_expired(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:expired:");
	lkc_hold a;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 50, 0, &err), LKC_OK, &err);
	t_sleep_ms(200);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	CHECK(strstr(err.msg, "Redis at 127.0.0.1:") == err.msg);
	CHECK(a.mode == LKC_MODE_NONE);

	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 50, 0, &err), LKC_OK, &err);
	t_sleep_ms(200);
	CHECK_RC(lkc_refresh(store, &a, 1000, &err), LKC_EXPIRED, &err);
	CHECK(a.mode == LKC_MODE_NONE);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void taken_after_expiry_is_lost(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:lost:");
	lkc_hold a, b;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 50, 0, &err), LKC_OK, &err);
	t_sleep_ms(200);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	CHECK_RC(lkc_refresh(store, &a, 10000, &err), LKC_LOST, &err);
	CHECK(a.mode == LKC_MODE_NONE);
	/* The lock layer no longer counts a as held, so ask the store itself for the release answer. */
	CHECK_RC(store->ops->release(store, &a, 0, &err), LKC_LOST, &err);
	CHECK(strstr(err.msg, "another owner") != NULL);
	/* Neither answer touched b's hold. */
	CHECK_RC(lkc_check(store, &b, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void refresh_extends_the_hold(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:refresh:");
	lkc_hold a, b;
	lkc_err err;
	size_t klen;
	char *key = t_key("t:refresh:", 10, "res", 3, &klen);

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 150, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, 5000, &err), LKC_OK, &err);
	t_sleep_ms(400);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_refresh(store, &a, LKC_TTL_NONE, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL %b", key, klen) == -1);
	CHECK_RC(lkc_refresh(store, &a, 100000, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL %b", key, klen) > 50000);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	free(key);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void delayed_release_keeps_it_blocked(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:delay:");
	lkc_hold a, b;
	lkc_err err;
	size_t klen;
	char *key = t_key("t:delay:", 8, "res", 3, &klen);
	long long pttl;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 100000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 300, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_NONE);
	pttl = t_redis_int(r, "PTTL %b", key, klen);
	CHECK(pttl > 0 && pttl <= 300);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 1000, 10000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	free(key);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void wait_acquires_after_release(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:wait-release:");
	int ready[2], status = -1;
	lkc_hold b;
	lkc_err err;
	uint64_t start;
	pid_t pid;
	char c;

	lkc_err_clear(&err);
	CHECK(pipe(ready) == 0);
	pid = fork();
	if (pid == 0) {
		/* The holder: its own store and hold, released after the parent started waiting. */
		lkc_store *own = t_open(r, "t:wait-release:");
		lkc_hold a;
		int code = 0;

		close(ready[0]);
		if (lkc_hold_init(&a, "res", 3, &err) != LKC_OK
			|| lkc_acquire(own, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err) != LKC_OK) {
			code = 1;
		}
		if (write(ready[1], "x", 1) != 1) {
			code = 2;
		}
		t_sleep_ms(300);
		if (lkc_release(own, &a, 0, &err) != LKC_OK) {
			code = 3;
		}
		lkc_hold_dispose(&a);
		own->ops->destroy(own);
		_exit(code);
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	t_hold(&b, "res");
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 60000, 20000, &err), LKC_OK, &err);
	CHECK(t_elapsed(start) < 15);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void wait_acquires_after_ttl(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:wait-ttl:");
	lkc_hold a, b;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 250, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 20000, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);

	/* A holder that keeps it longer than the wait: BUSY when the wait ends. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 150, &err), LKC_BUSY, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static volatile sig_atomic_t t_alarmed;
static int t_hook_answer;

static void t_on_alarm(int sig)
{
	(void) sig;
	t_alarmed = 1;
}

/* The host's verdict: interrupted once our alarm rang, if the test says so. */
static int t_hook(void)
{
	return t_alarmed && t_hook_answer;
}

/* Arms a one-shot SIGALRM in ms milliseconds, with a handler that does not restart calls. */
static void t_alarm_in(long ms)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	t_alarmed = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void wait_is_interrupted_by_the_host(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:interrupt:");
	lkc_hold a, b;
	lkc_err err;
	uint64_t start;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	lkc_set_interrupt_hook(t_hook);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);

	t_hook_answer = 1;
	t_alarm_in(100);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, LKC_WAIT_FOREVER, &err), LKC_INTERRUPTED, &err);
	CHECK(t_elapsed(start) < 15);
	CHECK(b.mode == LKC_MODE_NONE);
	/* The interrupted waiter left nothing behind: no queue entry, no deadline, no wake list. */
	CHECK(t_redis_int(r, "EXISTS t:interrupt:{res}:q t:interrupt:{res}:qd t:interrupt:{res}:w:%s", b.owner) == 0);

	/* A signal the host does not care about: the wait goes on to its end. */
	t_hook_answer = 0;
	t_alarm_in(50);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 400, &err), LKC_BUSY, &err);
	CHECK(t_alarmed);
	CHECK(t_redis_int(r, "EXISTS t:interrupt:{res}:q t:interrupt:{res}:qd t:interrupt:{res}:w:%s", b.owner) == 0);

	lkc_set_interrupt_hook(NULL);
	signal(SIGALRM, SIG_DFL);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

/* How many times the server ran a command, from INFO commandstats. */
static long long t_calls(t_redis *r, const char *command)
{
	redisReply *reply = t_redis_cmd(r, "INFO commandstats");
	char needle[64];
	long long calls = 0;
	const char *at;

	snprintf(needle, sizeof(needle), "cmdstat_%s:calls=", command);
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && (at = strstr(reply->str, needle)) != NULL) {
		calls = atoll(at + strlen(needle));
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return calls;
}

static void scripts_survive_a_flushed_cache(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:scripts:");
	lkc_hold a;
	lkc_err err;
	redisReply *reply;
	long long evals;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	reply = t_redis_cmd(r, "SCRIPT FLUSH");
	CHECK(reply != NULL && reply->type == REDIS_REPLY_STATUS);
	freeReplyObject(reply);
	CHECK_RC(lkc_refresh(store, &a, 10000, &err), LKC_OK, &err);
	reply = t_redis_cmd(r, "SCRIPT FLUSH");
	freeReplyObject(reply);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);

	/* Once loaded, scripts run by their SHA-1: a wrong digest would show as one EVAL per call. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, 10000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	evals = t_calls(r, "eval");
	CHECK(evals > 0);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_refresh(store, &a, 10000, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	}
	CHECK(t_calls(r, "eval") == evals);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void lost_key_reads_as_expired(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open_ex(r, "t:flushed:", 0, 5, 2000);
	lkc_hold a;
	lkc_err err;
	size_t klen;
	char *key = t_key("t:flushed:", 10, "res", 3, &klen);
	redisReply *reply;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	/* The store selected database 5: the key is there and not in 0. */
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 0);
	reply = t_redis_cmd(r, "SELECT 5");
	freeReplyObject(reply);
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 1);
	reply = t_redis_cmd(r, "FLUSHALL");
	CHECK(reply != NULL && reply->type == REDIS_REPLY_STATUS);
	freeReplyObject(reply);
	reply = t_redis_cmd(r, "SELECT 0");
	freeReplyObject(reply);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	free(key);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void force_release_breaks_the_holder(void)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, "t:force:");
	lkc_hold a, b;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	/* Breaking a free resource is no error. */
	CHECK_RC(store->ops->force_release(store, "free", 4, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void hostile_resources_stay_in_their_keys(void)
{
	t_redis *r = t_shared();
	static const char prefix[] = "t:hostile:\0{x}";
	const size_t plen = sizeof(prefix) - 1;
	char *big = malloc(LKC_RESOURCE_MAX), *ones = malloc(LKC_RESOURCE_MAX);
	struct { const char *bytes; size_t len; } res[] = {
		{ "\0", 1 }, { "a\0b", 3 }, { "a\0c", 3 }, { "}", 1 }, { "{", 1 }, { "{}", 2 },
		{ "}{", 2 }, { "*1\r\n$4\r\nPING\r\n", 14 }, { "\xff\xfe", 2 }, { big, LKC_RESOURCE_MAX },
		{ ones, LKC_RESOURCE_MAX },
	};
	const size_t n = sizeof(res) / sizeof(res[0]);
	lkc_hold holds[sizeof(res) / sizeof(res[0])], other;
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;
	long long before;

	lkc_err_clear(&err);
	for (size_t i = 0; i < LKC_RESOURCE_MAX; i++) {
		big[i] = (char) (i * 7 + 3);
		ones[i] = (char) 0xff;
	}
	t_config(&cfg, r, prefix, plen);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	before = t_redis_int(r, "DBSIZE");
	for (size_t i = 0; i < n; i++) {
		size_t klen;
		char *key = t_key(prefix, plen, res[i].bytes, res[i].len, &klen);

		CHECK_RC(lkc_hold_init(&holds[i], res[i].bytes, res[i].len, &err), LKC_OK, &err);
		CHECK(t_locked(store, res[i].bytes, res[i].len) == 0);
		CHECK_RC(lkc_acquire(store, &holds[i], LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
		CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 1);
		CHECK(t_locked(store, res[i].bytes, res[i].len) == 1);
		CHECK_RC(lkc_hold_init(&other, res[i].bytes, res[i].len, &err), LKC_OK, &err);
		CHECK_RC(lkc_acquire(store, &other, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
		lkc_hold_dispose(&other);
		free(key);
	}
	/* One key per resource, each where the layout puts it: "a\0b" and "a\0c" are distinct. */
	CHECK(t_redis_int(r, "DBSIZE") == before + (long long) n);
	for (size_t i = 0; i < n; i++) {
		CHECK_RC(lkc_check(store, &holds[i], &err), LKC_OK, &err);
		CHECK_RC(lkc_refresh(store, &holds[i], 60000, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &holds[i], 0, &err), LKC_OK, &err);
		CHECK(t_locked(store, res[i].bytes, res[i].len) == 0);
		lkc_hold_dispose(&holds[i]);
	}
	CHECK(t_redis_int(r, "DBSIZE") == before);
	CHECK_RC(store->ops->force_release(store, big, LKC_RESOURCE_MAX, &err), LKC_OK, &err);
	store->ops->destroy(store);
	free(big);
	free(ones);
}

/* A store that reaches the shared server through a fresh relay that faults its first connection. */
static lkc_store *t_open_faulty(t_proxy *p, t_proxy_mode mode, const char *prefix)
{
	t_redis via;

	memset(&via, 0, sizeof(via));
	CHECK(t_proxy_start(p, t_shared()->port, mode) == 0);
	via.port = p->port;
	return t_open(&via, prefix);
}

/* The owner token stored under key, or "" when none. */
static void t_owner_at(t_redis *r, const char *key, size_t klen, char out[LKC_TOKEN_LEN + 1])
{
	redisReply *reply = t_redis_cmd(r, "GET %b", key, klen);

	out[0] = '\0';
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == LKC_TOKEN_LEN) {
		memcpy(out, reply->str, LKC_TOKEN_LEN + 1);
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
}

static void lost_replies_are_reconciled(void)
{
	t_redis *r = t_shared();
	lkc_store *direct = t_open(r, "t:ambiguous:"), *via;
	char owner[LKC_TOKEN_LEN + 1];
	size_t klen;
	char *key = t_key("t:ambiguous:", 12, "res", 3, &klen);
	lkc_hold a, b;
	lkc_err err;
	t_proxy p;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	/* Loads both scripts, so that the faulted requests below really run on the server. */
	CHECK_RC(lkc_acquire(direct, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(direct, &a, 60000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(direct, &a, 0, &err), LKC_OK, &err);

	/* The SET ran but its answer was lost: the key names us, so the lock is ours. */
	via = t_open_faulty(&p, T_PROXY_DROP_REPLY, "t:ambiguous:");
	CHECK_RC(lkc_acquire(via, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_OK, &err);
	t_owner_at(r, key, klen, owner);
	CHECK(strcmp(owner, a.owner) == 0);
	via->ops->destroy(via);
	t_proxy_stop(&p);

	/* The refresh ran but its answer was lost: running it again is harmless. */
	via = t_open_faulty(&p, T_PROXY_DROP_REPLY, "t:ambiguous:");
	CHECK_RC(lkc_refresh(via, &a, 100000, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL %b", key, klen) > 50000);
	via->ops->destroy(via);
	t_proxy_stop(&p);

	/* The release ran but its answer was lost: the key is no longer ours, so it is released. */
	via = t_open_faulty(&p, T_PROXY_DROP_REPLY, "t:ambiguous:");
	CHECK_RC(lkc_release(via, &a, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 0);
	via->ops->destroy(via);
	t_proxy_stop(&p);

	/* The SET never arrived: nobody holds the key, so it is sent again. */
	via = t_open_faulty(&p, T_PROXY_DROP_REQUEST, "t:ambiguous:");
	CHECK_RC(lkc_acquire(via, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_owner_at(r, key, klen, owner);
	CHECK(strcmp(owner, a.owner) == 0);
	via->ops->destroy(via);
	t_proxy_stop(&p);

	/* The release never arrived: the key is still ours, so it is sent again. */
	via = t_open_faulty(&p, T_PROXY_DROP_REQUEST, "t:ambiguous:");
	CHECK_RC(lkc_release(via, &a, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 0);
	via->ops->destroy(via);
	t_proxy_stop(&p);

	/* The SET never arrived and somebody else holds the key: busy, not an error. */
	CHECK_RC(lkc_acquire(direct, &b, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	via = t_open_faulty(&p, T_PROXY_DROP_REQUEST, "t:ambiguous:");
	CHECK_RC(lkc_acquire(via, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	via->ops->destroy(via);
	t_proxy_stop(&p);
	t_owner_at(r, key, klen, owner);
	CHECK(strcmp(owner, b.owner) == 0);
	CHECK_RC(lkc_release(direct, &b, 0, &err), LKC_OK, &err);

	free(key);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	direct->ops->destroy(direct);
}

static void dead_server_is_an_io_error(void)
{
	t_redis r;
	lkc_store *store, *fresh;
	lkc_hold a;
	lkc_err err;
	char where[64];
	uint64_t start;

	lkc_err_clear(&err);
	CHECK(t_redis_start(&r) == 0);
	snprintf(where, sizeof(where), "Redis at 127.0.0.1:%d: ", r.port);
	store = t_open_ex(&r, "t:dead:", 0, 0, 1000);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_redis_kill(&r, SIGKILL);

	start = lkc_now_ns();
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_ERR_IO, &err);
	CHECK(t_elapsed(start) < 10);
	CHECK(strstr(err.msg, where) == err.msg);
	/* The backend could not say, so the hold still counts as ours. */
	CHECK(a.mode == LKC_MODE_EXCLUSIVE);
	CHECK_RC(lkc_check(store, &a, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "connection refused") != NULL);

	fresh = t_open_ex(&r, "t:dead:", 0, 0, 1000);
	start = lkc_now_ns();
	CHECK(t_locked(fresh, "res", 3) == -1);
	CHECK_RC(fresh->ops->force_release(fresh, "res", 3, &err), LKC_ERR_IO, &err);
	CHECK(t_elapsed(start) < 10);
	CHECK(strstr(err.msg, where) == err.msg);
	CHECK(strstr(err.msg, "connection refused") != NULL);
	fresh->ops->destroy(fresh);

	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	t_redis_stop(&r);
}

static void restarted_server_is_reconnected(void)
{
	t_redis r;
	lkc_store *store, *pooled;
	lkc_hold a;
	lkc_err err;

	lkc_err_clear(&err);
	CHECK(t_redis_start(&r) == 0);
	store = t_open_ex(&r, "t:restart:", 0, 0, 2000);
	pooled = t_open_ex(&r, "t:restart:", 1, 0, 2000);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(t_locked(pooled, "res", 3) == 1);
	/* Parks a persistent connection in the pool, to go stale with the restart. */
	pooled->ops->destroy(pooled);

	t_redis_kill(&r, SIGTERM);
	CHECK(t_redis_restart(&r) == 0);

	/* The restart lost the key: the store's stale connection is replaced and the answer is honest. */
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);

	/* The pooled connection is dead too: a new persistent store replaces it without a word. */
	pooled = t_open_ex(&r, "t:restart:", 1, 0, 2000);
	CHECK(t_locked(pooled, "res", 3) == 1);
	pooled->ops->destroy(pooled);

	t_redis_kill(&r, SIGTERM);
	CHECK(t_redis_restart(&r) == 0);
	/* The server hung up on the idle connection: release reconnects before sending and tells the truth. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);
	t_redis_kill(&r, SIGTERM);
	CHECK(t_redis_restart(&r) == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	lkc_redis_pool_shutdown();
	t_redis_stop(&r);
}

static void stopped_server_times_out(void)
{
	t_redis r;
	lkc_store *store, *fresh;
	lkc_hold a, b;
	lkc_err err;
	uint64_t start;
	char where[64];

	lkc_err_clear(&err);
	CHECK(t_redis_start(&r) == 0);
	snprintf(where, sizeof(where), "Redis at 127.0.0.1:%d: ", r.port);
	store = t_open_ex(&r, "t:stopped:", 0, 0, 300);
	t_hold(&a, "res");
	t_hold(&b, "other");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(kill(r.pid, SIGSTOP) == 0);

	start = lkc_now_ns();
	CHECK_RC(lkc_refresh(store, &a, 60000, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, where) == err.msg && strstr(err.msg, "timed out") != NULL);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_ERR_IO, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 1000, 500, &err), LKC_ERR_IO, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_ERR_IO, &err);
	fresh = t_open_ex(&r, "t:stopped:", 0, 0, 300);
	CHECK(t_locked(fresh, "res", 3) == -1);
	fresh->ops->destroy(fresh);
	CHECK(t_elapsed(start) < 20);

	CHECK(kill(r.pid, SIGCONT) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	t_redis_stop(&r);
}

static void password_is_checked_and_never_shown(void)
{
	static const char good[] = "s3cret-Pa55word";
	static const char bad[] = "wr0ng-Pa55word";
	t_redis r;
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_hold a;
	lkc_err err;

	lkc_err_clear(&err);
	r.dir[0] = '\0';
	CHECK(t_redis_start_opts(&r, 0, 0, good) == 0);
	t_hold(&a, "res");

	t_config(&cfg, &r, "t:auth:", 7);
	cfg.password = strdup(bad);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_ERR_REFUSED, &err);
	CHECK(strstr(err.msg, "Redis at 127.0.0.1:") == err.msg);
	CHECK(strstr(err.msg, bad) == NULL && strstr(err.msg, good) == NULL);
	CHECK(strstr(err.msg, "WRONGPASS") != NULL);
	store->ops->destroy(store);

	t_config(&cfg, &r, "t:auth:", 7);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_ERR_REFUSED, &err);
	CHECK(strstr(err.msg, "NOAUTH") != NULL);
	store->ops->destroy(store);

	t_config(&cfg, &r, "t:auth:", 7);
	cfg.username = strdup("default");
	cfg.password = strdup(bad);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_ERR_REFUSED, &err);
	CHECK(strstr(err.msg, bad) == NULL);
	store->ops->destroy(store);

	t_config(&cfg, &r, "t:auth:", 7);
	cfg.password = strdup(good);
	cfg.database = 3;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	store->ops->destroy(store);

	t_config(&cfg, &r, "t:auth:", 7);
	cfg.username = strdup("default");
	cfg.password = strdup(good);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	store->ops->destroy(store);

	lkc_hold_dispose(&a);
	t_redis_stop(&r);
}

static void unix_socket_connects(void)
{
	t_redis r;
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_hold a, b;
	lkc_err err;
	char missing[200];

	lkc_err_clear(&err);
	r.dir[0] = '\0';
	CHECK(t_redis_start_opts(&r, 0, 1, NULL) == 0);
	t_hold(&a, "res");
	t_hold(&b, "res");

	t_config(&cfg, &r, "t:unix:", 7);
	free(cfg.host);
	cfg.host = NULL;
	cfg.port = 0;
	cfg.socket_path = strdup(r.sock);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK(strcmp(lkc_redis_endpoint(store), r.sock) == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK(t_redis_int(&r, "EXISTS %s", "t:unix:{res}") == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	store->ops->destroy(store);

	snprintf(missing, sizeof(missing), "%s/nope.sock", r.dir);
	t_config(&cfg, &r, "t:unix:", 7);
	cfg.socket_path = strdup(missing);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_ERR_IO, &err);
	CHECK(strncmp(err.msg, "Redis at ", 9) == 0 && strstr(err.msg, missing) != NULL);
	store->ops->destroy(store);

	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	t_redis_stop(&r);
}

/* The ids of the server's clients whose last command was cmd (and, when db >= 0, in database db). */
static int t_client_ids(t_redis *r, const char *cmd, int db, long long *ids, int max)
{
	redisReply *reply = t_redis_cmd(r, "CLIENT LIST");
	char want_cmd[64], want_db[32];
	int n = 0;

	snprintf(want_cmd, sizeof(want_cmd), " cmd=%s ", cmd);
	snprintf(want_db, sizeof(want_db), " db=%d ", db);
	if (reply == NULL || reply->type != REDIS_REPLY_STRING) {
		if (reply != NULL) {
			freeReplyObject(reply);
		}
		return -1;
	}
	for (char *line = reply->str; line != NULL && *line != '\0'; ) {
		char *end = strchr(line, '\n');

		if (end != NULL) {
			*end = '\0';
		}
		if (strstr(line, want_cmd) != NULL && (db < 0 || strstr(line, want_db) != NULL) && n < max) {
			ids[n++] = atoll(line + 3);
		}
		line = end != NULL ? end + 1 : NULL;
	}
	freeReplyObject(reply);
	return n;
}

/* Polls CLIENT LIST until want clients show cmd (closes reach the server a little later); returns the last count. */
static int t_wait_clients(t_redis *r, const char *cmd, int want, long long *ids, int max)
{
	int n = -1;

	for (int i = 0; i < 100; i++) {
		n = t_client_ids(r, cmd, -1, ids, max);
		if (n == want) {
			break;
		}
		t_sleep_ms(20);
	}
	return n;
}

static void persistent_connections_are_reused(void)
{
	t_redis r;
	lkc_store *first, *second, *other_db;
	long long ids[8], id;

	CHECK(t_redis_start(&r) == 0);
	first = t_open_ex(&r, "t:pool:", 1, 0, 2000);
	CHECK(t_locked(first, "res", 3) == 0);
	CHECK(t_client_ids(&r, "exists", 0, ids, 8) == 1);
	id = ids[0];
	first->ops->destroy(first);

	second = t_open_ex(&r, "t:pool:", 1, 0, 2000);
	CHECK(t_locked(second, "res", 3) == 0);
	CHECK(t_client_ids(&r, "exists", -1, ids, 8) == 1);
	CHECK(ids[0] == id);

	/* Another database is another connection, even while the first one is idle in the pool. */
	second->ops->destroy(second);
	other_db = t_open_ex(&r, "t:pool:", 1, 1, 2000);
	CHECK(t_locked(other_db, "res", 3) == 0);
	CHECK(t_client_ids(&r, "exists", 1, ids, 8) == 1);
	CHECK(ids[0] != id);
	other_db->ops->destroy(other_db);

	/* Shutting the pool down closes them all. */
	lkc_redis_pool_shutdown();
	CHECK(t_wait_clients(&r, "exists", 0, ids, 8) == 0);
	t_redis_stop(&r);
}

static void forked_child_gets_its_own_connection(void)
{
	t_redis r;
	lkc_store *store;
	long long ids[8], parent_id;
	int to_parent[2], to_child[2], status = -1;
	lkc_hold a;
	lkc_err err;
	pid_t pid;
	char c;

	lkc_err_clear(&err);
	CHECK(t_redis_start(&r) == 0);
	store = t_open_ex(&r, "t:fork:", 1, 0, 2000);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK(t_client_ids(&r, "exists", -1, ids, 8) == 1);
	parent_id = ids[0];

	CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0);
	pid = fork();
	if (pid == 0) {
		int code = 0;

		close(to_parent[0]);
		close(to_child[1]);
		/* The inherited store must not talk on the parent's socket. */
		if (t_locked(store, "res", 3) != 1) {
			code = 1;
		}
		/* The inherited hold is the parent's: the child can neither release nor refresh it. */
		if (lkc_release(store, &a, 0, &err) != LKC_ERR_STATE) {
			code = 2;
		}
		lkc_abandon(store, &a);
		if (write(to_parent[1], "x", 1) != 1 || read(to_child[0], &c, 1) != 1) {
			code = 3;
		}
		/* A persistent store of the child parks its connection in the child's own pool. */
		store->ops->destroy(store);
		lkc_redis_pool_shutdown();
		lkc_hold_dispose(&a);
		_exit(code);
	}
	close(to_parent[1]);
	close(to_child[0]);
	CHECK(read(to_parent[0], &c, 1) == 1);
	CHECK(t_client_ids(&r, "exists", -1, ids, 8) == 2);
	CHECK(ids[0] != ids[1] && (ids[0] == parent_id || ids[1] == parent_id));
	CHECK(write(to_child[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(to_parent[0]);
	close(to_child[1]);

	/* The parent's connection is untouched and still in step. */
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK(t_wait_clients(&r, "exists", 1, ids, 8) == 1 && ids[0] == parent_id);

	/* A pooled connection of the parent is not taken by a store of the child. */
	store->ops->destroy(store);
	CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0);
	pid = fork();
	if (pid == 0) {
		lkc_store *own = t_open_ex(&r, "t:fork:", 1, 0, 2000);
		int code = t_locked(own, "res", 3) == 0 ? 0 : 1;

		close(to_parent[0]);
		close(to_child[1]);
		if (write(to_parent[1], "x", 1) != 1 || read(to_child[0], &c, 1) != 1) {
			code = 3;
		}
		own->ops->destroy(own);
		lkc_redis_pool_shutdown();
		_exit(code);
	}
	close(to_parent[1]);
	close(to_child[0]);
	CHECK(read(to_parent[0], &c, 1) == 1);
	CHECK(t_client_ids(&r, "exists", -1, ids, 8) == 2);
	CHECK(write(to_child[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(to_parent[0]);
	close(to_child[1]);

	store = t_open_ex(&r, "t:fork:", 1, 0, 2000);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK(t_wait_clients(&r, "exists", 1, ids, 8) == 1 && ids[0] == parent_id);
	store->ops->destroy(store);
	lkc_redis_pool_shutdown();
	lkc_hold_dispose(&a);
	t_redis_stop(&r);
}

static void refused_connection_names_the_endpoint(void)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_hold a;
	lkc_err err;
	char where[64];
	int port = t_free_port();

	lkc_err_clear(&err);
	lkc_redis_config_init(&cfg);
	cfg.port = port;
	cfg.password = strdup("hunter2-password");
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 0, &err), LKC_ERR_IO, &err);
	snprintf(where, sizeof(where), "Redis at 127.0.0.1:%d: ", port);
	CHECK(strstr(err.msg, where) == err.msg);
	CHECK(strstr(err.msg, "connection refused") != NULL);
	CHECK(strstr(err.msg, "hunter2") == NULL);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

/* A store on the shared server with prefix, fair or not. */
static lkc_store *t_open_fair(t_redis *r, const char *prefix, int fair)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	t_config(&cfg, r, prefix, strlen(prefix));
	cfg.fair = fair;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	return store;
}

/* What a contending child does with the resource "res" under prefix. */
typedef struct {
	const char *prefix;
	int fair;
	int64_t ttl_ms;
	int64_t wait_ms;
	int index;               /* pushed to PREFIX"order" once acquired */
	int gated;               /* once acquired, takes an element of PREFIX"go" before releasing */
} t_waiter;

/*
 * Forks a child that acquires as w says, then releases. Its exit code tells
 * the outcome: 0 acquired and released, 10 busy, 11 interrupted, 12 another
 * error, 13 no go within 30 s, 14 the release failed.
 */
static pid_t t_spawn(t_redis *r, const t_waiter *w)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	redisContext *c;
	redisReply *reply;
	lkc_hold hold;
	lkc_err err;
	lkc_rc rc;
	int code = 0;
	pid_t pid = fork();

	if (pid != 0) {
		return pid;
	}
	/* The child talks on connections of its own, answers no test's hook, and never returns into the harness. */
	lkc_set_interrupt_hook(NULL);
	t_config(&cfg, r, w->prefix, strlen(w->prefix));
	cfg.fair = w->fair;
	c = redisConnect("127.0.0.1", r->port);
	if (lkc_redis_open(&store, &cfg, &err) != LKC_OK || c == NULL || c->err != 0
		|| lkc_hold_init(&hold, "res", 3, &err) != LKC_OK) {
		_exit(12);
	}
	rc = lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, w->ttl_ms, w->wait_ms, &err);
	if (rc != LKC_OK) {
		_exit(rc == LKC_BUSY ? 10 : rc == LKC_INTERRUPTED ? 11 : 12);
	}
	reply = redisCommand(c, "RPUSH %sorder %d", w->prefix, w->index);
	freeReplyObject(reply);
	if (w->gated) {
		reply = redisCommand(c, "BLPOP %sgo 30", w->prefix);
		if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
			code = 13;
		}
		freeReplyObject(reply);
	}
	if (lkc_release(store, &hold, 0, &err) != LKC_OK) {
		code = 14;
	}
	_exit(code);
}

/* Waits for a child at most guard_s seconds (then kills it): its exit code, -1 killed by a signal, -2 hung. */
static int t_reap(pid_t pid, int guard_s)
{
	uint64_t start = lkc_now_ns();
	int status;

	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		if (t_elapsed(start) > guard_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "child %d hung\n", (int) pid);
			return -2;
		}
		t_sleep_ms(5);
	}
}

/* Polls until the list key holds want elements; 0 when it did not within 10 s. */
static int t_wait_llen(t_redis *r, const char *key, long long want)
{
	for (int i = 0; i < 2000; i++) {
		if (t_redis_int(r, "LLEN %s", key) == want) {
			return 1;
		}
		t_sleep_ms(5);
	}
	return 0;
}

/* Polls until want clients are blocked in BLPOP; 0 when they were not within 10 s. */
static int t_wait_blocked(t_redis *r, int want)
{
	for (int i = 0; i < 2000; i++) {
		redisReply *reply = t_redis_cmd(r, "CLIENT LIST");
		int n = 0;

		if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
			for (const char *at = reply->str; (at = strstr(at, " flags=b ")) != NULL; at++) {
				n++;
			}
		}
		freeReplyObject(reply);
		if (n == want) {
			return 1;
		}
		t_sleep_ms(5);
	}
	return 0;
}

/* The element at index of a list of owner tokens, or "" when none. */
static void t_token_at(t_redis *r, const char *key, int index, char out[LKC_TOKEN_LEN + 1])
{
	redisReply *reply = t_redis_cmd(r, "LINDEX %s %d", key, index);

	out[0] = '\0';
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == LKC_TOKEN_LEN) {
		memcpy(out, reply->str, LKC_TOKEN_LEN + 1);
	}
	freeReplyObject(reply);
}

/* The order list PREFIX"order" as digits ("021"), deleted afterwards. */
static void t_take_order(t_redis *r, const char *prefix, char *out, size_t size)
{
	redisReply *reply = t_redis_cmd(r, "LRANGE %sorder 0 -1", prefix);
	size_t n = 0;

	if (reply != NULL && reply->type == REDIS_REPLY_ARRAY) {
		for (size_t i = 0; i < reply->elements && n + 1 < size; i++) {
			out[n++] = reply->element[i]->str[0];
		}
	}
	out[n] = '\0';
	freeReplyObject(reply);
	freeReplyObject(t_redis_cmd(r, "DEL %sorder %sgo", prefix, prefix));
}

/* How many keys match pattern. */
static long long t_count_keys(t_redis *r, const char *pattern)
{
	redisReply *reply = t_redis_cmd(r, "KEYS %s", pattern);
	long long n = reply != NULL && reply->type == REDIS_REPLY_ARRAY ? (long long) reply->elements : -1;

	freeReplyObject(reply);
	return n;
}

/* Whether the waiting of resource "res" under prefix left nothing behind: no queue, deadlines or wake lists. */
static int t_queue_clean(t_redis *r, const char *prefix)
{
	char pattern[128];

	snprintf(pattern, sizeof(pattern), "%s{res}:w:*", prefix);
	return t_redis_int(r, "EXISTS %s{res}:q %s{res}:qd", prefix, prefix) == 0 && t_count_keys(r, pattern) == 0;
}

static void waiters_are_served_in_arrival_order(void)
{
	static const char P[] = "t:fifo:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char head[LKC_TOKEN_LEN + 1], owner[LKC_TOKEN_LEN + 1], order[16];
	lkc_hold a, n;
	lkc_err err;
	pid_t pids[6];

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&n, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	/* Each child starts only once the one before it shows in the queue, so the queue order is known. */
	for (int k = 0; k < 5; k++) {
		t_waiter w = { P, 1, 60000, 30000, k, 1 };

		pids[k] = t_spawn(r, &w);
		CHECK(t_wait_llen(r, "t:fifo:{res}:q", k + 1));
	}
	t_token_at(r, "t:fifo:{res}:q", 0, head);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	/* The release itself handed the lock to the first waiter, so a newcomer's single attempt fails. */
	t_owner_at(r, "t:fifo:{res}", 12, owner);
	CHECK(head[0] != '\0' && strcmp(owner, head) == 0);
	CHECK_RC(lkc_acquire(store, &n, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);

	/* A newcomer that waits queues behind those already waiting. */
	{
		t_waiter w = { P, 1, 60000, 30000, 5, 1 };

		pids[5] = t_spawn(r, &w);
		CHECK(t_wait_llen(r, "t:fifo:{res}:q", 5));
	}
	freeReplyObject(t_redis_cmd(r, "RPUSH t:fifo:go 1 1 1 1 1 1"));
	for (int k = 0; k < 6; k++) {
		CHECK(t_reap(pids[k], 60) == 0);
	}
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "012345") == 0);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&n);
	store->ops->destroy(store);
}

static void killed_waiters_do_not_stall_the_queue(void)
{
	static const char P[] = "t:killed:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	lkc_hold a;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	/* The victim is killed in the middle of the queue, then at its head. */
	for (int victim = 1; victim >= 0; victim--) {
		char order[16], want[3];
		pid_t pids[3];
		uint64_t start;
		int w = 0;

		CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
		for (int k = 0; k < 3; k++) {
			t_waiter wt = { P, 1, 60000, 30000, k, 1 };

			pids[k] = t_spawn(r, &wt);
			CHECK(t_wait_llen(r, "t:killed:{res}:q", k + 1));
		}
		CHECK(t_wait_blocked(r, 3));
		kill(pids[victim], SIGKILL);
		CHECK(t_reap(pids[victim], 10) == -1);
		start = lkc_now_ns();
		CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
		freeReplyObject(t_redis_cmd(r, "RPUSH t:killed:go 1 1"));
		for (int k = 0; k < 3; k++) {
			if (k != victim) {
				CHECK(t_reap(pids[k], 30) == 0);
				want[w++] = (char) ('0' + k);
			}
		}
		want[w] = '\0';
		/* A hang guard, far above the documented cost of a dead waiter. */
		CHECK(t_elapsed(start) < 20);
		t_take_order(r, P, order, sizeof(order));
		CHECK(strcmp(order, want) == 0);
		CHECK(t_queue_clean(r, P));
		CHECK(t_locked(store, "res", 3) == 0);
	}
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void dead_holder_is_taken_over_after_its_ttl(void)
{
	static const char P[] = "t:deadholder:";
	t_redis *r = t_shared();
	t_waiter w = { P, 1, 60000, 30000, 0, 0 };
	int ready[2];
	pid_t holder, waiter;
	char c, order[16];

	CHECK(pipe(ready) == 0);
	holder = fork();
	if (holder == 0) {
		lkc_redis_config cfg;
		lkc_store *own = NULL;
		lkc_hold h;
		lkc_err err;

		close(ready[0]);
		t_config(&cfg, r, P, strlen(P));
		if (lkc_redis_open(&own, &cfg, &err) != LKC_OK || lkc_hold_init(&h, "res", 3, &err) != LKC_OK
			|| lkc_acquire(own, &h, LKC_MODE_EXCLUSIVE, 300, 0, &err) != LKC_OK
			|| write(ready[1], "x", 1) != 1) {
			_exit(1);
		}
		for (;;) {
			pause();
		}
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	waiter = t_spawn(r, &w);
	CHECK(t_wait_llen(r, "t:deadholder:{res}:q", 1));
	kill(holder, SIGKILL);
	CHECK(t_reap(holder, 10) == -1);
	CHECK(t_reap(waiter, 30) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, P));
}

static void timed_out_waiter_leaves_nothing(void)
{
	static const char P[] = "t:gaveup:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P), *other = t_open(r, P);
	t_waiter w = { P, 1, 60000, 30000, 0, 1 };
	char first[LKC_TOKEN_LEN + 1], order[16];
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn(r, &w);
	CHECK(t_wait_llen(r, "t:gaveup:{res}:q", 1));
	t_token_at(r, "t:gaveup:{res}:q", 0, first);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_EXCLUSIVE, 60000, 300, &err), LKC_BUSY, &err);
	/* Only the other waiter is left: our entry, deadline and wake list are gone. */
	CHECK(t_redis_int(r, "LLEN t:gaveup:{res}:q") == 1);
	t_token_at(r, "t:gaveup:{res}:q", 0, first);
	CHECK(strcmp(first, b.owner) != 0);
	CHECK(t_redis_int(r, "HLEN t:gaveup:{res}:qd") == 1);
	CHECK(t_redis_int(r, "HEXISTS t:gaveup:{res}:qd %s", b.owner) == 0);
	CHECK(t_redis_int(r, "EXISTS t:gaveup:{res}:w:%s", b.owner) == 0);

	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:gaveup:go 1"));
	CHECK(t_reap(pid, 30) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, P));
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	other->ops->destroy(other);
}

/* State of the hook below: the holder to release, and the waiter it starts. */
static t_redis *t_handon_r;
static lkc_store *t_handon_store;
static lkc_hold *t_handon_hold;
static pid_t t_handon_child;

/*
 * Interrupts once the alarm rang; before that first answer it queues a
 * second waiter and releases the holder, so the lock has been handed to the
 * interrupted waiter when its wait ends.
 */
static int t_hook_after_handoff(void)
{
	if (!t_alarmed) {
		return 0;
	}
	if (t_handon_child == 0) {
		t_waiter w = { "t:handon:", 1, 60000, 30000, 0, 0 };
		lkc_err err;

		t_handon_child = t_spawn(t_handon_r, &w);
		CHECK(t_wait_llen(t_handon_r, "t:handon:{res}:q", 2));
		CHECK_RC(lkc_release(t_handon_store, t_handon_hold, 0, &err), LKC_OK, &err);
	}
	return 1;
}

static void interrupted_waiter_hands_on_what_it_was_handed(void)
{
	static const char P[] = "t:handon:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P), *other = t_open(r, P);
	char order[16];
	lkc_hold a, b;
	lkc_err err;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	t_handon_r = r;
	t_handon_store = store;
	t_handon_hold = &a;
	t_handon_child = 0;
	lkc_set_interrupt_hook(t_hook_after_handoff);
	t_alarm_in(100);
	CHECK_RC(lkc_acquire(other, &b, LKC_MODE_EXCLUSIVE, 60000, 30000, &err), LKC_INTERRUPTED, &err);
	lkc_set_interrupt_hook(NULL);
	signal(SIGALRM, SIG_DFL);
	CHECK(b.mode == LKC_MODE_NONE);
	/* The hand-off to b was passed on to the next waiter, which got the lock. */
	CHECK(t_handon_child > 0 && t_reap(t_handon_child, 30) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	other->ops->destroy(other);
}

/* Eight processes take turns; a counter updated under the lock by read-then-write loses nothing. */
static void t_exclusion(const char *prefix, int fair)
{
	enum { PROCS = 8, ROUNDS = 20 };
	t_redis *r = t_shared();
	pid_t pids[PROCS];
	uint64_t start = lkc_now_ns();

	freeReplyObject(t_redis_cmd(r, "DEL %scount %sinside", prefix, prefix));
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			lkc_redis_config cfg;
			lkc_store *own = NULL;
			redisContext *c = redisConnect("127.0.0.1", r->port);
			lkc_hold h;
			lkc_err err;
			int code = 0;

			t_config(&cfg, r, prefix, strlen(prefix));
			cfg.fair = fair;
			if (c == NULL || c->err != 0 || lkc_redis_open(&own, &cfg, &err) != LKC_OK
				|| lkc_hold_init(&h, "res", 3, &err) != LKC_OK) {
				_exit(1);
			}
			for (int k = 0; k < ROUNDS && code == 0; k++) {
				redisReply *reply;
				long long n;

				if (lkc_acquire(own, &h, LKC_MODE_EXCLUSIVE, 30000, 30000, &err) != LKC_OK) {
					code = 2;
					break;
				}
				reply = redisCommand(c, "INCR %sinside", prefix);
				if (reply == NULL || reply->integer != 1) {
					code = 3;
				}
				freeReplyObject(reply);
				reply = redisCommand(c, "GET %scount", prefix);
				n = reply != NULL && reply->type == REDIS_REPLY_STRING ? atoll(reply->str) : 0;
				freeReplyObject(reply);
				t_sleep_ms(1);
				freeReplyObject(redisCommand(c, "SET %scount %lld", prefix, n + 1));
				freeReplyObject(redisCommand(c, "DECR %sinside", prefix));
				if (lkc_release(own, &h, 0, &err) != LKC_OK) {
					code = 4;
				}
			}
			_exit(code);
		}
	}
	for (int i = 0; i < PROCS; i++) {
		CHECK(t_reap(pids[i], 120) == 0);
	}
	CHECK(t_elapsed(start) < 100);
	CHECK(t_redis_int(r, "INCRBY %scount 0", prefix) == PROCS * ROUNDS);
	CHECK(t_queue_clean(r, prefix));
	freeReplyObject(t_redis_cmd(r, "DEL %scount %sinside", prefix, prefix));
}

static void eight_processes_exclude_each_other(void)
{
	t_exclusion("t:mutex:", 1);
	t_exclusion("t:mutex-unfair:", 0);
}

/* Releases while the only waiter is stopped in its sleep, and shows who then has the lock. */
static void t_release_past_a_stopped_waiter(const char *prefix, int fair)
{
	t_redis *r = t_shared();
	lkc_store *store = t_open_fair(r, prefix, fair);
	t_waiter w = { prefix, fair, 60000, 30000, 0, 0 };
	char queue[96], lock[96], token[LKC_TOKEN_LEN + 1], owner[LKC_TOKEN_LEN + 1], order[16];
	lkc_hold a, n;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	snprintf(queue, sizeof(queue), "%s{res}:q", prefix);
	snprintf(lock, sizeof(lock), "%s{res}", prefix);
	t_hold(&a, "res");
	t_hold(&n, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn(r, &w);
	CHECK(t_wait_llen(r, queue, 1));
	CHECK(t_wait_blocked(r, 1));
	t_token_at(r, queue, 0, token);
	kill(pid, SIGSTOP);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	t_owner_at(r, lock, strlen(lock), owner);
	if (fair) {
		/* Handed over: the stopped waiter owns it already, and a newcomer cannot slip in. */
		CHECK(strcmp(owner, token) == 0);
		CHECK_RC(lkc_acquire(store, &n, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
		kill(pid, SIGCONT);
	} else {
		/* Only deleted and the waiter woken: a newcomer may take it first, the waiter stays queued. */
		CHECK(owner[0] == '\0');
		CHECK_RC(lkc_acquire(store, &n, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
		kill(pid, SIGCONT);
		CHECK_RC(lkc_release(store, &n, 0, &err), LKC_OK, &err);
	}
	CHECK(t_reap(pid, 30) == 0);
	t_take_order(r, prefix, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, prefix));
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&n);
	store->ops->destroy(store);
}

static void release_hands_over_unless_unfair(void)
{
	t_release_past_a_stopped_waiter("t:handover:", 1);
	t_release_past_a_stopped_waiter("t:handover-unfair:", 0);
}

static void delayed_release_then_waiter_takes_over(void)
{
	static const char P[] = "t:cooldown:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	t_waiter w = { P, 1, 60000, 30000, 0, 0 };
	char owner[LKC_TOKEN_LEN + 1], order[16];
	long long pttl;
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn(r, &w);
	CHECK(t_wait_llen(r, "t:cooldown:{res}:q", 1));
	CHECK_RC(lkc_release(store, &a, 300, &err), LKC_OK, &err);
	/* The cooldown keeps our token in place: nothing is handed over before it ends. */
	t_owner_at(r, "t:cooldown:{res}", 16, owner);
	pttl = t_redis_int(r, "PTTL t:cooldown:{res}");
	CHECK(strcmp(owner, a.owner) == 0 && pttl > 0 && pttl <= 300);
	CHECK(t_reap(pid, 30) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, P));
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void force_release_hands_over_to_a_waiter(void)
{
	static const char P[] = "t:forceq:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	t_waiter w = { P, 1, 60000, 30000, 0, 0 };
	char token[LKC_TOKEN_LEN + 1], owner[LKC_TOKEN_LEN + 1], order[16];
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn(r, &w);
	CHECK(t_wait_llen(r, "t:forceq:{res}:q", 1));
	CHECK(t_wait_blocked(r, 1));
	t_token_at(r, "t:forceq:{res}:q", 0, token);
	kill(pid, SIGSTOP);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	t_owner_at(r, "t:forceq:{res}", 14, owner);
	CHECK(strcmp(owner, token) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	kill(pid, SIGCONT);
	CHECK(t_reap(pid, 30) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "0") == 0);
	CHECK(t_queue_clean(r, P));
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

TEST_MAIN(T(config_defaults_and_validation), T(acquire_conflict_and_release),
	T(release_after_ttl_is_expired), T(taken_after_expiry_is_lost), T(refresh_extends_the_hold),
	T(delayed_release_keeps_it_blocked), T(wait_acquires_after_release), T(wait_acquires_after_ttl),
	T(wait_is_interrupted_by_the_host), T(scripts_survive_a_flushed_cache), T(lost_key_reads_as_expired),
	T(force_release_breaks_the_holder), T(lost_replies_are_reconciled), T(hostile_resources_stay_in_their_keys),
	T(dead_server_is_an_io_error), T(restarted_server_is_reconnected), T(stopped_server_times_out),
	T(password_is_checked_and_never_shown), T(unix_socket_connects),
	T(persistent_connections_are_reused), T(forked_child_gets_its_own_connection),
	T(refused_connection_names_the_endpoint), T(waiters_are_served_in_arrival_order),
	T(killed_waiters_do_not_stall_the_queue), T(dead_holder_is_taken_over_after_its_ttl),
	T(timed_out_waiter_leaves_nothing), T(interrupted_waiter_hands_on_what_it_was_handed),
	T(eight_processes_exclude_each_other), T(release_hands_over_unless_unfair),
	T(delayed_release_then_waiter_takes_over), T(force_release_hands_over_to_a_waiter))
