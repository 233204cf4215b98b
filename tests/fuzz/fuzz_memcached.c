/*
 * libFuzzer harness of the Memcached store's settings: server lists
 * (lkc_memcached_add_servers) and resource keys (lkc_memcached_key).
 *
 * A server list either parses into hosts without a space, control byte, '/',
 * '@' or '?' and ports from 1 to 65535, none twice, or fails with a message; a
 * key is always a valid memcached key (1 to 250 bytes, nothing at or below a
 * space, no DEL) that begins with the prefix, and two different resources never
 * share one.
 *
 * The input: the first byte says where the first part ends; the first part is
 * a server list (and, cut to a valid prefix, the prefix), the rest a resource.
 */
#include "fuzz.h"

/* Asserts that key[0..len) is a valid memcached key starting with prefix. */
static void check_key(const char *key, size_t len, const char *prefix, size_t prefix_len)
{
	FUZZ_CHECK(len >= 1 && len <= 250);
	FUZZ_CHECK(strlen(key) == len);
	FUZZ_CHECK(memcmp(key, prefix, prefix_len) == 0);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char) key[i];

		FUZZ_CHECK(c > 0x20 && c != 0x7f);
	}
}

/* libFuzzer's entry point: checks one input against every property above. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lkc_memcached_config cfg;
	char prefix[LKC_MC_PREFIX_MAX + 1];
	size_t split, len1, len2, prefix_len = 0, klen1, klen2;
	char *first, *resource, *key1, *key2;
	lkc_err err;

	if (size == 0) {
		return 0;
	}
	split = data[0];
	len1 = split < size - 1 ? split : size - 1;
	len2 = size - 1 - len1;
	first = fuzz_copy(data + 1, len1);
	resource = fuzz_copy(data + 1 + len1, len2);

	if (memchr(first, '\0', len1) == NULL) {
		char *list = malloc(len1 + 1);

		FUZZ_CHECK(list != NULL);
		memcpy(list, first, len1);
		list[len1] = '\0';
		lkc_memcached_config_init(&cfg);
		lkc_err_clear(&err);
		if (lkc_memcached_add_servers(&cfg, list, 11211, &err) == LKC_OK) {
			FUZZ_CHECK(cfg.nservers >= 1 && cfg.nservers <= LKC_MC_SERVERS_MAX);
			for (size_t i = 0; i < cfg.nservers; i++) {
				const char *h = cfg.servers[i].host;

				FUZZ_CHECK(h[0] != '\0');
				FUZZ_CHECK(cfg.servers[i].port >= 1 && cfg.servers[i].port <= 65535);
				for (const char *c = h; *c != '\0'; c++) {
					FUZZ_CHECK((unsigned char) *c > 0x20 && (unsigned char) *c < 0x7f && *c != '/' && *c != '@' && *c != '?');
				}
				for (size_t j = 0; j < i; j++) {
					FUZZ_CHECK(cfg.servers[j].port != cfg.servers[i].port || strcmp(cfg.servers[j].host, h) != 0);
				}
			}
		} else {
			FUZZ_CHECK(err.code == LKC_ERR_INVALID || err.code == LKC_ERR_SYSTEM);
			FUZZ_CHECK(err.msg[0] != '\0');
		}
		lkc_memcached_config_free(&cfg);
		free(list);
	}

	/* The prefix: the printable bytes of the first part, as the store accepts them. */
	for (size_t i = 0; i < len1 && prefix_len < LKC_MC_PREFIX_MAX; i++) {
		unsigned char c = (unsigned char) first[i];

		if (c > 0x20 && c < 0x7f) {
			prefix[prefix_len++] = (char) c;
		}
	}
	if (len2 > 0) {
		key1 = lkc_memcached_key(prefix, prefix_len, resource, len2, &klen1);
		FUZZ_CHECK(key1 != NULL);
		check_key(key1, klen1, prefix, prefix_len);
		/* Another resource (one byte changed, or one byte shorter) has another key. */
		resource[len2 - 1] = (char) (resource[len2 - 1] ^ 1);
		key2 = lkc_memcached_key(prefix, prefix_len, resource, len2, &klen2);
		FUZZ_CHECK(key2 != NULL);
		FUZZ_CHECK(klen1 != klen2 || memcmp(key1, key2, klen1) != 0);
		free(key2);
		if (len2 > 1) {
			key2 = lkc_memcached_key(prefix, prefix_len, resource, len2 - 1, &klen2);
			FUZZ_CHECK(key2 != NULL);
			check_key(key2, klen2, prefix, prefix_len);
			FUZZ_CHECK(klen1 != klen2 || memcmp(key1, key2, klen1) != 0);
			free(key2);
		}
		free(key1);
	}
	free(first);
	free(resource);
	return 0;
}
