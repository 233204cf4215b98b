/*
 * The topology layer of the Redis store: which server gets the commands of a
 * resource's key. One server: the configured one. Sentinel: the master the
 * sentinels name, until a server says it no longer is. Cluster: the master
 * of the key's slot in the slot map, which MOVED replies correct.
 *
 * This layer keeps the nodes and what is known of them, reads what servers
 * answer (CLUSTER SLOTS, SENTINEL get-master-addr-by-name, MOVED, ASK, ...)
 * and does no I/O: the store asks and connects (lkc_redis_route.c). Looking
 * up a known target is a few array reads, a slot a CRC16 of the key.
 */
#ifndef LKC_REDIS_TOPO_H
#define LKC_REDIS_TOPO_H

#include "lkc.h"

#include <hiredis/hiredis.h>

/* The slots of a Redis Cluster. */
#define LKC_RTOPO_SLOTS 16384
/* Nodes a store keeps track of; a cluster map naming more is refused. */
#define LKC_RTOPO_NODES_MAX 256

/* A server the store may send commands to. */
typedef struct {
	char *host;
	int port;
	char *name;              /* "host:port" ("[v6]:port"), for messages and pool keys */
	char *pool_key;          /* what a pooled connection to it must match (set by the store), NULL until needed */
	size_t pool_key_len;
} lkc_rtopo_node;

typedef struct {
	lkc_redis_topology kind;
	lkc_rtopo_node nodes[LKC_RTOPO_NODES_MAX];
	int nnodes;              /* the seeds come first, in the configured order */
	int nseeds;
	int master;              /* Sentinel: the node of the master, -1 while unknown */
	int16_t *slots;          /* Cluster: the node of each slot's master, -1 unknown; NULL until a map was read */
	int stale;               /* Cluster: read the map again before the next command */
	uint64_t checked_ns;     /* Sentinel: when the sentinels last named the master (monotonic) */
} lkc_rtopo;

/* What an error reply says about where a command should go. */
typedef enum {
	LKC_RTOPO_HERE = 0,      /* nothing: the reply is the command's own */
	LKC_RTOPO_MOVED,         /* the slot is served elsewhere (the map is updated): send it there */
	LKC_RTOPO_ASK,           /* this once, ASKING then the command on the node named */
	LKC_RTOPO_TRYAGAIN,      /* the slot is being migrated or the cluster is down: wait a little, send again */
	LKC_RTOPO_READONLY,      /* a replica (a demoted master) answered, or unblocked a BLPOP: find the master again */
	LKC_RTOPO_SPLIT          /* a script met a key of its slot that is elsewhere mid-migration: it may have run in part */
} lkc_rtopo_redirect;

/* Starts the topology of cfg (its seeds, or the single server). LKC_ERR_SYSTEM when out of memory. */
lkc_rc lkc_rtopo_init(lkc_rtopo *t, const lkc_redis_config *cfg, lkc_err *err);
void lkc_rtopo_free(lkc_rtopo *t);
/* The cluster slot of a key, as Redis computes it: CRC16 of its hash tag (or the whole key) mod 16384. */
unsigned lkc_rtopo_slot(const char *key, size_t len);
/* The index of the node host:port (added when new), or -1 when the table is full or memory is out. */
int lkc_rtopo_add(lkc_rtopo *t, const char *host, size_t host_len, int port);
/* The node that gets the commands of key, or -1 when it must be found first (a Sentinel's master, a cluster's map). */
int lkc_rtopo_target(const lkc_rtopo *t, const char *key, size_t len);
/* Forgets what a failure made doubtful: the master of a Sentinel, a cluster's map (read again on next use). */
void lkc_rtopo_forget(lkc_rtopo *t);
/*
 * Reads a CLUSTER SLOTS reply into the map; from is the node that answered
 * (its host stands for a node named with an empty host). 0, or -1 when the
 * reply is not a slot map or names no master.
 */
int lkc_rtopo_read_slots(lkc_rtopo *t, const redisReply *reply, int from);
/* Reads SENTINEL get-master-addr-by-name's reply: the master's node, or -1 (nil: the sentinel does not know it). */
int lkc_rtopo_read_master(lkc_rtopo *t, const redisReply *reply);
/* Whether ROLE's reply says master. */
int lkc_rtopo_is_master(const redisReply *reply);
/*
 * What an error reply asks for (LKC_RTOPO_HERE for any other reply); a MOVED
 * updates the map, and *node is the node that MOVED or ASK names (-1 none).
 */
lkc_rtopo_redirect lkc_rtopo_redirect_of(lkc_rtopo *t, const redisReply *reply, int *node);

/*
 * A process-wide memory of what stores found (a Sentinel's master, a
 * cluster's map) under key, their settings: a new store with the same
 * settings starts from it (a per-request store of a persistent process finds
 * nothing out again). Remembering a topology that knows nothing does nothing;
 * recall answers 0 when it filled t.
 */
void lkc_rtopo_remember(const lkc_rtopo *t, const char *key, size_t key_len);
int lkc_rtopo_recall(lkc_rtopo *t, const char *key, size_t key_len);
/* Forgets everything remembered (module shutdown). */
void lkc_rtopo_cache_shutdown(void);

#endif
