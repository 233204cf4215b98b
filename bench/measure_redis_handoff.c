/*
 * A measurement of the Redis store's waiting, run by hand (not a test):
 *   handoff latency: a release in one process to the return of acquire in a
 *     process blocked on the lock, over 200 hand-offs (p50, p99, max);
 *   contention: 8 processes each hold the lock 1 ms, then work 1 ms, for 5 s
 *     (utilisation, longest wait, each process's count against the average).
 * It starts its own redis-server. Build and run from bench/:
 *   cc -std=c11 -O2 -D_GNU_SOURCE $(pkg-config --cflags hiredis) -o /tmp/measure \
 *     measure_redis_handoff.c ../ext/core/*.c $(pkg-config --libs hiredis) -lpthread
 *   /tmp/measure [fair|unfair]
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "../tests/core/t.h"
#include "../tests/core/redis_server.h"

#include <stdint.h>
#include <sys/mman.h>

#define M_HANDOFFS 200
#define M_PROCS 8
#define M_SECONDS 5

int t_failed;
int t_checks;

typedef struct {
	volatile uint64_t released_ns;   /* when the last holder called release */
	volatile int done[2];
	uint64_t lat[2][M_HANDOFFS];
	int nlat[2];
	/* contention */
	uint64_t held_ns[M_PROCS];
	uint64_t max_wait_ns[M_PROCS];
	long count[M_PROCS];
} m_shared;

static int m_fair = 1;

/* A store on port, fair or not per the command line. */
static lkc_store *m_open(int port)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_redis_config_init(&cfg);
	cfg.port = port;
	cfg.fair = m_fair;
	cfg.prefix = strdup("m:");
	cfg.prefix_len = 2;
	if (lkc_redis_open(&store, &cfg, &err) != LKC_OK) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	return store;
}

/* Sleeps ns nanoseconds. */
static void m_nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/* One side of the ping-pong: acquire (blocking), wait until the peer is queued, release. */
static void m_handoff_side(int port, int me, m_shared *sh)
{
	lkc_store *store = m_open(port);
	redisContext *c = redisConnect("127.0.0.1", port);
	lkc_hold hold;
	lkc_err err;

	lkc_hold_init(&hold, "res", 3, &err);
	for (int i = 0; i < M_HANDOFFS / 2 + 1; i++) {
		if (lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 10000, LKC_WAIT_FOREVER, &err) != LKC_OK) {
			fprintf(stderr, "acquire: %s\n", err.msg);
			_exit(1);
		}
		if (sh->released_ns != 0 && sh->nlat[me] < M_HANDOFFS) {
			sh->lat[me][sh->nlat[me]++] = lkc_now_ns() - sh->released_ns;
		}
		/* The peer must be asleep in its BLPOP when we release: queued, plus a moment. */
		for (;;) {
			redisReply *r = redisCommand(c, "LLEN m:{res}:q");
			long long n = r != NULL ? r->integer : -1;

			freeReplyObject(r);
			if (n == 1 || sh->done[1 - me]) {
				break;
			}
			m_nap(100000);
		}
		m_nap(1000000);
		sh->released_ns = lkc_now_ns();
		lkc_release(store, &hold, 0, &err);
	}
	sh->done[me] = 1;
	lkc_hold_dispose(&hold);
	redisFree(c);
	store->ops->destroy(store);
	_exit(0);
}

static int m_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static void m_handoff(int port, m_shared *sh)
{
	uint64_t all[M_HANDOFFS * 2];
	int n = 0;
	pid_t pids[2];

	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			m_handoff_side(port, i, sh);
		}
		m_nap(50000000);
	}
	for (int i = 0; i < 2; i++) {
		waitpid(pids[i], NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < sh->nlat[i]; k++) {
			all[n++] = sh->lat[i][k];
		}
	}
	qsort(all, (size_t) n, sizeof(all[0]), m_cmp);
	printf("handoff latency over %d hand-offs: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", n,
		all[n / 2] / 1e6, all[(n * 99) / 100] / 1e6, all[n - 1] / 1e6);
}

static void m_contender(int port, int me, uint64_t end, m_shared *sh)
{
	lkc_store *store = m_open(port);
	lkc_hold hold;
	lkc_err err;

	lkc_hold_init(&hold, "busy", 4, &err);
	while (lkc_now_ns() < end) {
		uint64_t t0 = lkc_now_ns(), t1, t2;

		if (lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, 10000, LKC_WAIT_FOREVER, &err) != LKC_OK) {
			fprintf(stderr, "acquire: %s\n", err.msg);
			_exit(1);
		}
		t1 = lkc_now_ns();
		m_nap(1000000);
		t2 = lkc_now_ns();
		lkc_release(store, &hold, 0, &err);
		if (t1 - t0 > sh->max_wait_ns[me]) {
			sh->max_wait_ns[me] = t1 - t0;
		}
		sh->held_ns[me] += t2 - t1;
		sh->count[me]++;
		m_nap(1000000);
	}
	lkc_hold_dispose(&hold);
	store->ops->destroy(store);
	_exit(0);
}

static void m_contention(int port, m_shared *sh)
{
	uint64_t start = lkc_now_ns(), end = start + (uint64_t) M_SECONDS * 1000000000u, held = 0, max_wait = 0;
	pid_t pids[M_PROCS];
	double avg = 0, worst = 0;
	long total = 0;

	for (int i = 0; i < M_PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			m_contender(port, i, end, sh);
		}
	}
	for (int i = 0; i < M_PROCS; i++) {
		waitpid(pids[i], NULL, 0);
	}
	for (int i = 0; i < M_PROCS; i++) {
		held += sh->held_ns[i];
		total += sh->count[i];
		if (sh->max_wait_ns[i] > max_wait) {
			max_wait = sh->max_wait_ns[i];
		}
	}
	avg = (double) total / M_PROCS;
	for (int i = 0; i < M_PROCS; i++) {
		double dev = (sh->count[i] - avg) / avg;

		if (dev < 0) {
			dev = -dev;
		}
		if (dev > worst) {
			worst = dev;
		}
	}
	printf("contention, %d processes for %d s: utilisation %.1f%%, %ld acquisitions, longest wait %.2f ms, "
		"worst count off the average by %.1f%%\n", M_PROCS, M_SECONDS,
		100.0 * (double) held / (double) (lkc_now_ns() - start), total, max_wait / 1e6, worst * 100);
}

int main(int argc, char **argv)
{
	m_shared *sh = mmap(NULL, sizeof(m_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	t_redis r;

	if (argc > 1 && strcmp(argv[1], "unfair") == 0) {
		m_fair = 0;
	}
	memset(sh, 0, sizeof(*sh));
	if (t_redis_start(&r) != 0) {
		return 1;
	}
	printf("%s mode\n", m_fair ? "fair" : "unfair");
	m_handoff(r.port, sh);
	m_contention(r.port, sh);
	t_redis_stop(&r);
	return 0;
}
