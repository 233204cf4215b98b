/*
 * The Memcached store's settings: the server list of a DSN and the key of a
 * resource. Plain C without libmemcached, so that it is unit-tested and fuzzed
 * on any build; the store itself is lkc_memcached.c.
 */
#include "lkc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* memcached's limit on a key's length. */
#define LKC_MC_KEY_MAX 250

void lkc_memcached_config_init(lkc_memcached_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->timeout_ms = 1000;
}

void lkc_memcached_config_free(lkc_memcached_config *cfg)
{
	for (size_t i = 0; i < cfg->nservers; i++) {
		free(cfg->servers[i].host);
	}
	free(cfg->servers);
	free(cfg->prefix);
	memset(cfg, 0, sizeof(*cfg));
}

/* Appends host:port to cfg's servers; LKC_ERR_INVALID for a duplicate. */
static lkc_rc lkc_mc_add_server(lkc_memcached_config *cfg, const char *host, size_t len, int port, lkc_err *err)
{
	lkc_memcached_server *grown;

	for (size_t i = 0; i < cfg->nservers; i++) {
		if (cfg->servers[i].port == port && strlen(cfg->servers[i].host) == len
			&& memcmp(cfg->servers[i].host, host, len) == 0) {
			return lkc_err_set(err, LKC_ERR_INVALID, "names the server %.*s:%d twice", (int) (len > 64 ? 64 : len), host, port);
		}
	}
	if (cfg->nservers >= LKC_MC_SERVERS_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "names more than %d servers", LKC_MC_SERVERS_MAX);
	}
	grown = realloc(cfg->servers, (cfg->nservers + 1) * sizeof(*grown));
	if (grown == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	cfg->servers = grown;
	grown[cfg->nservers].host = malloc(len + 1);
	if (grown[cfg->nservers].host == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "out of memory");
	}
	memcpy(grown[cfg->nservers].host, host, len);
	grown[cfg->nservers].host[len] = '\0';
	grown[cfg->nservers].port = port;
	cfg->nservers++;
	return LKC_OK;
}

/* Parses a port of 1 to 65535 from s[0..len). */
static int lkc_mc_port(const char *s, size_t len)
{
	long value = 0;

	if (len == 0 || len > 5) {
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return -1;
		}
		value = value * 10 + (s[i] - '0');
	}
	return value >= 1 && value <= 65535 ? (int) value : -1;
}

lkc_rc lkc_memcached_add_servers(lkc_memcached_config *cfg, const char *list, int default_port, lkc_err *err)
{
	const char *p = list;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t) (end - p) : strlen(p);
		const char *host = p;
		size_t host_len = len;
		int port = default_port;
		size_t item = cfg->nservers + 1;

		if (len == 0) {
			return lkc_err_set(err, LKC_ERR_INVALID, "has an empty server in its list (server %zu)", item);
		}
		if (p[0] == '[') {
			const char *close = memchr(p, ']', len);

			if (close == NULL || close == p + 1) {
				return lkc_err_set(err, LKC_ERR_INVALID, "has an invalid IPv6 address (server %zu)", item);
			}
			host = p + 1;
			host_len = (size_t) (close - p) - 1;
			if ((size_t) (close - p) + 1 < len) {
				if (close[1] != ':' || (port = lkc_mc_port(close + 2, len - (size_t) (close - p) - 2)) < 0) {
					return lkc_err_set(err, LKC_ERR_INVALID, "has an invalid port (server %zu): expected a number from 1 to 65535", item);
				}
			}
		} else {
			const char *colon = memchr(p, ':', len);

			if (colon != NULL) {
				host_len = (size_t) (colon - p);
				if (memchr(colon + 1, ':', len - host_len - 1) != NULL) {
					return lkc_err_set(err, LKC_ERR_INVALID, "has more than one ':' in server %zu: write an IPv6 address in brackets", item);
				}
				if ((port = lkc_mc_port(colon + 1, len - host_len - 1)) < 0) {
					return lkc_err_set(err, LKC_ERR_INVALID, "has an invalid port (server %zu): expected a number from 1 to 65535", item);
				}
			}
			if (host_len == 0) {
				return lkc_err_set(err, LKC_ERR_INVALID, "has an empty host name (server %zu)", item);
			}
		}
		for (size_t i = 0; i < host_len; i++) {
			unsigned char c = (unsigned char) host[i];
			if (c <= 0x20 || c >= 0x7f || c == '/' || c == '@' || c == '?' || c == '[' || c == ']') {
				return lkc_err_set(err, LKC_ERR_INVALID, "has an invalid character in the host name (server %zu)", item);
			}
		}
		if (lkc_mc_add_server(cfg, host, host_len, port, err) != LKC_OK) {
			return err->code;
		}
		if (end == NULL) {
			return LKC_OK;
		}
		p = end + 1;
	}
}

char *lkc_memcached_key(const char *prefix, size_t prefix_len, const char *resource, size_t len, size_t *key_len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[32];
	const unsigned char *src = (const unsigned char *) resource;
	size_t n = len;
	char tag = 'x';
	char *key;

	/* Short names are spelled out in hex ('x'); longer ones become their SHA-256 ('h'): the tags keep them apart. */
	if (prefix_len + 1 + 2 * len > LKC_MC_KEY_MAX) {
		lkc_sha256(resource, len, digest);
		src = digest;
		n = sizeof(digest);
		tag = 'h';
	}
	key = malloc(prefix_len + 1 + 2 * n + 1);
	if (key == NULL) {
		return NULL;
	}
	memcpy(key, prefix, prefix_len);
	key[prefix_len] = tag;
	for (size_t i = 0; i < n; i++) {
		key[prefix_len + 1 + 2 * i] = hex[src[i] >> 4];
		key[prefix_len + 2 + 2 * i] = hex[src[i] & 15];
	}
	*key_len = prefix_len + 1 + 2 * n;
	key[*key_len] = '\0';
	return key;
}
