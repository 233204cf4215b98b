/*
 * libFuzzer harness of what the local stores derive from a resource name:
 * the flock store's lock file name (lkc_flock_file_name) and the semaphore
 * store's IPC key (lkc_sem_key).
 *
 * A lock file name must stay inside the store's directory whatever the bytes
 * of the resource: only [A-Za-z0-9._-], never a leading '.', the readable part
 * followed by the SHA-256 of the resource, ".lock" at the end; and two
 * different resources never share a name. A semaphore key is never
 * IPC_PRIVATE, which would give every call a set of its own.
 *
 * The input is two resources: the first byte says where the first one ends.
 */
#include "fuzz.h"

/* How many bytes of a resource show in its file name (LKC_FLOCK_READABLE_MAX, lkc_flock_int.h). */
#define FUZZ_READABLE_MAX 48

/* Asserts the shape of the lock file name of resource[0..len) and returns it. */
static char *check_name(const char *resource, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t readable = len < FUZZ_READABLE_MAX ? len : FUZZ_READABLE_MAX;
	unsigned char digest[32];
	char *name = lkc_flock_file_name(resource, len);
	size_t name_len, at = 0;

	FUZZ_CHECK(name != NULL);
	name_len = strlen(name);
	FUZZ_CHECK(name_len == readable + (readable > 0) + 64 + 5);
	FUZZ_CHECK(name[0] != '.');
	FUZZ_CHECK(strcmp(name, ".") != 0 && strcmp(name, "..") != 0);
	for (size_t i = 0; i < name_len; i++) {
		char c = name[i];

		FUZZ_CHECK((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
			|| c == '.' || c == '_' || c == '-');
	}
	/* The readable part keeps the safe bytes of the resource, in place. */
	for (size_t i = 0; i < readable; i++) {
		unsigned char c = (unsigned char) resource[i];
		int safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
			|| c == '_' || c == '-' || (c == '.' && i > 0);

		FUZZ_CHECK(safe ? name[i] == (char) c : name[i] == '-');
	}
	if (readable > 0) {
		at = readable;
		FUZZ_CHECK(name[at] == '.');
		at++;
	}
	lkc_sha256(resource, len, digest);
	for (size_t i = 0; i < sizeof(digest); i++) {
		FUZZ_CHECK(name[at + 2 * i] == hex[digest[i] >> 4] && name[at + 2 * i + 1] == hex[digest[i] & 15]);
	}
	FUZZ_CHECK(strcmp(name + at + 64, ".lock") == 0);
	return name;
}

/* libFuzzer's entry point: checks one input against every property above. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t split, len1, len2;
	char *first, *second, *name1, *name2;
	int32_t key1, key2;

	if (size == 0) {
		return 0;
	}
	split = data[0];
	len1 = split < size - 1 ? split : size - 1;
	len2 = size - 1 - len1;
	first = fuzz_copy(data + 1, len1);
	second = fuzz_copy(data + 1 + len1, len2);

	name1 = check_name(first, len1);
	name2 = check_name(second, len2);
	/* The digest makes names unique; the readable part alone is lossy. */
	if (len1 != len2 || memcmp(first, second, len1) != 0) {
		FUZZ_CHECK(strcmp(name1, name2) != 0);
	} else {
		FUZZ_CHECK(strcmp(name1, name2) == 0);
	}

	key1 = lkc_sem_key(first, len1);
	key2 = lkc_sem_key(first, len1);
	FUZZ_CHECK(key1 != 0);
	FUZZ_CHECK(key1 == key2);
	FUZZ_CHECK(lkc_sem_key(second, len2) != 0);

	free(name1);
	free(name2);
	free(first);
	free(second);
	return 0;
}
