/*
 * A measurement of the Redis store's topologies, run by hand (not a test):
 * acquire+release cycles (one attempt, a TTL) in interleaved rounds, medians:
 *   - a standalone server;
 *   - the master of a Sentinel group, addressed directly (a plain store),
 *     and through the sentinels (a Sentinel store): the same server, so the
 *     ratio is what the topology costs the client;
 *   - a master of a three-master cluster, addressed directly on resources of
 *     its own slots, and through the cluster store on the same resources;
 *     then the cluster store on resources spread over all slots.
 * Discovery happens once, in a warm-up: the rounds show what routing costs
 * once the master of a slot is known. Servers with replicas do more work per
 * write than a standalone one (they feed the replicas): compare a topology
 * with its own master addressed directly. It starts its own servers. Build
 * and run from bench/ (the Redis store's files of the core, without PostgreSQL's):
 *   cc -std=c11 -O2 -D_GNU_SOURCE $(pkg-config --cflags hiredis openssl) -o /tmp/measure_topo \
 *     measure_redis_topology.c $(ls ../ext/core/lkc*.c | grep -v pgsql) $(pkg-config --libs hiredis openssl) -lpthread
 *   /tmp/measure_topo [rounds] [cycles]
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "../tests/core/t.h"
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../tests/core/redis_topo.h"
#include "../ext/core/lkc_redis_topo.h"

#include <stdint.h>

int t_failed;
int t_checks;

/* A store of topology kind over the servers on ports; password: the server's (or the master's). */
static lkc_store *m_open(lkc_redis_topology kind, const int *ports, size_t n, const char *password)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	lkc_redis_config_init(&cfg);
	cfg.topology = kind;
	if (kind == LKC_REDIS_SINGLE) {
		cfg.port = ports[0];
	} else {
		cfg.seeds = calloc(n, sizeof(*cfg.seeds));
		cfg.nseeds = n;
		for (size_t i = 0; i < n; i++) {
			cfg.seeds[i].host = strdup("127.0.0.1");
			cfg.seeds[i].port = ports[i];
		}
	}
	if (kind == LKC_REDIS_SENTINEL) {
		cfg.master_name = strdup("mymaster");
		cfg.sentinel_password = strdup(T_SENTINEL_PASSWORD);
	}
	if (password != NULL) {
		cfg.password = strdup(password);
	}
	cfg.prefix = strdup("bench:");
	cfg.prefix_len = 6;
	if (lkc_redis_open(&store, &cfg, &err) != LKC_OK) {
		fprintf(stderr, "open: %s\n", err.msg);
		exit(1);
	}
	return store;
}

/* Cycles per second of cycles acquire+release over the 64 resources named. */
static double m_round(lkc_store *store, char names[64][16], int cycles)
{
	lkc_hold holds[64];
	lkc_err err;
	uint64_t t0;

	for (int i = 0; i < 64; i++) {
		lkc_hold_init(&holds[i], names[i], strlen(names[i]), &err);
	}
	t0 = lkc_now_ns();
	for (int i = 0; i < cycles; i++) {
		lkc_hold *h = &holds[i % 64];

		if (lkc_acquire(store, h, LKC_MODE_EXCLUSIVE, 10000, 0, &err) != LKC_OK
			|| lkc_release(store, h, 0, &err) != LKC_OK) {
			fprintf(stderr, "cycle: %s\n", err.msg);
			exit(1);
		}
	}
	for (int i = 0; i < 64; i++) {
		lkc_hold_dispose(&holds[i]);
	}
	return cycles / ((double) (lkc_now_ns() - t0) / 1e9);
}

static int m_cmp(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	enum { M_KINDS = 6 };
	int rounds = argc > 1 ? atoi(argv[1]) : 7, cycles = argc > 2 ? atoi(argv[2]) : 3000;
	static const char *labels[M_KINDS] = {
		"standalone server", "Sentinel's master, plain store", "Sentinel store",
		"cluster master, plain store", "Cluster store, same resources", "Cluster store, all slots",
	};
	static t_redis single;
	static t_sentinel_group group;
	static t_cluster cluster;
	static char spread[64][16], local[64][16];
	static double rates[M_KINDS][64];
	lkc_store *stores[M_KINDS];
	char (*names[M_KINDS])[16];
	int sports[3], master_port, cport;
	t_redis *cmaster;

	if (rounds < 1 || rounds > 64 || t_node_start(&single, NULL, NULL, NULL) != 0 || t_sentinel_start(&group) != 0
		|| t_cluster_start(&cluster) != 0) {
		fprintf(stderr, "cannot start the servers\n");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		sports[i] = group.sentinels[i].port;
	}
	master_port = t_sentinel_master_port(&group);
	cmaster = t_cluster_master_of(&cluster, &cluster.nodes[0], 0);
	cport = cmaster->port;
	for (int i = 0, n = 0; n < 64; i++) {
		char key[32];

		if (i < 64) {
			snprintf(spread[i], 16, "r%d", i);
		}
		snprintf(key, sizeof(key), "bench:{r%d}", i);
		if (t_cluster_master_of(&cluster, &cluster.nodes[0], lkc_rtopo_slot(key, strlen(key))) == cmaster) {
			snprintf(local[n++], 16, "r%d", i);
		}
	}
	stores[0] = m_open(LKC_REDIS_SINGLE, &single.port, 1, NULL);
	stores[1] = m_open(LKC_REDIS_SINGLE, &master_port, 1, T_MASTER_PASSWORD);
	stores[2] = m_open(LKC_REDIS_SENTINEL, sports, 3, T_MASTER_PASSWORD);
	stores[3] = m_open(LKC_REDIS_SINGLE, &cport, 1, NULL);
	stores[4] = m_open(LKC_REDIS_CLUSTER, &cluster.nodes[0].port, 1, NULL);
	stores[5] = m_open(LKC_REDIS_CLUSTER, &cluster.nodes[0].port, 1, NULL);
	for (int k = 0; k < M_KINDS; k++) {
		names[k] = k == 3 || k == 4 ? local : spread;
		m_round(stores[k], names[k], 500);
	}
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < M_KINDS; k++) {
			rates[k][r] = m_round(stores[k], names[k], cycles);
		}
	}
	printf("acquire+release cycles/s, median of %d rounds of %d (64 resources):\n", rounds, cycles);
	for (int k = 0; k < M_KINDS; k++) {
		qsort(rates[k], (size_t) rounds, sizeof(double), m_cmp);
	}
	for (int k = 0; k < M_KINDS; k++) {
		double base = k == 2 ? rates[1][rounds / 2] : k >= 4 ? rates[3][rounds / 2] : rates[k][rounds / 2];

		printf("  %-31s %8.0f  (%.3fx %s)\n", labels[k], rates[k][rounds / 2], rates[k][rounds / 2] / base,
			k == 2 ? "its master direct" : k >= 4 ? "that master direct" : "itself");
		stores[k]->ops->destroy(stores[k]);
	}
	lkc_redis_pool_shutdown();
	t_node_stop(&single);
	t_sentinel_stop(&group);
	t_cluster_stop(&cluster);
	return 0;
}
