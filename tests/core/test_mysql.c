/* Unit tests of the MySQL store's parts that need no server: the GET_LOCK name of a resource. */
#include "t.h"

#ifdef HAVE_LOCK_MYSQL

/* The names the README's SQL expression gives (checked against MariaDB 10.11's SHA2()). */
static void name_matches_documented_hash(void)
{
	char name[65];

	CHECK(lkc_my_name("p:", 2, "res", 3, name) == 0);
	CHECK(strcmp(name, "lock:0c17d3dd37f9285e7d4342d74016efb073f35896662ef3ad2f9529602ee") == 0);
	CHECK(lkc_my_name("", 0, "Res", 3, name) == 0);
	CHECK(strcmp(name, "lock:e98c0b76a0a1ecfd742c1fa005d8a05139109ec65948383ba6f8bb6e251") == 0);
	CHECK(strlen(name) == 64);
}

/* Names are 64 lowercase characters whatever the case of the resource, and case variants differ. */
static void names_fit_and_keep_case_apart(void)
{
	char a[65], b[65];

	CHECK(lkc_my_name("", 0, "Orders", 6, a) == 0);
	CHECK(lkc_my_name("", 0, "orders", 6, b) == 0);
	CHECK(strcmp(a, b) != 0);
	for (size_t i = 0; i < 64; i++) {
		CHECK(a[i] != '\0' && !(a[i] >= 'A' && a[i] <= 'Z'));
	}
}

/* The prefix's length is hashed too, and long or binary resources hash whole. */
static void prefix_boundary_and_binary(void)
{
	static char big[LKC_RESOURCE_MAX];
	char a[65], b[65];

	CHECK(lkc_my_name("ab", 2, "c", 1, a) == 0);
	CHECK(lkc_my_name("a", 1, "bc", 2, b) == 0);
	CHECK(strcmp(a, b) != 0);
	memset(big, 'x', sizeof(big));
	CHECK(lkc_my_name("p", 1, big, sizeof(big), a) == 0);
	big[100] = '\0';
	CHECK(lkc_my_name("p", 1, big, sizeof(big), b) == 0);
	CHECK(strcmp(a, b) != 0);
	CHECK(lkc_my_name("p", 1, "a\0b", 3, a) == 0);
	CHECK(lkc_my_name("p", 1, "a\0c", 3, b) == 0);
	CHECK(strcmp(a, b) != 0);
}

TEST_MAIN(
	T(name_matches_documented_hash),
	T(names_fit_and_keep_case_apart),
	T(prefix_boundary_and_binary)
)

#else

static void not_built(void)
{
	/* Without libmariadb the store is not built, and there is nothing to test. */
}

TEST_MAIN(T(not_built))

#endif
