/* Unit tests of the store-independent core: errors, clock, tokens, holds. */
#define _DEFAULT_SOURCE
#include "t.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void token_is_hex_and_distinct(void)
{
	lkc_err err;
	char a[LKC_TOKEN_LEN + 1], b[LKC_TOKEN_LEN + 1];

	lkc_err_clear(&err);
	CHECK_RC(lkc_token_new(a, &err), LKC_OK, &err);
	CHECK_RC(lkc_token_new(b, &err), LKC_OK, &err);
	CHECK(strlen(a) == LKC_TOKEN_LEN);
	CHECK(strspn(a, "0123456789abcdef") == LKC_TOKEN_LEN);
	CHECK(strcmp(a, b) != 0);
}

static void hold_rejects_bad_sizes(void)
{
	lkc_err err;
	lkc_hold hold;
	char *big = calloc(1, LKC_RESOURCE_MAX + 1);

	lkc_err_clear(&err);
	CHECK_RC(lkc_hold_init(&hold, "", 0, &err), LKC_ERR_INVALID, &err);
	CHECK_RC(lkc_hold_init(&hold, big, LKC_RESOURCE_MAX + 1, &err), LKC_ERR_INVALID, &err);
	CHECK_RC(lkc_hold_init(&hold, big, LKC_RESOURCE_MAX, &err), LKC_OK, &err);
	CHECK(hold.resource_len == LKC_RESOURCE_MAX);
	CHECK(hold.fd == -1 && hold.semid == -1 && hold.mode == LKC_MODE_NONE);
	lkc_hold_dispose(&hold);
	free(big);
}

static void clock_moves_forward(void)
{
	uint64_t a = lkc_now_ns();
	usleep(1000);
	CHECK(lkc_now_ns() > a);
	CHECK(lkc_ms_left(0) == INT64_MAX);
	CHECK(lkc_ms_left(a) == 0);
	CHECK(lkc_ms_left(lkc_now_ns() + 5000000u) >= 4);
}

static void sha256_known_vectors(void)
{
	unsigned char out[32];
	static const unsigned char abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	static const unsigned char empty[32] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
		0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
	};

	lkc_sha256("abc", 3, out);
	CHECK(memcmp(out, abc, 32) == 0);
	lkc_sha256("", 0, out);
	CHECK(memcmp(out, empty, 32) == 0);
}

static void errors_carry_messages(void)
{
	lkc_err err;

	lkc_err_clear(&err);
	CHECK(lkc_err_set(&err, LKC_ERR_IO, "Redis at %s: %s", "127.0.0.1:1", "connection refused") == LKC_ERR_IO);
	CHECK(strcmp(err.msg, "Redis at 127.0.0.1:1: connection refused") == 0);
	CHECK(strcmp(lkc_rc_name(LKC_LOST), "LOST") == 0);
}

/* Addresses need no resolver; names from /etc/hosts resolve, also in a forked child; a bad name says so. */
static void resolve_within_a_deadline(void)
{
	struct addrinfo *ai = NULL;
	char text[256] = "";
	pid_t pid;
	int status = -1;

	CHECK(lkc_resolve("127.0.0.1", 6379, lkc_now_ns() + 1000000000u, &ai, text, sizeof(text)) == 0);
	CHECK(ai != NULL && ai->ai_family == AF_INET && ai->ai_socktype == SOCK_STREAM);
	freeaddrinfo(ai);
	CHECK(lkc_resolve("::1", 1, 0, &ai, text, sizeof(text)) == 0);
	CHECK(ai != NULL && ai->ai_family == AF_INET6);
	freeaddrinfo(ai);
	/* A deadline already passed: an address still resolves (no thread), a name does not. */
	CHECK(lkc_resolve("127.0.0.1", 1, 1, &ai, text, sizeof(text)) == 0);
	freeaddrinfo(ai);
	CHECK(lkc_resolve("localhost", 1, 1, &ai, text, sizeof(text)) == -2);
	CHECK(ai == NULL && strstr(text, "resolving localhost took longer than the timeout") != NULL);
	CHECK(lkc_resolve("localhost", 6379, lkc_now_ns() + 5000000000u, &ai, text, sizeof(text)) == 0);
	CHECK(ai != NULL);
	freeaddrinfo(ai);
	/* A name that cannot be one: the resolver's word, naming it. */
	CHECK(lkc_resolve("bad..name", 1, lkc_now_ns() + 5000000000u, &ai, text, sizeof(text)) == -1);
	CHECK(ai == NULL && strstr(text, "cannot resolve bad..name") != NULL);
	/* A child of a process that resolved resolves too (each resolution has a thread of its own). */
	pid = fork();
	if (pid == 0) {
		struct addrinfo *child = NULL;
		char t2[256];
		int rc = lkc_resolve("localhost", 6379, lkc_now_ns() + 5000000000u, &child, t2, sizeof(t2));

		if (child != NULL) {
			freeaddrinfo(child);
		}
		_exit(rc == 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_MAIN(T(token_is_hex_and_distinct), T(hold_rejects_bad_sizes), T(clock_moves_forward),
	T(sha256_known_vectors), T(errors_carry_messages), T(resolve_within_a_deadline))
