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

/*
 * The lock key of a resource, as the store's documented layout builds it:
 * prefix "{" tag "}", the tag being the resource, or "{" and the hex SHA-256
 * of a resource that holds a brace.
 */
static char *t_key(const char *prefix, size_t plen, const char *res, size_t rlen, size_t *klen)
{
	static const char hex[] = "0123456789abcdef";
	char hashed[65];
	char *key;

	if (memchr(res, '{', rlen) != NULL || memchr(res, '}', rlen) != NULL) {
		unsigned char digest[32];

		lkc_sha256(res, rlen, digest);
		hashed[0] = '{';
		for (int i = 0; i < 32; i++) {
			hashed[1 + 2 * i] = hex[digest[i] >> 4];
			hashed[2 + 2 * i] = hex[digest[i] & 15];
		}
		res = hashed;
		rlen = sizeof(hashed);
	}
	key = malloc(plen + rlen + 3);
	memcpy(key, prefix, plen);
	key[plen] = '{';
	memcpy(key + plen + 1, res, rlen);
	key[plen + 1 + rlen] = '}';
	*klen = plen + rlen + 2;
	key[*klen] = '\0';
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
	CHECK(store->ops->caps == (LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING));
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
	/* A single attempt of a store never asked for a token takes none: the first ask makes it. */
	CHECK(a.fence == -1);
	{
		int64_t token = 0;

		CHECK_RC(lkc_fence(store, &a, &token, &err), LKC_OK, &err);
		CHECK(token > 0 && a.fence == token);
	}
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

	/* A read hold keeps the writer out, and the other way round. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 10000, 0, &err), LKC_OK, &err);
	CHECK(a.fence == -1);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_BUSY, &err);
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 10000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);

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

static int t_hook_answer;

/* The host's verdict: interrupted once our alarm rang, if the test says so. */
static int t_hook(void)
{
	return t_alarmed && t_hook_answer;
}

static int t_queue_clean(t_redis *r, const char *prefix);

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
	CHECK(t_queue_clean(r, "t:interrupt:"));

	/* A signal the host does not care about: the wait goes on to its end. */
	t_hook_answer = 0;
	t_alarm_in(50);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, 10000, 400, &err), LKC_BUSY, &err);
	CHECK(t_alarmed);
	CHECK(t_queue_clean(r, "t:interrupt:"));

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
	int64_t fence;
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
		/* Its token makes the counter (a single attempt takes none until the store is asked for one). */
		CHECK_RC(lkc_fence(store, &holds[i], &fence, &err), LKC_OK, &err);
		CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 1);
		CHECK(t_locked(store, res[i].bytes, res[i].len) == 1);
		CHECK_RC(lkc_hold_init(&other, res[i].bytes, res[i].len, &err), LKC_OK, &err);
		CHECK_RC(lkc_acquire(store, &other, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
		lkc_hold_dispose(&other);
		free(key);
	}
	/* Two keys per resource (the lock, its fencing counter), each where the layout puts it: "a\0b" and "a\0c" are distinct. */
	CHECK(t_redis_int(r, "DBSIZE") == before + 2 * (long long) n);
	for (size_t i = 0; i < n; i++) {
		CHECK_RC(lkc_check(store, &holds[i], &err), LKC_OK, &err);
		CHECK_RC(lkc_refresh(store, &holds[i], 60000, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &holds[i], 0, &err), LKC_OK, &err);
		CHECK(t_locked(store, res[i].bytes, res[i].len) == 0);
		lkc_hold_dispose(&holds[i]);
	}
	/* The fencing counters stay, so that tokens keep growing. */
	CHECK(t_redis_int(r, "DBSIZE") == before + (long long) n);
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
	r.extra = NULL;
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
	/*
	 * A script call has more than ten arguments, which Redis answers from a
	 * client that has not authenticated by hanging up: NOAUTH all the same.
	 */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 1000, 500, &err), LKC_ERR_REFUSED, &err);
	CHECK(strstr(err.msg, "NOAUTH") != NULL);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_ERR_REFUSED, &err);
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
	r.extra = NULL;
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
	int shared;              /* a read hold rather than the write hold */
	/* first a read hold at once (its token pushed to PREFIX"readers"), promoted once it takes an element of PREFIX"promote" */
	int promote;
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
	if (w->promote) {
		if (lkc_acquire(store, &hold, LKC_MODE_SHARED, w->ttl_ms, 0, &err) != LKC_OK) {
			_exit(12);
		}
		freeReplyObject(redisCommand(c, "RPUSH %sreaders %s", w->prefix, hold.owner));
		reply = redisCommand(c, "BLPOP %spromote 30", w->prefix);
		if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
			_exit(13);
		}
		freeReplyObject(reply);
	}
	rc = lkc_acquire(store, &hold, w->shared ? LKC_MODE_SHARED : LKC_MODE_EXCLUSIVE, w->ttl_ms, w->wait_ms, &err);
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
	freeReplyObject(t_redis_cmd(r, "DEL %sorder %sgo %sreaders %spromote", prefix, prefix, prefix, prefix));
}

/* How many keys match pattern. */
static long long t_count_keys(t_redis *r, const char *pattern)
{
	redisReply *reply = t_redis_cmd(r, "KEYS %s", pattern);
	long long n = reply != NULL && reply->type == REDIS_REPLY_ARRAY ? (long long) reply->elements : -1;

	freeReplyObject(reply);
	return n;
}

/*
 * Whether the waiting of resource "res" under prefix left nothing behind: no
 * queue, deadlines or wake lists. What is left is printed, with its content.
 */
static int t_queue_clean(t_redis *r, const char *prefix)
{
	char pattern[128];
	redisReply *left;
	int clean = t_redis_int(r, "EXISTS %s{res}:q %s{res}:qd", prefix, prefix) == 0;

	snprintf(pattern, sizeof(pattern), "%s{res}:w:*", prefix);
	left = t_redis_cmd(r, "KEYS %s", pattern);
	for (size_t i = 0; left != NULL && left->type == REDIS_REPLY_ARRAY && i < left->elements; i++) {
		redisReply *items = t_redis_cmd(r, "LRANGE %s 0 -1", left->element[i]->str);

		fprintf(stderr, "    left behind: %s", left->element[i]->str);
		for (size_t j = 0; items != NULL && items->type == REDIS_REPLY_ARRAY && j < items->elements; j++) {
			fprintf(stderr, " %s", items->element[j]->str);
		}
		fprintf(stderr, "\n");
		freeReplyObject(items);
		clean = 0;
	}
	freeReplyObject(left);
	return clean;
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
		t_waiter w = { P, 1, 60000, 30000, k, 1, 0, 0 };

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
		t_waiter w = { P, 1, 60000, 30000, 5, 1, 0, 0 };

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
	/* Each waiter released what was handed to it, which took its hand-off record with it. */
	CHECK(t_redis_int(r, "EXISTS t:fifo:{res}:h") == 0);
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
			t_waiter wt = { P, 1, 60000, 30000, k, 1, 0, 0 };

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
	t_waiter w = { P, 1, 60000, 30000, 0, 0, 0, 0 };
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
	t_waiter w = { P, 1, 60000, 30000, 0, 1, 0, 0 };
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
	/* (Its wake list, named by a ticket, goes with it: the clean queue at the end shows it.) */

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
		t_waiter w = { "t:handon:", 1, 60000, 30000, 0, 0, 0, 0 };
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
	t_waiter w = { prefix, fair, 60000, 30000, 0, 0, 0, 0 };
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
	t_waiter w = { P, 1, 60000, 30000, 0, 0, 0, 0 };
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
	/*
	 * The cooldown stands in our place, as a reader that keeps everybody out
	 * until it ends, us too: nothing is handed over before.
	 */
	t_owner_at(r, "t:cooldown:{res}", 16, owner);
	CHECK(owner[0] == '\0');
	CHECK(t_redis_int(r, "EXISTS t:cooldown:{res}") == 1);
	pttl = t_redis_int(r, "PTTL t:cooldown:{res}");
	CHECK(pttl > 0 && pttl <= 300);
	/* The cooldown is the reader "", which no owner is. */
	CHECK(t_redis_int(r, "ZRANK t:cooldown:{res}:r %b", "", (size_t) 0) == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
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
	t_waiter w = { P, 1, 60000, 30000, 0, 0, 0, 0 };
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

/* The value of a string key, or "" when none (at most size - 1 bytes). */
static void t_get(t_redis *r, const char *key, char *out, size_t size)
{
	redisReply *reply = t_redis_cmd(r, "GET %s", key);

	out[0] = '\0';
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len < size) {
		memcpy(out, reply->str, reply->len + 1);
	}
	freeReplyObject(reply);
}

static void readers_share_across_processes_and_keep_writers_out(void)
{
	static const char P[] = "t:readers:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char order[16], value[64];
	lkc_hold mine, w;
	lkc_err err;
	pid_t pids[5];

	lkc_err_clear(&err);
	t_hold(&mine, "res");
	t_hold(&w, "res");
	CHECK_RC(lkc_acquire(store, &mine, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK(mine.mode == LKC_MODE_SHARED && mine.fence == -1);
	/* Three readers in three processes get in at once beside ours, and all hold together. */
	for (int k = 0; k < 3; k++) {
		t_waiter rd = { P, 1, 60000, 0, k, 1, 1, 0 };

		pids[k] = t_spawn(r, &rd);
		CHECK(t_wait_llen(r, "t:readers:order", k + 1));
	}
	CHECK(t_redis_int(r, "ZCARD t:readers:{res}:r") == 4);
	/* The lock key says "" (which no owner is) while readers hold. */
	t_get(r, "t:readers:{res}", value, sizeof(value));
	CHECK(t_redis_int(r, "EXISTS t:readers:{res}") == 1 && value[0] == '\0');
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK_RC(lkc_acquire(store, &w, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK(w.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &mine, &err), LKC_OK, &err);
	CHECK(mine.mode == LKC_MODE_SHARED);

	/* A writer that waits queues; a reader that comes after it may not join the readers (writers are preferred). */
	{
		t_waiter wr = { P, 1, 60000, 30000, 9, 0, 0, 0 };
		t_waiter late = { P, 1, 60000, 0, 8, 0, 1, 0 };

		pids[3] = t_spawn(r, &wr);
		CHECK(t_wait_llen(r, "t:readers:{res}:q", 1));
		pids[4] = t_spawn(r, &late);
		CHECK(t_reap(pids[4], 30) == 10);
	}
	CHECK_RC(lkc_release(store, &mine, 0, &err), LKC_OK, &err);
	/* Still three readers: the writer waits for the last of them. */
	CHECK(t_redis_int(r, "LLEN t:readers:{res}:q") == 1);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:readers:go 1 1 1"));
	for (int k = 0; k < 4; k++) {
		CHECK(t_reap(pids[k], 60) == 0);
	}
	t_take_order(r, P, order, sizeof(order));
	CHECK(strlen(order) == 4 && strchr(order, '0') != NULL && strchr(order, '1') != NULL
		&& strchr(order, '2') != NULL && order[3] == '9');
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK(t_redis_int(r, "EXISTS t:readers:{res}:r") == 0);
	lkc_hold_dispose(&mine);
	lkc_hold_dispose(&w);
	store->ops->destroy(store);
}

static void readers_and_writers_wait_in_arrival_order(void)
{
	static const char P[] = "t:rwfifo:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char order[16];
	lkc_hold a, n;
	lkc_err err;
	pid_t pids[4];
	/* A reader, a writer, then two readers: served as the reader, the writer, then both readers at once. */
	t_waiter ws[4] = {
		{ P, 1, 60000, 30000, 1, 1, 1, 0 }, { P, 1, 60000, 30000, 2, 1, 0, 0 },
		{ P, 1, 60000, 30000, 3, 1, 1, 0 }, { P, 1, 60000, 30000, 4, 1, 1, 0 },
	};

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&n, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	for (int k = 0; k < 4; k++) {
		pids[k] = t_spawn(r, &ws[k]);
		CHECK(t_wait_llen(r, "t:rwfifo:{res}:q", k + 1));
	}
	CHECK_RC(lkc_acquire(store, &n, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	/* The release handed a read hold to the first reader alone: the writer behind it bars the others. */
	CHECK(t_wait_llen(r, "t:rwfifo:order", 1));
	CHECK(t_redis_int(r, "ZCARD t:rwfifo:{res}:r") == 1);
	CHECK(t_redis_int(r, "LLEN t:rwfifo:{res}:q") == 3);
	CHECK_RC(lkc_acquire(store, &n, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:rwfifo:go 1"));
	CHECK(t_wait_llen(r, "t:rwfifo:order", 2));
	CHECK(t_redis_int(r, "LLEN t:rwfifo:{res}:q") == 2);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:rwfifo:go 1"));
	/* The writer's release let both readers in together. */
	CHECK(t_wait_llen(r, "t:rwfifo:order", 4));
	CHECK(t_redis_int(r, "ZCARD t:rwfifo:{res}:r") == 2);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:rwfifo:go 1 1"));
	for (int k = 0; k < 4; k++) {
		CHECK(t_reap(pids[k], 60) == 0);
	}
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "1234") == 0 || strcmp(order, "1243") == 0);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&n);
	store->ops->destroy(store);
}

static void unfair_readers_are_woken_one_after_another(void)
{
	static const char P[] = "t:rwunfair:";
	t_redis *r = t_shared();
	lkc_store *store = t_open_fair(r, P, 0);
	char order[16];
	lkc_hold a;
	lkc_err err;
	pid_t pids[3];

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	for (int k = 0; k < 3; k++) {
		t_waiter rd = { P, 0, 60000, 30000, k, 1, 1, 0 };

		pids[k] = t_spawn(r, &rd);
		CHECK(t_wait_llen(r, "t:rwunfair:{res}:q", k + 1));
	}
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	/* Each reader that gets in wakes the next, so all three end up holding together. */
	CHECK(t_wait_llen(r, "t:rwunfair:order", 3));
	CHECK(t_redis_int(r, "ZCARD t:rwunfair:{res}:r") == 3);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:rwunfair:go 1 1 1"));
	for (int k = 0; k < 3; k++) {
		CHECK(t_reap(pids[k], 60) == 0);
	}
	t_take_order(r, P, order, sizeof(order));
	CHECK(strlen(order) == 3);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void promotion_converts_at_once_or_waits_first_in_line(void)
{
	static const char P[] = "t:promote:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char owner[LKC_TOKEN_LEN + 1], head[LKC_TOKEN_LEN + 1], entry[96], order[16];
	lkc_hold a, b, c;
	lkc_err err;
	pid_t writer, promoter;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	t_hold(&c, "res");
	/* The only reader converts in one step, with a fencing token. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_EXCLUSIVE && a.fence > 0);
	t_owner_at(r, "t:promote:{res}", 15, owner);
	CHECK(strcmp(owner, a.owner) == 0);
	CHECK(t_redis_int(r, "EXISTS t:promote:{res}:r") == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	/* With another reader, a single attempt fails and the read hold stays. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	/* A bounded wait ends the same way, and leaves nothing queued. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 150, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK(t_queue_clean(r, P) && t_redis_int(r, "EXISTS t:promote:{res}:p") == 0);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &c, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);

	/*
	 * Another reader comes, then a writer that queues behind the readers;
	 * then that reader promotes: it waits at the front, still reading.
	 */
	{
		t_waiter wr = { P, 1, 60000, 30000, 2, 0, 0, 0 };
		t_waiter pr = { P, 1, 60000, 30000, 1, 1, 0, 1 };

		promoter = t_spawn(r, &pr);
		CHECK(t_wait_llen(r, "t:promote:readers", 1));
		writer = t_spawn(r, &wr);
		CHECK(t_wait_llen(r, "t:promote:{res}:q", 1));
		freeReplyObject(t_redis_cmd(r, "RPUSH t:promote:promote 1"));
		CHECK(t_wait_llen(r, "t:promote:{res}:q", 2));
	}
	t_token_at(r, "t:promote:readers", 0, owner);
	t_token_at(r, "t:promote:{res}:q", 0, head);
	CHECK(owner[0] != '\0' && strcmp(head, owner) == 0);
	CHECK(t_redis_int(r, "ZRANK t:promote:{res}:r %s", owner) >= 0);
	t_get(r, "t:promote:{res}:p", entry, sizeof(entry));
	CHECK(strcmp(entry, owner) == 0);
	{
		redisReply *reply = t_redis_cmd(r, "HGET t:promote:{res}:qd %s", owner);

		CHECK(reply != NULL && reply->type == REDIS_REPLY_STRING && strstr(reply->str, ":p:") != NULL);
		freeReplyObject(reply);
	}
	/* A pending promotion bars new readers as a waiting writer does. */
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	/* b leaves: the promoter goes before the writer that came first. */
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:promote:go 1"));
	CHECK(t_reap(promoter, 60) == 0);
	CHECK(t_reap(writer, 60) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "12") == 0);
	CHECK(t_queue_clean(r, P) && t_redis_int(r, "EXISTS t:promote:{res}:p") == 0);
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_hold_dispose(&c);
	store->ops->destroy(store);
}

static void a_second_promotion_is_refused_at_once(void)
{
	static const char P[] = "t:promote2:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	t_waiter pr = { P, 1, 60000, 60000, 1, 0, 0, 1 };
	char order[16];
	lkc_hold a, b;
	lkc_err err;
	uint64_t start;
	pid_t promoter;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	promoter = t_spawn(r, &pr);
	CHECK(t_wait_llen(r, "t:promote2:readers", 1));
	freeReplyObject(t_redis_cmd(r, "RPUSH t:promote2:promote 1"));
	CHECK(t_wait_llen(r, "t:promote2:{res}:q", 1));
	/*
	 * Each would wait for the other to stop reading: the second promotion is
	 * refused without waiting its minute, and keeps its read hold.
	 */
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 60000, &err), LKC_BUSY, &err);
	CHECK(strstr(err.msg, "promote") != NULL);
	CHECK(t_elapsed(start) < 30);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "LLEN t:promote2:{res}:q") == 1);
	/* Once both other readers leave, the first promotion goes through. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK(t_reap(promoter, 60) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "1") == 0);
	CHECK(t_queue_clean(r, P) && t_redis_int(r, "EXISTS t:promote2:{res}:p") == 0);
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void demotion_lets_the_queued_readers_in(void)
{
	static const char P[] = "t:demote:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char value[64], order[16];
	lkc_hold w, n;
	lkc_err err;
	pid_t pids[3];
	t_waiter ws[3] = {
		{ P, 1, 60000, 30000, 1, 1, 1, 0 }, { P, 1, 60000, 30000, 2, 1, 1, 0 },
		{ P, 1, 60000, 30000, 3, 1, 0, 0 },
	};

	lkc_err_clear(&err);
	t_hold(&w, "res");
	t_hold(&n, "res");
	CHECK_RC(lkc_acquire(store, &w, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	for (int k = 0; k < 3; k++) {
		pids[k] = t_spawn(r, &ws[k]);
		CHECK(t_wait_llen(r, "t:demote:{res}:q", k + 1));
	}
	/* The waiters are stopped in their sleep: whatever they get, the demotion itself gave them. */
	CHECK(t_wait_blocked(r, 3));
	for (int k = 0; k < 3; k++) {
		kill(pids[k], SIGSTOP);
	}
	CHECK_RC(lkc_acquire(store, &w, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK(w.mode == LKC_MODE_SHARED && w.fence == -1);
	/* The lock key says "" (which no owner is) while readers hold. */
	t_get(r, "t:demote:{res}", value, sizeof(value));
	CHECK(t_redis_int(r, "EXISTS t:demote:{res}") == 1 && value[0] == '\0');
	/* Both readers at the head came in with us; the writer still waits, and so does a new writer. */
	CHECK(t_redis_int(r, "ZCARD t:demote:{res}:r") == 3);
	CHECK(t_redis_int(r, "LLEN t:demote:{res}:q") == 1);
	for (int k = 0; k < 3; k++) {
		kill(pids[k], SIGCONT);
	}
	CHECK(t_wait_llen(r, "t:demote:order", 2));
	CHECK_RC(lkc_acquire(store, &n, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_check(store, &w, &err), LKC_OK, &err);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:demote:go 1 1"));
	CHECK(t_reap(pids[0], 60) == 0);
	CHECK(t_reap(pids[1], 60) == 0);
	CHECK(t_redis_int(r, "LLEN t:demote:order") == 2);
	CHECK_RC(lkc_release(store, &w, 0, &err), LKC_OK, &err);
	freeReplyObject(t_redis_cmd(r, "RPUSH t:demote:go 1"));
	CHECK(t_reap(pids[2], 60) == 0);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "123") == 0 || strcmp(order, "213") == 0);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&w);
	lkc_hold_dispose(&n);
	store->ops->destroy(store);
}

/* Readers that keep overlapping read holds in a loop; a writer that waits still gets in while they run. */
static void t_writer_not_starved(const char *prefix, int fair)
{
	enum { READERS = 4 };
	t_redis *r = t_shared();
	lkc_store *store = t_open_fair(r, prefix, fair);
	char key[96];
	pid_t pids[READERS];
	lkc_hold w;
	lkc_err err;

	lkc_err_clear(&err);
	freeReplyObject(t_redis_cmd(r, "DEL %sinside %sstarted %sstop", prefix, prefix, prefix));
	for (int i = 0; i < READERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			lkc_redis_config cfg;
			lkc_store *own = NULL;
			redisContext *c = redisConnect("127.0.0.1", r->port);
			lkc_hold h;
			int code = 0, rounds = 0;

			lkc_set_interrupt_hook(NULL);
			t_config(&cfg, r, prefix, strlen(prefix));
			cfg.fair = fair;
			if (c == NULL || c->err != 0 || lkc_redis_open(&own, &cfg, &err) != LKC_OK
				|| lkc_hold_init(&h, "res", 3, &err) != LKC_OK) {
				_exit(1);
			}
			/* Staggered, so that the read holds overlap and the resource is never free. */
			t_sleep_ms(15 * i);
			for (;;) {
				redisReply *reply = redisCommand(c, "EXISTS %sstop", prefix);
				int stop = reply != NULL && reply->integer == 1;

				freeReplyObject(reply);
				if (stop) {
					break;
				}
				if (lkc_acquire(own, &h, LKC_MODE_SHARED, 30000, 60000, &err) != LKC_OK) {
					code = 2;
					break;
				}
				freeReplyObject(redisCommand(c, "INCR %sinside", prefix));
				if (rounds++ == 0) {
					freeReplyObject(redisCommand(c, "INCR %sstarted", prefix));
				}
				t_sleep_ms(20 + (getpid() + rounds * 7) % 40);
				freeReplyObject(redisCommand(c, "DECR %sinside", prefix));
				if (lkc_release(own, &h, 0, &err) != LKC_OK) {
					code = 3;
					break;
				}
			}
			_exit(code);
		}
	}
	snprintf(key, sizeof(key), "%sstarted", prefix);
	for (int i = 0; i < 2000 && t_redis_int(r, "INCRBY %s 0", key) < READERS; i++) {
		t_sleep_ms(5);
	}
	t_hold(&w, "res");
	CHECK_RC(lkc_acquire(store, &w, LKC_MODE_EXCLUSIVE, 30000, 20000, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "INCRBY %sinside 0", prefix) == 0);
	/* The readers still run: the writer did not just wait for them to stop. */
	for (int i = 0; i < READERS; i++) {
		CHECK(waitpid(pids[i], NULL, WNOHANG) == 0);
	}
	freeReplyObject(t_redis_cmd(r, "SET %sstop 1", prefix));
	CHECK_RC(lkc_release(store, &w, 0, &err), LKC_OK, &err);
	for (int i = 0; i < READERS; i++) {
		CHECK(t_reap(pids[i], 120) == 0);
	}
	CHECK(t_queue_clean(r, prefix));
	CHECK(t_locked(store, "res", 3) == 0);
	freeReplyObject(t_redis_cmd(r, "DEL %sinside %sstarted %sstop", prefix, prefix, prefix));
	lkc_hold_dispose(&w);
	store->ops->destroy(store);
}

static void a_writer_is_not_starved_by_readers(void)
{
	t_writer_not_starved("t:starve:", 1);
	t_writer_not_starved("t:starve-unfair:", 0);
}

/* Writes all of line to fd, which was opened with O_APPEND. */
static int t_append(int fd, const char *line)
{
	size_t len = strlen(line);

	return write(fd, line, len) == (ssize_t) len ? 0 : -1;
}

static void fencing_tokens_grow_with_every_exclusive_hold(void)
{
	enum { PROCS = 8, ROUNDS = 200 };
	static const char P[] = "t:fence:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char path[] = "/tmp/lkc-fence-XXXXXX";
	int fd = mkstemp(path);
	pid_t pids[PROCS];
	long long prev, count = 0, first;
	int64_t fence;
	lkc_hold a;
	lkc_err err;
	FILE *log;
	char line[64];

	lkc_err_clear(&err);
	t_hold(&a, "res");
	CHECK(fd >= 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	/* A single attempt of a store never asked for a token takes none; the first ask makes it. */
	CHECK(a.fence == -1);
	CHECK_RC(lkc_fence(store, &a, &fence, &err), LKC_OK, &err);
	first = fence;
	/* A new counter starts at the server's clock in microseconds, far above anything small. */
	CHECK(first > 1000000000000000LL);
	/* Asked again, the hold's token is the same; from now on a single attempt takes its token. */
	CHECK_RC(lkc_fence(store, &a, &fence, &err), LKC_OK, &err);
	CHECK(fence == first);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			lkc_store *own;
			lkc_redis_config cfg;
			long long last = 0;
			int out = open(path, O_WRONLY | O_APPEND);
			lkc_hold h;

			lkc_set_interrupt_hook(NULL);
			t_config(&cfg, r, P, strlen(P));
			if (out < 0 || lkc_redis_open(&own, &cfg, &err) != LKC_OK || lkc_hold_init(&h, "res", 3, &err) != LKC_OK) {
				_exit(1);
			}
			for (int k = 0; k < ROUNDS; k++) {
				int expire = k % 100 == 50;
				lkc_rc rc;

				if (k % 10 == 5) {
					/* A promoted read hold; a promotion refused for another's is taken again as a plain write. */
					if (lkc_acquire(own, &h, LKC_MODE_SHARED, 30000, 60000, &err) != LKC_OK) {
						_exit(2);
					}
					rc = lkc_acquire(own, &h, LKC_MODE_EXCLUSIVE, 30000, 60000, &err);
					if (rc == LKC_BUSY) {
						if (lkc_release(own, &h, 0, &err) != LKC_OK) {
							_exit(3);
						}
						rc = lkc_acquire(own, &h, LKC_MODE_EXCLUSIVE, 30000, 60000, &err);
					}
				} else {
					rc = lkc_acquire(own, &h, LKC_MODE_EXCLUSIVE, expire ? 150 : 30000, 60000, &err);
				}
				if (rc != LKC_OK || h.mode != LKC_MODE_EXCLUSIVE || lkc_fence(own, &h, &fence, &err) != LKC_OK) {
					_exit(4);
				}
				if (fence <= last) {
					_exit(5);
				}
				last = fence;
				snprintf(line, sizeof(line), "%lld\n", (long long) fence);
				if (t_append(out, line) != 0) {
					_exit(6);
				}
				if (expire) {
					/* The hold runs out: whoever comes next takes it over, with a greater token. */
					t_sleep_ms(250);
					rc = lkc_release(own, &h, 0, &err);
					if (rc != LKC_EXPIRED && rc != LKC_LOST) {
						_exit(7);
					}
				} else if (lkc_release(own, &h, 0, &err) != LKC_OK) {
					_exit(8);
				}
			}
			_exit(0);
		}
	}
	for (int i = 0; i < PROCS; i++) {
		CHECK(t_reap(pids[i], 300) == 0);
	}
	/* Appended by each holder while it held the lock: the file is in acquisition order. */
	log = fdopen(fd, "r");
	prev = first;
	while (log != NULL && fgets(line, sizeof(line), log) != NULL) {
		long long token = atoll(line);

		CHECK(token > prev);
		prev = token;
		count++;
	}
	CHECK(count == PROCS * ROUNDS);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.fence > prev);
	prev = a.fence;
	/* Breaking the holder does not touch the counter. */
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.fence > prev);
	prev = a.fence;
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	/* A counter that was lost (a restart without persistence) starts again above every token it gave. */
	freeReplyObject(t_redis_cmd(r, "DEL t:fence:{res}:f"));
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK(a.fence > prev);
	/* It lives 10 x the TTL (an hour at most) after the take, then goes with the idle resource. */
	CHECK(t_redis_int(r, "PTTL t:fence:{res}:f") > 500000);
	CHECK(t_redis_int(r, "PTTL t:fence:{res}:f") <= 600000);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	if (log != NULL) {
		fclose(log);
	}
	unlink(path);
	CHECK(t_queue_clean(r, P));
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

/* What a child that restores a hold by its token does, step by step, as the parent says over a pipe. */
static int t_restorer(t_redis *r, const char *prefix, const char *owner, int cmd_fd, int ans_fd)
{
	lkc_redis_config cfg;
	lkc_store *own = NULL;
	lkc_hold h;
	lkc_err err;
	char c;

	lkc_set_interrupt_hook(NULL);
	t_config(&cfg, r, prefix, strlen(prefix));
	if (lkc_redis_open(&own, &cfg, &err) != LKC_OK || lkc_hold_init(&h, "res", 3, &err) != LKC_OK) {
		return 1;
	}
	/* Each command letter is answered by the result code of the call, as one byte. */
	while (read(cmd_fd, &c, 1) == 1) {
		int64_t fence = 0;
		lkc_rc rc;

		switch (c) {
			case 'R':
				rc = lkc_hold_restore(&h, owner, strlen(owner), &err);
				break;
			case 'c':
				rc = lkc_check(own, &h, &err);
				break;
			case 'f':
				rc = lkc_refresh(own, &h, 120000, &err);
				break;
			case 'F':
				rc = lkc_fence(own, &h, &fence, &err);
				if (rc == LKC_OK && write(ans_fd, &fence, sizeof(fence)) != sizeof(fence)) {
					return 2;
				}
				break;
			case 'm':
				rc = (lkc_rc) h.mode;
				break;
			case 'r':
				rc = lkc_release(own, &h, 0, &err);
				break;
			case 'x':
				lkc_hold_dispose(&h);
				own->ops->destroy(own);
				return 0;
			default:
				return 3;
		}
		c = (char) rc;
		if (write(ans_fd, &c, 1) != 1) {
			return 4;
		}
	}
	return 5;
}

/* Sends one command letter to a restorer and returns its answer. */
static int t_ask(int cmd_fd, int ans_fd, char c)
{
	char answer = -1;

	if (write(cmd_fd, &c, 1) != 1 || read(ans_fd, &answer, 1) != 1) {
		return -1;
	}
	return answer;
}

/* Forks a restorer for owner; fds[0] sends it commands, fds[1] reads its answers. */
static pid_t t_spawn_restorer(t_redis *r, const char *prefix, const char *owner, int fds[2])
{
	int to_child[2], to_parent[2];
	pid_t pid;

	if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(t_restorer(r, prefix, owner, to_child[0], to_parent[1]));
	}
	close(to_child[0]);
	close(to_parent[1]);
	fds[0] = to_child[1];
	fds[1] = to_parent[0];
	return pid;
}

/* Ends a restorer and returns its exit code. */
static int t_end_restorer(pid_t pid, int fds[2])
{
	char c = 'x';

	if (write(fds[0], &c, 1) != 1) {
		return -3;
	}
	close(fds[0]);
	close(fds[1]);
	return t_reap(pid, 30);
}

static void another_process_restores_a_hold_by_its_token(void)
{
	static const char P[] = "t:restore:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char fake[LKC_TOKEN_LEN + 1];
	int fds[2];
	int64_t fence = 0, mine = 0;
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	memset(fake, 'a', LKC_TOKEN_LEN);
	fake[LKC_TOKEN_LEN] = '\0';

	/* The write hold: the child refreshes it, reads its fencing token, and releases it. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &mine, &err), LKC_OK, &err);
	pid = t_spawn_restorer(r, P, a.owner, fds);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'c') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'm') == LKC_MODE_EXCLUSIVE);
	CHECK(t_ask(fds[0], fds[1], 'f') == LKC_OK);
	CHECK(t_redis_int(r, "PTTL t:restore:{res}") > 60000);
	/* A token made during the hold, by whichever process asks: never below the holder's own. */
	CHECK(write(fds[0], "F", 1) == 1 && read(fds[1], &fence, sizeof(fence)) == sizeof(fence));
	CHECK(fence >= mine);
	{
		char rc = -1;

		CHECK(read(fds[1], &rc, 1) == 1 && rc == LKC_OK);
	}
	CHECK(t_ask(fds[0], fds[1], 'r') == LKC_OK);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK(t_end_restorer(pid, fds) == 0);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_EXPIRED, &err);

	/* A wrong token can neither refresh nor release: lost while somebody holds it, expired when nobody does. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn_restorer(r, P, fake, fds);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'f') == LKC_LOST);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'r') == LKC_LOST);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'F') == LKC_LOST);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'f') == LKC_EXPIRED);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'r') == LKC_EXPIRED);
	CHECK(t_end_restorer(pid, fds) == 0);

	/* A read hold restored as if it were a write hold: found among the readers, and its mode told. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn_restorer(r, P, a.owner, fds);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'F') == LKC_ERR_STATE);
	CHECK(t_ask(fds[0], fds[1], 'm') == LKC_MODE_SHARED);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'c') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'm') == LKC_MODE_SHARED);
	CHECK(t_ask(fds[0], fds[1], 'R') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'f') == LKC_OK);
	CHECK(t_ask(fds[0], fds[1], 'm') == LKC_MODE_SHARED);
	CHECK(t_redis_int(r, "PTTL t:restore:{res}") > 60000);
	CHECK(t_ask(fds[0], fds[1], 'r') == LKC_OK);
	CHECK(t_locked(store, "res", 3) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK(t_end_restorer(pid, fds) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
}

static void force_release_breaks_readers_and_wakes_the_waiters(void)
{
	static const char P[] = "t:forceread:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	char owner[LKC_TOKEN_LEN + 1], token[LKC_TOKEN_LEN + 1], order[16];
	t_waiter wr = { P, 1, 60000, 30000, 1, 1, 0, 0 };
	t_waiter rd = { P, 1, 60000, 30000, 2, 1, 1, 0 };
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
	pid = t_spawn(r, &wr);
	CHECK(t_wait_llen(r, "t:forceread:{res}:q", 1));
	CHECK(t_wait_blocked(r, 1));
	t_token_at(r, "t:forceread:{res}:q", 0, token);
	/* Stopped in its sleep: the lock it gets, the force release itself handed over. */
	kill(pid, SIGSTOP);
	CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
	t_owner_at(r, "t:forceread:{res}", 17, owner);
	CHECK(token[0] != '\0' && strcmp(owner, token) == 0);
	CHECK(t_redis_int(r, "EXISTS t:forceread:{res}:r") == 0);
	kill(pid, SIGCONT);
	CHECK(t_wait_llen(r, "t:forceread:order", 1));
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	/* A broken reader's release says so and leaves the writer alone. */
	CHECK_RC(store->ops->release(store, &b, 0, &err), LKC_LOST, &err);
	t_owner_at(r, "t:forceread:{res}", 17, owner);
	CHECK(owner[0] != '\0' && strcmp(owner, a.owner) != 0 && strcmp(owner, b.owner) != 0);

	/* A reader that waits for the writer is let in by the next force release. */
	{
		pid_t reader = t_spawn(r, &rd);

		CHECK(t_wait_llen(r, "t:forceread:{res}:q", 1));
		CHECK(t_wait_blocked(r, 2));
		t_token_at(r, "t:forceread:{res}:q", 0, token);
		kill(reader, SIGSTOP);
		CHECK_RC(store->ops->force_release(store, "res", 3, &err), LKC_OK, &err);
		CHECK(t_redis_int(r, "ZRANK t:forceread:{res}:r %s", token) == 0);
		kill(reader, SIGCONT);
		CHECK(t_wait_llen(r, "t:forceread:order", 2));
		CHECK(t_redis_int(r, "ZCARD t:forceread:{res}:r") == 1);
		freeReplyObject(t_redis_cmd(r, "RPUSH t:forceread:go 1 1"));
		CHECK(t_reap(reader, 60) == 0);
	}
	/* The writer's release finds its hold broken: 14. */
	CHECK(t_reap(pid, 60) == 14);
	t_take_order(r, P, order, sizeof(order));
	CHECK(strcmp(order, "12") == 0);
	CHECK(t_queue_clean(r, P));
	CHECK(t_locked(store, "res", 3) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
}

static void read_holds_refresh_expire_and_cool_down(void)
{
	static const char P[] = "t:readttl:";
	t_redis *r = t_shared();
	lkc_store *store = t_open(r, P);
	lkc_hold a, b, c;
	lkc_err err;
	long long pttl;

	lkc_err_clear(&err);
	t_hold(&a, "res");
	t_hold(&b, "res");
	t_hold(&c, "res");
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 150, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, 5000, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	/* The lock key lives as long as the longest-lived reader. */
	pttl = t_redis_int(r, "PTTL t:readttl:{res}");
	CHECK(pttl > 150 && pttl <= 5000);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 100, 0, &err), LKC_OK, &err);
	t_sleep_ms(400);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	/* b's time ran out while a still reads: lost, as for a write hold taken over. */
	CHECK_RC(lkc_check(store, &b, &err), LKC_LOST, &err);
	CHECK_RC(lkc_refresh(store, &b, 5000, &err), LKC_LOST, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK_RC(store->ops->release(store, &b, 0, &err), LKC_LOST, &err);
	/* Acquiring a read hold again refreshes it. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 20000, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL t:readttl:{res}") > 5000);
	/* A shorter refresh shortens the lock key with it. */
	CHECK_RC(lkc_refresh(store, &a, 3000, &err), LKC_OK, &err);
	pttl = t_redis_int(r, "PTTL t:readttl:{res}");
	CHECK(pttl > 0 && pttl <= 3000);

	/* The last reader's cooldown keeps readers and writers out, and its own token too. */
	CHECK_RC(lkc_release(store, &a, 300, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 1);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 20000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK(t_locked(store, "res", 3) == 0);

	/* Without a TTL, a reader and the lock key stay until released. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 20000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "PTTL t:readttl:{res}") == -1);
	CHECK(t_redis_int(r, "PTTL t:readttl:{res}:r") == -1);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	pttl = t_redis_int(r, "PTTL t:readttl:{res}");
	CHECK(pttl > 0 && pttl <= 20000);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(r, "EXISTS t:readttl:{res} t:readttl:{res}:r") == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_hold_dispose(&c);
	store->ops->destroy(store);
}

/* CRC16-CCITT (XMODEM), the checksum Redis Cluster maps keys to slots with. */
static unsigned t_crc16(const char *buf, size_t len)
{
	unsigned crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned) (unsigned char) buf[i] << 8;
		for (int b = 0; b < 8; b++) {
			crc = (crc & 0x8000u) != 0 ? ((crc << 1) ^ 0x1021u) & 0xffffu : (crc << 1) & 0xffffu;
		}
	}
	return crc;
}

/* The cluster slot of a key, by Redis's hash tag rule; *tag_len is the tag's length, 0 when the key has none. */
static unsigned t_keyslot(const char *key, size_t len, size_t *tag_len)
{
	const char *open = memchr(key, '{', len);

	if (open != NULL) {
		const char *close = memchr(open + 1, '}', len - (size_t) (open + 1 - key));

		if (close != NULL && close > open + 1) {
			*tag_len = (size_t) (close - open - 1);
			return t_crc16(open + 1, *tag_len) & 16383u;
		}
	}
	*tag_len = 0;
	return t_crc16(key, len) & 16383u;
}

static void every_key_of_a_resource_shares_one_slot(void)
{
	static const char *const prefixes[] = { "t:slot0:", "t:slot1{", "t:{slot2}:" };
	static const struct { const char *bytes; size_t len; } res[] = {
		{ "res", 3 }, { "}x", 2 }, { "}", 1 }, { "{}", 2 }, { "a{b", 3 }, { "x}y{z", 5 }, { "a\0}", 3 },
	};
	static const char *const suffixes[] = {
		"", ":r", ":f", ":q", ":qd", ":p", ":h", ":ws", ":t", ":m", ":wl", ":fw", ":fl", ":w:1795690629697359",
	};
	t_redis *r = t_shared();
	size_t tag_len;
	lkc_redis_config cfg;
	lkc_store *bad = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	CHECK(t_crc16("123456789", 9) == 0x31c3);
	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		lkc_store *store = t_open(r, prefixes[p]);

		for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
			size_t plen = strlen(prefixes[p]), klen;
			char *key = t_key(prefixes[p], plen, res[i].bytes, res[i].len, &klen);
			unsigned slot = t_keyslot(key, klen, &tag_len);
			char pattern[64];
			redisReply *keys;
			lkc_hold a, b;
			int seen = 0;

			/* By the layout: a tag that is not empty, and the same slot whatever follows the lock key. */
			CHECK(tag_len > 0);
			for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
				size_t slen = strlen(suffixes[k]);
				char *full = malloc(klen + slen);

				memcpy(full, key, klen);
				memcpy(full + klen, suffixes[k], slen);
				CHECK(t_keyslot(full, klen + slen, &tag_len) == slot && tag_len > 0);
				free(full);
			}
			/* And as the store writes them: a reader, a pending promotion, its waiter's wake list. */
			CHECK_RC(lkc_hold_init(&a, res[i].bytes, res[i].len, &err), LKC_OK, &err);
			CHECK_RC(lkc_hold_init(&b, res[i].bytes, res[i].len, &err), LKC_OK, &err);
			CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 0, &err), LKC_OK, &err);
			CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
			CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, 60000, 0, &err), LKC_OK, &err);
			CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, 60000, 50, &err), LKC_BUSY, &err);
			CHECK(t_redis_int(r, "EXISTS %b", key, klen) == 1);
			snprintf(pattern, sizeof(pattern), "%s*", prefixes[p]);
			keys = t_redis_cmd(r, "KEYS %s", pattern);
			for (size_t k = 0; keys != NULL && keys->type == REDIS_REPLY_ARRAY && k < keys->elements; k++) {
				const redisReply *e = keys->element[k];

				if (e->len >= klen && memcmp(e->str, key, klen) == 0) {
					CHECK(t_keyslot(e->str, e->len, &tag_len) == slot);
					seen++;
				}
			}
			freeReplyObject(keys);
			/* The lock, the readers, the fencing counter, at least. */
			CHECK(seen >= 3);
			CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
			CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
			CHECK(t_locked(store, res[i].bytes, res[i].len) == 0);
			freeReplyObject(t_redis_cmd(r, "DEL %b%s", key, klen, ":f"));
			lkc_hold_dispose(&a);
			lkc_hold_dispose(&b);
			free(key);
		}
		store->ops->destroy(store);
	}
	/* A prefix whose first brace is closed at once would leave every key without a tag: refused. */
	t_config(&cfg, r, "app{}:", 6);
	CHECK_RC(lkc_redis_open(&bad, &cfg, &err), LKC_ERR_INVALID, &err);
	CHECK(bad == NULL && strstr(err.msg, "prefix") != NULL);
	lkc_redis_config_free(&cfg);
	t_config(&cfg, r, "app{", 4);
	CHECK_RC(lkc_redis_open(&bad, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	bad->ops->destroy(bad);
}

/* Opens a store on r that asks replicas acknowledgements within wait_ms. */
static lkc_store *t_open_replicas(const t_redis *r, const char *prefix, int replicas, int64_t wait_ms)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	t_config(&cfg, r, prefix, strlen(prefix));
	cfg.replicas = replicas;
	cfg.replicas_timeout_ms = wait_ms;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	return store;
}

/* With replicas set, a hold counts once the replicas have it; one they do not acknowledge is given back. */
static void replicas_acknowledge_or_give_back(void)
{
	t_redis master, replica;
	lkc_store *one, *two;
	lkc_hold a, b;
	lkc_err err;
	uint64_t start;

	master.dir[0] = replica.dir[0] = '\0';
	CHECK(t_redis_start(&master) == 0 && t_redis_start(&replica) == 0);
	freeReplyObject(t_redis_cmd(&replica, "REPLICAOF 127.0.0.1 %d", master.port));
	start = lkc_now_ns();
	while (t_redis_int(&master, "WAIT 1 100") < 1 && t_elapsed(start) < 10) {
		t_sleep_ms(20);
	}
	one = t_open_replicas(&master, "rep:", 1, 500);
	two = t_open_replicas(&master, "rep:", 2, 200);
	lkc_err_clear(&err);
	CHECK_RC(lkc_hold_init(&a, "res", 3, &err), LKC_OK, &err);
	CHECK_RC(lkc_hold_init(&b, "res", 3, &err), LKC_OK, &err);

	/* One replica acknowledges: the hold is taken, and the replica has the key. */
	CHECK_RC(lkc_acquire(one, &a, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_OK, &err);
	CHECK(t_redis_int(&replica, "EXISTS rep:{res}") == 1);
	CHECK_RC(lkc_refresh(one, &a, 10000, &err), LKC_OK, &err);
	/* Two are asked for and one exists: the refresh is reported, the hold stays. */
	CHECK_RC(lkc_refresh(two, &a, 10000, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "not acknowledged by 2 replicas") != NULL && strstr(err.msg, "(1 did)") != NULL);
	CHECK(t_locked(one, "res", 3) == 1);
	CHECK_RC(lkc_release(one, &a, 0, &err), LKC_OK, &err);

	/* An acquire that is not acknowledged is given back: never half-held. */
	CHECK_RC(lkc_acquire(two, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "given back") != NULL);
	CHECK(t_locked(one, "res", 3) == 0);
	/* A replica that stopped answering: the same, within the timeout. */
	kill(replica.pid, SIGSTOP);
	start = lkc_now_ns();
	CHECK_RC(lkc_acquire(one, &b, LKC_MODE_EXCLUSIVE, 10000, 0, &err), LKC_ERR_IO, &err);
	CHECK(t_elapsed(start) < 2.5);
	CHECK(strstr(err.msg, "(0 did)") != NULL && strstr(err.msg, "given back") != NULL);
	CHECK(t_locked(one, "res", 3) == 0);

	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	one->ops->destroy(one);
	two->ops->destroy(two);
	t_redis_stop(&replica);
	t_redis_stop(&master);
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
	T(delayed_release_then_waiter_takes_over), T(force_release_hands_over_to_a_waiter),
	T(readers_share_across_processes_and_keep_writers_out), T(readers_and_writers_wait_in_arrival_order),
	T(unfair_readers_are_woken_one_after_another), T(promotion_converts_at_once_or_waits_first_in_line),
	T(a_second_promotion_is_refused_at_once), T(demotion_lets_the_queued_readers_in),
	T(a_writer_is_not_starved_by_readers), T(fencing_tokens_grow_with_every_exclusive_hold),
	T(another_process_restores_a_hold_by_its_token), T(force_release_breaks_readers_and_wakes_the_waiters),
	T(read_holds_refresh_expire_and_cool_down), T(every_key_of_a_resource_shares_one_slot),
	T(replicas_acknowledge_or_give_back))
