/*
 * libFuzzer harness of the owner checks (lkc_hold_restore, lkc_hold_set_owner),
 * which read the owner Factory::restoreLock() and createLock() are given, and of
 * lkc_hold_init's resource check.
 *
 * Both take a pointer and a length: they must accept 1 to LKC_OWNER_MAX bytes
 * of anything, keep them exactly (NUL bytes included) and read nothing beyond
 * len bytes (the input is an exact-size heap copy, not NUL-terminated, so
 * AddressSanitizer sees a read past its end). lkc_hold_init must accept 1 to
 * LKC_RESOURCE_MAX bytes of anything and give a random token.
 */
#include "fuzz.h"

/* Whether s[0..len) is a well-formed owner token. */
static int is_token(const char *s, size_t len)
{
	if (len != LKC_TOKEN_LEN) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return 0;
		}
	}
	return 1;
}

/* libFuzzer's entry point: checks one input against every property above. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *input = fuzz_copy(data, size);
	lkc_hold hold;
	lkc_err err;
	lkc_rc rc;

	lkc_err_clear(&err);
	rc = lkc_hold_init(&hold, input, size, &err);
	if (size == 0 || size > LKC_RESOURCE_MAX) {
		FUZZ_CHECK(rc == LKC_ERR_INVALID);
		free(input);
		return 0;
	}
	FUZZ_CHECK(rc == LKC_OK);
	FUZZ_CHECK(hold.resource_len == size && memcmp(hold.resource, input, size) == 0 && hold.resource[size] == '\0');
	FUZZ_CHECK(hold.owner_len == LKC_TOKEN_LEN && is_token(hold.owner, strlen(hold.owner)) && !hold.owner_chosen);
	FUZZ_CHECK(hold.mode == LKC_MODE_NONE);

	lkc_err_clear(&err);
	rc = lkc_hold_set_owner(&hold, input, size, &err);
	FUZZ_CHECK(hold.mode == LKC_MODE_NONE);
	if (size <= LKC_OWNER_MAX) {
		FUZZ_CHECK(rc == LKC_OK && hold.owner_chosen);
		FUZZ_CHECK(hold.owner_len == size && memcmp(hold.owner, input, size) == 0 && hold.owner[size] == '\0');
	} else {
		FUZZ_CHECK(rc == LKC_ERR_INVALID && fuzz_no_control(err.msg));
	}

	lkc_err_clear(&err);
	rc = lkc_hold_restore(&hold, input, size, &err);
	if (size <= LKC_OWNER_MAX) {
		FUZZ_CHECK(rc == LKC_OK);
		FUZZ_CHECK(hold.owner_len == size && memcmp(hold.owner, input, size) == 0 && hold.owner[size] == '\0');
		FUZZ_CHECK(hold.mode == LKC_MODE_EXCLUSIVE);
	} else {
		FUZZ_CHECK(rc == LKC_ERR_INVALID);
		FUZZ_CHECK(fuzz_no_control(err.msg));
		/* A refused token leaves the hold as it was: not held. */
		FUZZ_CHECK(hold.mode == LKC_MODE_NONE);
	}
	lkc_hold_dispose(&hold);
	free(input);
	return 0;
}
