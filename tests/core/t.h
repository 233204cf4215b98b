/* A minimal unit-test harness for the C core: CHECK records a failure and goes on. */
#ifndef LKC_T_H
#define LKC_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ext/core/lkc.h"

extern int t_failed;
extern int t_checks;

#define CHECK(cond) do { \
	t_checks++; \
	if (!(cond)) { \
		t_failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

/* Checks a result code and prints the error context on mismatch. */
#define CHECK_RC(expr, want, err) do { \
	lkc_rc t_rc_ = (expr); \
	t_checks++; \
	if (t_rc_ != (want)) { \
		t_failed++; \
		fprintf(stderr, "%s:%d: %s returned %s, want %s (%s)\n", __FILE__, __LINE__, \
			#expr, lkc_rc_name(t_rc_), lkc_rc_name(want), (err)->msg); \
	} \
} while (0)

/* One test function; TEST_MAIN runs the listed ones and prints "name: ok|FAIL". */
typedef void (*t_fn)(void);
typedef struct { const char *name; t_fn fn; } t_case;

#define TEST_MAIN(...) \
	int t_failed; \
	int t_checks; \
	int main(void) { \
		static const t_case cases[] = { __VA_ARGS__ }; \
		int bad = 0; \
		const char *only = getenv("T_ONLY"); \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) { \
			int before = t_failed; \
			if (only != NULL && *only != '\0' && strcmp(only, cases[i].name) != 0) continue; \
			cases[i].fn(); \
			if (t_failed != before) bad++; \
			printf("%s %s\n", t_failed == before ? "PASS" : "FAIL", cases[i].name); \
		} \
		return bad ? 1 : 0; \
	}

#define T(fn) { #fn, fn }

/* Credentials (user, password, database; NULL: unset) that a store's pool keys must all keep apart. */
#define T_POOL_IDENTITIES 9
static inline const char *t_pool_identity(size_t i, size_t part)
{
	static const char *const sets[T_POOL_IDENTITIES][3] = {
		{ "alice\nx", "shop", "db" }, { "alice", "x\nshop", "db" }, { "alice", "x", "shop\ndb" },
		{ NULL, "pw", "db" }, { "", "pw", "db" }, { "u", NULL, "db" }, { "u", "", "db" }, { "u", "pw", NULL }, { "u", "pw", "" },
	};

	return sets[i][part];
}

/* Checks that each of the n keys was made and no two are the same bytes, then frees them. */
static inline void t_check_distinct_keys(char **keys, const size_t *lens, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CHECK(keys[i] != NULL);
		for (size_t j = i + 1; j < n; j++) {
			CHECK(keys[i] == NULL || keys[j] == NULL || lens[i] != lens[j] || memcmp(keys[i], keys[j], lens[i]) != 0);
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(keys[i]);
	}
}

#endif
