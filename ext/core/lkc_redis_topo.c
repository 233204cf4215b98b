/*
 * The topology layer of the Redis store (see lkc_redis_topo.h): the nodes,
 * the Sentinel's master, the cluster's slot map, and what replies say.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_topo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node's name: "host:port", an IPv6 address in brackets. */
static char *lkc_rtopo_name(const char *host, int port)
{
	int v6 = strchr(host, ':') != NULL;
	size_t size = strlen(host) + 16;
	char *name = malloc(size);

	if (name != NULL) {
		snprintf(name, size, v6 ? "[%s]:%d" : "%s:%d", host, port);
	}
	return name;
}

int lkc_rtopo_add(lkc_rtopo *t, const char *host, size_t host_len, int port)
{
	lkc_rtopo_node *n;

	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].port == port && strlen(t->nodes[i].host) == host_len
			&& memcmp(t->nodes[i].host, host, host_len) == 0) {
			return i;
		}
	}
	if (t->nnodes >= LKC_RTOPO_NODES_MAX || memchr(host, '\0', host_len) != NULL) {
		return -1;
	}
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->host = malloc(host_len + 1);
	if (n->host == NULL) {
		return -1;
	}
	memcpy(n->host, host, host_len);
	n->host[host_len] = '\0';
	n->port = port;
	n->name = lkc_rtopo_name(n->host, port);
	if (n->name == NULL) {
		free(n->host);
		return -1;
	}
	return t->nnodes++;
}

lkc_rc lkc_rtopo_init(lkc_rtopo *t, const lkc_redis_config *cfg, lkc_err *err)
{
	memset(t, 0, sizeof(*t));
	t->kind = cfg->topology;
	t->master = -1;
	if (t->kind == LKC_REDIS_SINGLE) {
		return LKC_OK;
	}
	for (size_t i = 0; i < cfg->nseeds; i++) {
		if (lkc_rtopo_add(t, cfg->seeds[i].host, strlen(cfg->seeds[i].host), cfg->seeds[i].port) < 0) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory");
		}
	}
	t->nseeds = t->nnodes;
	return LKC_OK;
}

void lkc_rtopo_free(lkc_rtopo *t)
{
	for (int i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].host);
		free(t->nodes[i].name);
		free(t->nodes[i].pool_key);
	}
	t->nnodes = 0;
	free(t->slots);
	t->slots = NULL;
}

/* CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with. */
static unsigned lkc_rtopo_crc16(const unsigned char *p, size_t len)
{
	unsigned crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned) p[i] << 8;
		for (int b = 0; b < 8; b++) {
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		}
	}
	return crc & 0xffff;
}

unsigned lkc_rtopo_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len);

	if (open != NULL) {
		size_t from = (size_t) (open - key) + 1;
		const char *close = memchr(key + from, '}', len - from);

		/* "{}" is no tag: the whole key is hashed then. */
		if (close != NULL && close > key + from) {
			return lkc_rtopo_crc16((const unsigned char *) key + from, (size_t) (close - key) - from) & (LKC_RTOPO_SLOTS - 1);
		}
	}
	return lkc_rtopo_crc16((const unsigned char *) key, len) & (LKC_RTOPO_SLOTS - 1);
}

int lkc_rtopo_target(const lkc_rtopo *t, const char *key, size_t len)
{
	switch (t->kind) {
		case LKC_REDIS_SINGLE:
			return 0;
		case LKC_REDIS_SENTINEL:
			return t->master;
		default:
			return t->slots != NULL && !t->stale ? t->slots[lkc_rtopo_slot(key, len)] : -1;
	}
}

void lkc_rtopo_forget(lkc_rtopo *t)
{
	t->master = -1;
	t->stale = 1;
}

/* Reads an integer reply, or -1. */
static long long lkc_rtopo_int(const redisReply *r)
{
	return r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
}

int lkc_rtopo_read_slots(lkc_rtopo *t, const redisReply *reply, int from)
{
	int16_t *slots;
	int any = 0;

	if (reply->type != REDIS_REPLY_ARRAY) {
		return -1;
	}
	slots = malloc(LKC_RTOPO_SLOTS * sizeof(*slots));
	if (slots == NULL) {
		return -1;
	}
	for (int i = 0; i < LKC_RTOPO_SLOTS; i++) {
		slots[i] = -1;
	}
	/* Each element: first slot, last slot, the master [host, port, id, ...], then its replicas. */
	for (size_t i = 0; i < reply->elements; i++) {
		const redisReply *range = reply->element[i], *master;
		long long first, last;
		const char *host;
		size_t host_len;
		int node;

		if (range->type != REDIS_REPLY_ARRAY || range->elements < 3) {
			continue;
		}
		first = lkc_rtopo_int(range->element[0]);
		last = lkc_rtopo_int(range->element[1]);
		master = range->element[2];
		if (first < 0 || last < first || last >= LKC_RTOPO_SLOTS || master->type != REDIS_REPLY_ARRAY
			|| master->elements < 2 || master->element[0]->type != REDIS_REPLY_STRING
			|| lkc_rtopo_int(master->element[1]) < 1 || lkc_rtopo_int(master->element[1]) > 65535) {
			continue;
		}
		host = master->element[0]->str;
		host_len = master->element[0]->len;
		/* An unknown endpoint ("" or "?") is the node that answered. */
		if ((host_len == 0 || (host_len == 1 && host[0] == '?')) && from >= 0) {
			host = t->nodes[from].host;
			host_len = strlen(host);
		}
		node = lkc_rtopo_add(t, host, host_len, (int) master->element[1]->integer);
		if (node < 0) {
			continue;
		}
		for (long long s = first; s <= last; s++) {
			slots[s] = (int16_t) node;
		}
		any = 1;
	}
	if (!any) {
		free(slots);
		return -1;
	}
	free(t->slots);
	t->slots = slots;
	t->stale = 0;
	return 0;
}

int lkc_rtopo_read_master(lkc_rtopo *t, const redisReply *reply)
{
	char *end;
	long port;
	char digits[16];

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_STRING
		|| reply->element[1]->type != REDIS_REPLY_STRING || reply->element[1]->len == 0
		|| reply->element[1]->len >= sizeof(digits) || reply->element[0]->len == 0) {
		return -1;
	}
	memcpy(digits, reply->element[1]->str, reply->element[1]->len);
	digits[reply->element[1]->len] = '\0';
	port = strtol(digits, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535) {
		return -1;
	}
	t->master = lkc_rtopo_add(t, reply->element[0]->str, reply->element[0]->len, (int) port);
	return t->master;
}

int lkc_rtopo_is_master(const redisReply *reply)
{
	return reply->type == REDIS_REPLY_ARRAY && reply->elements > 0
		&& (reply->element[0]->type == REDIS_REPLY_STRING || reply->element[0]->type == REDIS_REPLY_STATUS)
		&& reply->element[0]->len == 6 && memcmp(reply->element[0]->str, "master", 6) == 0;
}

/* Whether an error reply starts with the word w (followed by a space or its end). */
static int lkc_rtopo_says(const redisReply *reply, const char *w)
{
	size_t len = strlen(w);

	return reply->len >= len && memcmp(reply->str, w, len) == 0 && (reply->len == len || reply->str[len] == ' ');
}

/* Reads "SLOT HOST:PORT" after MOVED or ASK into *slot and a node; -1 when unreadable. */
static int lkc_rtopo_read_where(lkc_rtopo *t, const char *p, size_t len, long *slot)
{
	char text[320];
	char *colon, *end;
	long port;

	if (len >= sizeof(text)) {
		return -1;
	}
	memcpy(text, p, len);
	text[len] = '\0';
	*slot = strtol(text, &end, 10);
	if (end == text || *end != ' ' || *slot < 0 || *slot >= LKC_RTOPO_SLOTS) {
		return -1;
	}
	end++;
	colon = strrchr(end, ':');
	if (colon == NULL) {
		return -1;
	}
	port = strtol(colon + 1, NULL, 10);
	if (port < 1 || port > 65535) {
		return -1;
	}
	/* An IPv6 host may come in brackets or bare. */
	if (end[0] == '[' && colon > end && colon[-1] == ']') {
		return lkc_rtopo_add(t, end + 1, (size_t) (colon - end) - 2, (int) port);
	}
	return lkc_rtopo_add(t, end, (size_t) (colon - end), (int) port);
}

lkc_rtopo_redirect lkc_rtopo_redirect_of(lkc_rtopo *t, const redisReply *reply, int *node)
{
	long slot;

	*node = -1;
	if (reply->type != REDIS_REPLY_ERROR || t->kind == LKC_REDIS_SINGLE) {
		return LKC_RTOPO_HERE;
	}
	/* A blocked command ended because its server became a replica popped nothing: as READONLY. */
	if (lkc_rtopo_says(reply, "READONLY") || lkc_rtopo_says(reply, "UNBLOCKED")) {
		return LKC_RTOPO_READONLY;
	}
	if (t->kind != LKC_REDIS_CLUSTER) {
		return LKC_RTOPO_HERE;
	}
	if (reply->len > 40 && strstr(reply->str, "Script attempted to access a non local key") != NULL) {
		return LKC_RTOPO_SPLIT;
	}
	if (lkc_rtopo_says(reply, "TRYAGAIN") || lkc_rtopo_says(reply, "CLUSTERDOWN")) {
		return LKC_RTOPO_TRYAGAIN;
	}
	if (lkc_rtopo_says(reply, "MOVED")) {
		*node = lkc_rtopo_read_where(t, reply->str + 6, reply->len - 6, &slot);
		if (*node < 0) {
			return LKC_RTOPO_HERE;
		}
		if (t->slots != NULL) {
			t->slots[slot] = (int16_t) *node;
		}
		return LKC_RTOPO_MOVED;
	}
	if (lkc_rtopo_says(reply, "ASK")) {
		*node = lkc_rtopo_read_where(t, reply->str + 4, reply->len - 4, &slot);
		return *node < 0 ? LKC_RTOPO_HERE : LKC_RTOPO_ASK;
	}
	return LKC_RTOPO_HERE;
}

/*
 * What the stores of this process found out, for the next store with the
 * same settings: a Sentinel's master, a cluster's map. A hint only: a store
 * that meets an error with it finds out anew.
 */
typedef struct {
	char *key;
	size_t key_len;
	lkc_redis_topology kind;
	int nnodes;
	char **hosts;            /* the nodes the entry names, and their ports */
	int *ports;
	int master;              /* Sentinel: the master among them */
	uint64_t checked_ns;     /* Sentinel: when the sentinels named it */
	int16_t *slots;          /* Cluster: the node of each slot's master */
	unsigned long used;      /* when it was last remembered or recalled, for evicting the oldest */
} lkc_rtopo_known;

#define LKC_RTOPO_KNOWN_MAX 16

static lkc_rtopo_known lkc_rtopo_cache[LKC_RTOPO_KNOWN_MAX];
static unsigned long lkc_rtopo_clock;
static pthread_mutex_t lkc_rtopo_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void lkc_rtopo_known_free(lkc_rtopo_known *k)
{
	for (int i = 0; i < k->nnodes; i++) {
		free(k->hosts[i]);
	}
	free(k->hosts);
	free(k->ports);
	free(k->slots);
	free(k->key);
	memset(k, 0, sizeof(*k));
}

void lkc_rtopo_remember(const lkc_rtopo *t, const char *key, size_t key_len)
{
	lkc_rtopo_known fresh, *slot = NULL;
	int oldest = 0;

	if (t->kind == LKC_REDIS_SINGLE || (t->kind == LKC_REDIS_SENTINEL && t->master < 0)
		|| (t->kind == LKC_REDIS_CLUSTER && (t->slots == NULL || t->stale))) {
		return;
	}
	memset(&fresh, 0, sizeof(fresh));
	fresh.kind = t->kind;
	fresh.master = t->master;
	fresh.checked_ns = t->checked_ns;
	fresh.key = malloc(key_len);
	fresh.hosts = calloc((size_t) t->nnodes, sizeof(*fresh.hosts));
	fresh.ports = calloc((size_t) t->nnodes, sizeof(*fresh.ports));
	if (t->kind == LKC_REDIS_CLUSTER) {
		fresh.slots = malloc(LKC_RTOPO_SLOTS * sizeof(*fresh.slots));
	}
	if (fresh.key == NULL || fresh.hosts == NULL || fresh.ports == NULL
		|| (t->kind == LKC_REDIS_CLUSTER && fresh.slots == NULL)) {
		lkc_rtopo_known_free(&fresh);
		return;
	}
	memcpy(fresh.key, key, key_len);
	fresh.key_len = key_len;
	for (int i = 0; i < t->nnodes; i++) {
		fresh.hosts[i] = strdup(t->nodes[i].host);
		fresh.ports[i] = t->nodes[i].port;
		fresh.nnodes = i + 1;
		if (fresh.hosts[i] == NULL) {
			lkc_rtopo_known_free(&fresh);
			return;
		}
	}
	if (fresh.slots != NULL) {
		memcpy(fresh.slots, t->slots, LKC_RTOPO_SLOTS * sizeof(*fresh.slots));
	}
	pthread_mutex_lock(&lkc_rtopo_cache_lock);
	fresh.used = ++lkc_rtopo_clock;
	for (int i = 0; i < LKC_RTOPO_KNOWN_MAX && slot == NULL; i++) {
		lkc_rtopo_known *k = &lkc_rtopo_cache[i];

		if (k->key == NULL || (k->key_len == key_len && memcmp(k->key, key, key_len) == 0)) {
			slot = k;
		} else if (k->used < lkc_rtopo_cache[oldest].used) {
			oldest = i;
		}
	}
	if (slot == NULL) {
		slot = &lkc_rtopo_cache[oldest];
	}
	lkc_rtopo_known_free(slot);
	*slot = fresh;
	pthread_mutex_unlock(&lkc_rtopo_cache_lock);
}

int lkc_rtopo_recall(lkc_rtopo *t, const char *key, size_t key_len)
{
	int found = -1;

	pthread_mutex_lock(&lkc_rtopo_cache_lock);
	for (int i = 0; i < LKC_RTOPO_KNOWN_MAX; i++) {
		lkc_rtopo_known *k = &lkc_rtopo_cache[i];
		int map[LKC_RTOPO_NODES_MAX];
		int ok = 1;

		if (k->key == NULL || k->kind != t->kind || k->key_len != key_len || memcmp(k->key, key, key_len) != 0) {
			continue;
		}
		for (int n = 0; n < k->nnodes && ok; n++) {
			map[n] = lkc_rtopo_add(t, k->hosts[n], strlen(k->hosts[n]), k->ports[n]);
			ok = map[n] >= 0;
		}
		if (ok && k->kind == LKC_REDIS_SENTINEL && k->master >= 0) {
			t->master = map[k->master];
			t->checked_ns = k->checked_ns;
			found = 0;
		} else if (ok && k->kind == LKC_REDIS_CLUSTER) {
			int16_t *slots = malloc(LKC_RTOPO_SLOTS * sizeof(*slots));

			if (slots != NULL) {
				for (int s = 0; s < LKC_RTOPO_SLOTS; s++) {
					slots[s] = k->slots[s] >= 0 ? (int16_t) map[k->slots[s]] : -1;
				}
				free(t->slots);
				t->slots = slots;
				t->stale = 0;
				found = 0;
			}
		}
		k->used = ++lkc_rtopo_clock;
		break;
	}
	pthread_mutex_unlock(&lkc_rtopo_cache_lock);
	return found;
}

void lkc_rtopo_cache_shutdown(void)
{
	pthread_mutex_lock(&lkc_rtopo_cache_lock);
	for (int i = 0; i < LKC_RTOPO_KNOWN_MAX; i++) {
		lkc_rtopo_known_free(&lkc_rtopo_cache[i]);
	}
	pthread_mutex_unlock(&lkc_rtopo_cache_lock);
}
