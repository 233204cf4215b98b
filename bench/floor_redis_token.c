/*
 * The floor under the contention group's Redis utilisation, run by hand (not
 * a test): 8 processes pass one bare token through a Redis list, each taking
 * it with BLPOP, holding it 1 ms (busy), giving it back with RPUSH (or with a
 * script of <calls> extra calls) and working 1 ms (usleep), as the contention
 * group does. No TTL, no queue of its own, no fencing: what is left is the
 * two wake-ups of every hand-off, so this is as high as any lock that goes
 * through the server can get on the machine. It prints the utilisation and
 * the gaps between one hold's end and the next one's start.
 * Build and run against a redis-server on a loopback port:
 *   cc -O2 -o /tmp/floor bench/floor_redis_token.c $(pkg-config --cflags --libs hiredis)
 *   /tmp/floor <port> [<calls> [<seconds>]]
 * <calls> -1 (the default) gives back with a bare RPUSH; n >= 0 with a script
 * of n writes (SET PX) and the RPUSH, and also joins with a script of n reads
 * before each BLPOP, like a lock's release and join steps.
 */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define F_PROCS 8
#define F_HOLD_NS 1000000ull
#define F_WORK_US 1000
#define F_MAX_HOLDS 200000

typedef struct {
	uint64_t held[F_PROCS];
	long n;
	uint64_t at[F_MAX_HOLDS][2];
} f_shared;

static uint64_t f_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void f_run(redisContext *c, const char *fmt, const char *arg)
{
	redisReply *reply = arg != NULL ? redisCommand(c, fmt, arg) : redisCommand(c, fmt);

	if (reply == NULL) {
		fprintf(stderr, "floor: %s\n", c->errstr);
		_exit(1);
	}
	freeReplyObject(reply);
}

/* A script of n copies of call, then last. */
static char *f_script(int n, const char *call, const char *last)
{
	char *s = malloc((size_t) (n > 0 ? n : 0) * strlen(call) + strlen(last) + 1);

	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(s, call);
	}
	strcat(s, last);
	return s;
}

static int f_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 6379;
	int calls = argc > 2 ? atoi(argv[2]) : -1;
	double seconds = argc > 3 ? atof(argv[3]) : 5.0;
	f_shared *sh = mmap(NULL, sizeof(f_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *give = f_script(calls, "redis.call('SET','floor:k','v','PX',100000)\n", "return redis.call('RPUSH','floor:tok','x')");
	char *join = f_script(calls, "redis.call('GET','floor:k')\n", "return 1");
	redisContext *c = redisConnect("127.0.0.1", port);
	uint64_t start, end, total = 0, *gaps, sum = 0;
	long n, m = 0;

	if (sh == MAP_FAILED || c == NULL || c->err) {
		fprintf(stderr, "floor: cannot connect to 127.0.0.1:%d\n", port);
		return 1;
	}
	f_run(c, "DEL floor:tok", NULL);
	f_run(c, "RPUSH floor:tok x", NULL);
	start = f_now() + 100000000ull;
	end = start + (uint64_t) (seconds * 1e9);
	for (int p = 0; p < F_PROCS; p++) {
		if (fork() != 0) {
			continue;
		}
		c = redisConnect("127.0.0.1", port);
		while (f_now() < start) {
			usleep(1000);
		}
		for (;;) {
			uint64_t got, done;
			long k;

			if (calls >= 0) {
				f_run(c, "EVAL %s 0", join);
			}
			f_run(c, "BLPOP floor:tok 0", NULL);
			got = f_now();
			if (got >= end) {
				f_run(c, "RPUSH floor:tok x", NULL);
				break;
			}
			while (f_now() < got + F_HOLD_NS) {
				/* Busy: the hold is work. */
			}
			done = f_now();
			sh->held[p] += (done < end ? done : end) - got;
			k = __sync_fetch_and_add(&sh->n, 1);
			if (k < F_MAX_HOLDS) {
				sh->at[k][0] = got;
				sh->at[k][1] = done;
			}
			if (calls >= 0) {
				f_run(c, "EVAL %s 0", give);
			} else {
				f_run(c, "RPUSH floor:tok x", NULL);
			}
			usleep(F_WORK_US);
		}
		_exit(0);
	}
	while (wait(NULL) > 0) {
	}
	for (int p = 0; p < F_PROCS; p++) {
		total += sh->held[p];
	}
	n = sh->n < F_MAX_HOLDS ? sh->n : F_MAX_HOLDS;
	qsort(sh->at, (size_t) n, sizeof(sh->at[0]), f_cmp);
	gaps = malloc(sizeof(*gaps) * (size_t) (n > 0 ? n : 1));
	for (long i = 1; i < n; i++) {
		gaps[m] = sh->at[i][0] - sh->at[i - 1][1];
		sum += gaps[m++];
	}
	qsort(gaps, (size_t) m, sizeof(*gaps), f_cmp);
	printf("calls %d: utilisation %.1f%%", calls, 100.0 * (double) total / (seconds * 1e9));
	if (m > 0) {
		printf(", gap between holds p10 %.0f us, p50 %.0f us, p90 %.0f us, mean %.0f us", gaps[m / 10] / 1e3,
			gaps[m / 2] / 1e3, gaps[m * 9 / 10] / 1e3, (double) sum / (double) m / 1e3);
	}
	printf("\n");
	return 0;
}
