/*
 * What the libFuzzer harnesses of the core share: a check that aborts, so that
 * libFuzzer records the input as a crash, and helpers for the properties every
 * harness asserts about messages.
 */
#ifndef LKC_FUZZ_H
#define LKC_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ext/core/lkc.h"

/* Aborts with the failed condition: a broken property is a crash to libFuzzer. */
#define FUZZ_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* An exact-size heap copy of the input, so that AddressSanitizer sees any read past its end. */
static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *copy = malloc(size > 0 ? size : 1);

	FUZZ_CHECK(copy != NULL);
	if (size > 0) {
		memcpy(copy, data, size);
	}
	return copy;
}

/* Whether msg has no control byte: an error message must not be able to garble a log line. */
static inline int fuzz_no_control(const char *msg)
{
	for (const unsigned char *p = (const unsigned char *) msg; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			return 0;
		}
	}
	return 1;
}

/* Whether msg is NUL-terminated inside an lkc_err's buffer. */
static inline int fuzz_msg_terminated(const lkc_err *err)
{
	return memchr(err->msg, '\0', sizeof(err->msg)) != NULL;
}

/* Whether needle[0..len) occurs in hay[0..hay_len). */
static inline int fuzz_contains(const char *hay, size_t hay_len, const char *needle, size_t len)
{
	if (len == 0) {
		return 1;
	}
	for (size_t i = 0; i + len <= hay_len; i++) {
		if (memcmp(hay + i, needle, len) == 0) {
			return 1;
		}
	}
	return 0;
}

#endif
