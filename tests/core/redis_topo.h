/*
 * Throwaway Redis topologies for the C tests: a Sentinel group (a master,
 * two replicas, three sentinels, master name "mymaster") and a cluster
 * (three masters, three replicas), on free loopback ports, killed with the
 * test process at the latest.
 */
#ifndef LKC_T_REDIS_TOPO_H
#define LKC_T_REDIS_TOPO_H

#include "redis_server.h"

/*
 * Starts redis-server on port (a free one when 0) with extra arguments
 * (NULL-terminated), or a sentinel with config file conf when not NULL.
 */
static int t_node_start_on(t_redis *r, int port, const char *conf, const char *const *extra, const char *password)
{
	char port_s[16];
	const char *argv[48];
	int argc = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/lkc-topo-XXXXXX");
	if (mkdtemp(r->dir) == NULL) {
		return -1;
	}
	r->port = port != 0 ? port : t_free_port();
	if (password != NULL) {
		snprintf(r->password, sizeof(r->password), "%s", password);
	}
	snprintf(port_s, sizeof(port_s), "%d", r->port);
	argv[argc++] = "redis-server";
	if (conf != NULL) {
		argv[argc++] = conf;
		argv[argc++] = "--sentinel";
	}
	argv[argc++] = "--port";
	argv[argc++] = port_s;
	argv[argc++] = "--bind";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = "--dir";
	argv[argc++] = r->dir;
	argv[argc++] = "--daemonize";
	argv[argc++] = "no";
	argv[argc++] = "--loglevel";
	argv[argc++] = "warning";
	if (conf == NULL) {
		argv[argc++] = "--save";
		argv[argc++] = "";
		argv[argc++] = "--appendonly";
		argv[argc++] = "no";
	}
	for (int i = 0; extra != NULL && extra[i] != NULL && argc < 46; i++) {
		argv[argc++] = extra[i];
	}
	argv[argc] = NULL;
	r->pid = fork();
	if (r->pid < 0) {
		return -1;
	}
	if (r->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("redis-server", (char *const *) argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (t_redis_ready(r)) {
			return 0;
		}
		t_sleep_ms(20);
	}
	fprintf(stderr, "redis-server on port %d did not answer\n", r->port);
	return -1;
}

static int t_node_start(t_redis *r, const char *conf, const char *const *extra, const char *password)
{
	return t_node_start_on(r, 0, conf, extra, password);
}

/* Kills the node and removes what it wrote. */
static void t_node_stop(t_redis *r)
{
	char cmd[160];

	t_redis_kill(r, SIGKILL);
	if (r->dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
		if (system(cmd) != 0) {
			fprintf(stderr, "cannot remove %s\n", r->dir);
		}
		r->dir[0] = '\0';
	}
}

/*
 * Runs a command on the node's admin connection, connecting again when the
 * last one broke (a sentinel kills the clients of a server it reconfigures).
 */
static redisReply *t_cmd(t_redis *r, const char *fmt, ...)
{
	redisReply *reply = NULL;

	for (int i = 0; i < 2 && reply == NULL; i++) {
		va_list ap;

		if (r->admin != NULL && r->admin->err != 0) {
			redisFree(r->admin);
			r->admin = NULL;
		}
		if (r->admin == NULL && !t_redis_ready(r)) {
			continue;
		}
		va_start(ap, fmt);
		reply = redisvCommand(r->admin, fmt, ap);
		va_end(ap);
	}
	return reply;
}

/* As t_cmd for a command that answers an integer: it, or LLONG_MIN on any other answer. */
static long long t_int(t_redis *r, const char *fmt, ...)
{
	redisReply *reply = NULL;
	long long v = -9223372036854775807LL - 1;

	for (int i = 0; i < 2 && reply == NULL; i++) {
		va_list ap;

		if (r->admin != NULL && r->admin->err != 0) {
			redisFree(r->admin);
			r->admin = NULL;
		}
		if (r->admin == NULL && !t_redis_ready(r)) {
			continue;
		}
		va_start(ap, fmt);
		reply = redisvCommand(r->admin, fmt, ap);
		va_end(ap);
	}
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER) {
		v = reply->integer;
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return v;
}

/* Whether a reply to INFO or CLUSTER INFO holds text. */
static int t_reply_has(t_redis *r, const char *cmd, const char *text)
{
	redisReply *reply = t_cmd(r, cmd);
	int has = reply != NULL && reply->type == REDIS_REPLY_STRING && strstr(reply->str, text) != NULL;

	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return has;
}

#define T_SENTINEL_PASSWORD "sentinel-secret"
#define T_MASTER_PASSWORD "master-secret"

typedef struct {
	t_redis data[3];         /* data[0] starts as the master */
	t_redis sentinels[3];
} t_sentinel_group;

/* The port of the master the sentinels name now, per the first sentinel that answers; 0 when none does. */
static int t_sentinel_master_port(t_sentinel_group *g)
{
	for (int i = 0; i < 3; i++) {
		redisReply *reply;
		int port = 0;

		if (g->sentinels[i].pid <= 0) {
			continue;
		}
		reply = t_cmd(&g->sentinels[i], "SENTINEL get-master-addr-by-name mymaster");
		if (reply != NULL && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2) {
			port = atoi(reply->element[1]->str);
		}
		if (reply != NULL) {
			freeReplyObject(reply);
		}
		if (port > 0) {
			return port;
		}
	}
	return 0;
}

/* The data node on port, or NULL. */
static t_redis *t_sentinel_node(t_sentinel_group *g, int port)
{
	for (int i = 0; i < 3; i++) {
		if (g->data[i].port == port) {
			return &g->data[i];
		}
	}
	return NULL;
}

/* Waits until every sentinel knows the two replicas and the other sentinels (a failover needs them). */
static int t_sentinel_settled(t_sentinel_group *g, long ms)
{
	for (long waited = 0; waited < ms; waited += 100) {
		int ok = 1;

		for (int i = 0; i < 3 && ok; i++) {
			ok = t_reply_has(&g->sentinels[i], "INFO sentinel", "slaves=2,sentinels=3");
		}
		if (ok) {
			return 0;
		}
		t_sleep_ms(100);
	}
	return -1;
}

/* Starts the group: every data node requires T_MASTER_PASSWORD, every sentinel T_SENTINEL_PASSWORD. */
static int t_sentinel_start(t_sentinel_group *g)
{
	const char *master[] = { "--requirepass", T_MASTER_PASSWORD, "--masterauth", T_MASTER_PASSWORD, NULL };
	char port_s[16];
	const char *replica[] = { "--requirepass", T_MASTER_PASSWORD, "--masterauth", T_MASTER_PASSWORD,
		"--replicaof", "127.0.0.1", port_s, NULL };

	memset(g, 0, sizeof(*g));
	if (t_node_start(&g->data[0], NULL, master, T_MASTER_PASSWORD) != 0) {
		return -1;
	}
	snprintf(port_s, sizeof(port_s), "%d", g->data[0].port);
	for (int i = 1; i < 3; i++) {
		if (t_node_start(&g->data[i], NULL, replica, T_MASTER_PASSWORD) != 0) {
			return -1;
		}
	}
	for (int i = 0; i < 3; i++) {
		char conf[160];
		FILE *f;
		t_redis *s = &g->sentinels[i];

		/* The config file goes beside the sentinel's own directory, which t_node_start makes. */
		snprintf(conf, sizeof(conf), "/tmp/lkc-sentinel-%d-%d.conf", (int) getpid(), i);
		f = fopen(conf, "w");
		if (f == NULL) {
			return -1;
		}
		fprintf(f, "sentinel monitor mymaster 127.0.0.1 %d 2\n"
			"sentinel down-after-milliseconds mymaster 3000\n"
			"sentinel failover-timeout mymaster 3000\n"
			"sentinel parallel-syncs mymaster 2\n"
			"sentinel auth-pass mymaster " T_MASTER_PASSWORD "\n"
			"requirepass " T_SENTINEL_PASSWORD "\n"
			"sentinel sentinel-pass " T_SENTINEL_PASSWORD "\n", g->data[0].port);
		fclose(f);
		if (t_node_start(s, conf, NULL, T_SENTINEL_PASSWORD) != 0) {
			return -1;
		}
	}
	return t_sentinel_settled(g, 20000);
}

/* Stops the group and removes the sentinels' config files. */
static void t_sentinel_stop(t_sentinel_group *g)
{
	for (int i = 0; i < 3; i++) {
		char conf[160];

		t_node_stop(&g->sentinels[i]);
		t_node_stop(&g->data[i]);
		snprintf(conf, sizeof(conf), "/tmp/lkc-sentinel-%d-%d.conf", (int) getpid(), i);
		unlink(conf);
	}
}

typedef struct {
	t_redis nodes[6];
} t_cluster;

/* The node on port, or NULL. */
static t_redis *t_cluster_node(t_cluster *c, int port)
{
	for (int i = 0; i < 6; i++) {
		if (c->nodes[i].port == port) {
			return &c->nodes[i];
		}
	}
	return NULL;
}

/* The node whose CLUSTER SLOTS names it master of slot, per node asker; NULL when unknown. */
static t_redis *t_cluster_master_of(t_cluster *c, t_redis *asker, unsigned slot)
{
	redisReply *reply = t_cmd(asker, "CLUSTER SLOTS");
	t_redis *found = NULL;

	for (size_t i = 0; reply != NULL && reply->type == REDIS_REPLY_ARRAY && i < reply->elements; i++) {
		redisReply *range = reply->element[i];

		if (range->element[0]->integer <= (long long) slot && (long long) slot <= range->element[1]->integer) {
			found = t_cluster_node(c, (int) range->element[2]->element[1]->integer);
		}
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return found;
}

/* Waits until every live node says the cluster is ok and agrees on who serves slot. */
static int t_cluster_settled(t_cluster *c, unsigned slot, long ms)
{
	for (long waited = 0; waited < ms; waited += 100) {
		t_redis *first = NULL;
		int ok = 1;

		for (int i = 0; i < 6 && ok; i++) {
			t_redis *m;

			if (c->nodes[i].pid <= 0) {
				continue;
			}
			m = t_cluster_master_of(c, &c->nodes[i], slot);
			ok = t_reply_has(&c->nodes[i], "CLUSTER INFO", "cluster_state:ok") && m != NULL
				&& (first == NULL || m == first);
			first = m;
		}
		if (ok) {
			return 0;
		}
		t_sleep_ms(100);
	}
	return -1;
}

/* Starts six cluster nodes and makes them three masters with a replica each. */
static int t_cluster_start(t_cluster *c)
{
	char cmd[512];
	size_t used;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 6; i++) {
		/* The nodes file goes into the node's own directory (its working directory). */
		char bus[16];
		const char *extra[] = { "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-port", bus, NULL };

		/* A free port of its own for the cluster bus (port + 10000 may be taken or out of range). */
		snprintf(bus, sizeof(bus), "%d", t_free_port());

		if (t_node_start(&c->nodes[i], NULL, extra, NULL) != 0) {
			return -1;
		}
	}
	used = (size_t) snprintf(cmd, sizeof(cmd), "redis-cli --cluster create");
	for (int i = 0; i < 6; i++) {
		used += (size_t) snprintf(cmd + used, sizeof(cmd) - used, " 127.0.0.1:%d", c->nodes[i].port);
	}
	snprintf(cmd + used, sizeof(cmd) - used, " --cluster-replicas 1 --cluster-yes >/dev/null 2>&1");
	if (system(cmd) != 0) {
		fprintf(stderr, "redis-cli --cluster create failed\n");
		return -1;
	}
	for (unsigned slot = 0; slot < 16384; slot += 5461) {
		if (t_cluster_settled(c, slot, 20000) != 0) {
			fprintf(stderr, "the cluster did not settle\n");
			return -1;
		}
	}
	return 0;
}

static void t_cluster_stop(t_cluster *c)
{
	for (int i = 0; i < 6; i++) {
		t_node_stop(&c->nodes[i]);
	}
}

/* A node's cluster id (CLUSTER MYID) into id (41 bytes). */
static void t_cluster_id(t_redis *r, char id[41])
{
	redisReply *reply = t_cmd(r, "CLUSTER MYID");

	id[0] = '\0';
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40) {
		memcpy(id, reply->str, 41);
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
}

#endif
