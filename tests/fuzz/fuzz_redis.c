/*
 * libFuzzer harness of the Redis store's text handling, reached without a
 * server: the store's files that hold the static functions it calls are
 * compiled into this harness.
 *
 *  - lkc_rs_quote / lkc_rs_quote_errstr, which copy server and system text into
 *    messages: the copy fits its buffer, has no control byte, and never holds
 *    the password;
 *  - lkc_rs_lock_key, the key of a resource: it starts with the prefix, every
 *    key derived from it (":r", ":w:TICKET") lies in the same non-empty hash tag,
 *    and two resources never share a key;
 *  - the readers of replies (lkc_rs_read_answer, lkc_rs_unexpected,
 *    lkc_rs_hold_result), fed whatever hiredis parses out of the input: a
 *    message never holds a control byte or the password;
 *  - lkc_redis_open's pool key: two stores share pooled connections only when
 *    endpoint, user, database and password are all the same.
 */
#include "../../ext/core/lkc_redis.c"
#include "../../ext/core/lkc_redis_hold.c"
#include "../../ext/core/lkc_redis_wait.c"

#include "fuzz.h"

/* Reads the input front to back; past its end every read gives zeros. */
typedef struct {
	const uint8_t *data;
	size_t size;
} fuzz_in;

/* The next byte of the input, 0 past its end. */
static uint8_t in_byte(fuzz_in *in)
{
	uint8_t b = 0;

	if (in->size > 0) {
		b = in->data[0];
		in->data++;
		in->size--;
	}
	return b;
}

/* A malloc'd string of up to max bytes (length byte first); with cstring, cut at the first NUL. */
static char *in_str(fuzz_in *in, size_t max, int cstring, size_t *len)
{
	size_t n = in_byte(in) % (max + 1);
	char *s;

	if (n > in->size) {
		n = in->size;
	}
	s = malloc(n + 1);
	FUZZ_CHECK(s != NULL);
	memcpy(s, in->data, n);
	s[n] = '\0';
	in->data += n;
	in->size -= n;
	*len = cstring ? strlen(s) : n;
	return s;
}

/* A host or socket path: [a-z0-9.-] only, so that no message template byte comes from it. */
static char *in_host(fuzz_in *in, int socket)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789.-";
	size_t n = 1 + in_byte(in) % 16;
	char *s = malloc(n + 2);

	FUZZ_CHECK(s != NULL);
	s[0] = socket ? '/' : 'h';
	for (size_t i = 1; i <= n; i++) {
		s[i] = alphabet[in_byte(in) % (sizeof(alphabet) - 1)];
	}
	s[n + 1] = '\0';
	return s;
}

/* The settings two stores are compared on. */
typedef struct {
	char *prefix;
	size_t prefix_len;
	char *password;          /* NULL: none */
	char *username;          /* NULL: none */
	char *host;              /* TCP when socket is 0 */
	int socket;
	int port;
	int database;
} fuzz_cfg;

/* A copy of s, or NULL for NULL. */
static char *dup_or_null(const char *s)
{
	char *copy;

	if (s == NULL) {
		return NULL;
	}
	copy = strdup(s);
	FUZZ_CHECK(copy != NULL);
	return copy;
}

/* Reads the settings of the first store from the front of the input. */
static void cfg_read(fuzz_in *in, fuzz_cfg *c)
{
	size_t len;
	uint8_t flags = in_byte(in);

	c->prefix = in_str(in, 40, 0, &c->prefix_len);
	c->password = in_str(in, 24, 1, &len);
	if (len == 0 && !(flags & 1)) {
		free(c->password);
		c->password = NULL;
	}
	c->username = in_str(in, 12, 1, &len);
	if (len == 0 && !(flags & 2)) {
		free(c->username);
		c->username = NULL;
	}
	c->socket = (flags & 4) != 0;
	c->host = in_host(in, c->socket);
	c->port = 1 + (int) (((unsigned) in_byte(in) << 8 | in_byte(in)) % 65535);
	c->database = in_byte(in) % 4;
}

/* A copy of c with one setting changed as the input says (or none). */
static void cfg_mutate(fuzz_in *in, const fuzz_cfg *c, fuzz_cfg *out)
{
	size_t len;

	*out = *c;
	out->prefix = malloc(c->prefix_len + 1);
	FUZZ_CHECK(out->prefix != NULL);
	memcpy(out->prefix, c->prefix, c->prefix_len + 1);
	out->password = dup_or_null(c->password);
	out->username = dup_or_null(c->username);
	out->host = dup_or_null(c->host);
	switch (in_byte(in) % 7) {
		case 0:
			free(out->password);
			out->password = in_str(in, 24, 1, &len);
			break;
		case 1:
			free(out->username);
			out->username = in_str(in, 12, 1, &len);
			break;
		case 2:
			free(out->host);
			out->socket = in_byte(in) & 1;
			out->host = in_host(in, out->socket);
			break;
		case 3:
			out->port = 1 + in_byte(in);
			break;
		case 4:
			out->database = in_byte(in) % 4;
			break;
		case 5:
			/* User and password swapped: length prefixes must keep them apart. */
			{
				char *t = out->username;
				out->username = out->password;
				out->password = t;
			}
			break;
		default:
			break;
	}
}

/* Frees the strings of c. */
static void cfg_free(fuzz_cfg *c)
{
	free(c->prefix);
	free(c->password);
	free(c->username);
	free(c->host);
}

/* Opens a store on c (copies); NULL when lkc_redis_open refuses it. */
static lkc_rs_store *store_open(const fuzz_cfg *c)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;
	lkc_rc rc;

	lkc_redis_config_init(&cfg);
	free(cfg.host);
	cfg.host = NULL;
	if (c->socket) {
		cfg.socket_path = dup_or_null(c->host);
	} else {
		cfg.host = dup_or_null(c->host);
	}
	cfg.port = c->port;
	cfg.database = c->database;
	cfg.password = dup_or_null(c->password);
	cfg.username = dup_or_null(c->username);
	cfg.prefix = malloc(c->prefix_len + 1);
	FUZZ_CHECK(cfg.prefix != NULL);
	memcpy(cfg.prefix, c->prefix, c->prefix_len + 1);
	cfg.prefix_len = c->prefix_len;
	lkc_err_clear(&err);
	rc = lkc_redis_open(&store, &cfg, &err);
	lkc_redis_config_free(&cfg);
	if (rc != LKC_OK) {
		/* The only setting of ours it may refuse: a prefix that empties the hash tag. */
		FUZZ_CHECK(rc == LKC_ERR_INVALID && store == NULL);
		FUZZ_CHECK(lkc_rs_prefix_empties_tag(c->prefix, c->prefix_len));
		FUZZ_CHECK(fuzz_no_control(err.msg));
		return NULL;
	}
	FUZZ_CHECK(!lkc_rs_prefix_empties_tag(c->prefix, c->prefix_len));
	return (lkc_rs_store *) store;
}

/* Whether c may come from the quoted text only: no message template or endpoint byte is like it. */
static int foreign_byte(unsigned char c)
{
	return c >= 0x80 || strchr("#$~`|^!;<>\"{}&", c) != NULL;
}

/*
 * Whether a message can be checked for the password: a password that starts
 * and ends with a byte only quoted text can bring, and that holds no byte the
 * quoting itself writes ('*' for a mask, '?' for a control byte).
 */
static int password_checkable(const lkc_rs_store *s)
{
	const char *pw = s->cfg.password;
	size_t len = pw != NULL ? strlen(pw) : 0;

	return len > 0 && foreign_byte((unsigned char) pw[0]) && foreign_byte((unsigned char) pw[len - 1])
		&& strpbrk(pw, "*?") == NULL;
}

/* Asserts what every message of the store must be. */
static void check_message(const lkc_rs_store *s, const lkc_err *err)
{
	FUZZ_CHECK(fuzz_msg_terminated(err));
	FUZZ_CHECK(fuzz_no_control(err->msg));
	FUZZ_CHECK(strncmp(err->msg, "Redis at ", 9) == 0);
	if (password_checkable(s)) {
		FUZZ_CHECK(strstr(err->msg, s->cfg.password) == NULL);
	}
}

/* Quotes text[0..len) into buffers of several sizes and checks each copy. */
static void check_quote(const lkc_rs_store *s, const char *text, size_t len)
{
	static const size_t sizes[] = { 1, 2, 3, 5, 16, 160, 256 };
	const char *pw = s->cfg.password;
	char out[300];

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];

		memset(out, 'Z', sizeof(out));
		lkc_rs_quote(s, text, len, out, size);
		FUZZ_CHECK(memchr(out, '\0', size) != NULL);
		/* Nothing beyond the buffer it was given. */
		for (size_t i = size; i < sizeof(out); i++) {
			FUZZ_CHECK(out[i] == 'Z');
		}
		FUZZ_CHECK(fuzz_no_control(out));
		if (pw != NULL && pw[0] != '\0' && strpbrk(pw, "*?") == NULL) {
			FUZZ_CHECK(strstr(out, pw) == NULL);
		}
	}
}

/* The Redis Cluster hash tag of key: the bytes between the first '{' and the first '}' after it, if any. */
static int hash_tag(const char *key, size_t len, size_t *start, size_t *tag_len)
{
	const char *open = memchr(key, '{', len);
	const char *close;

	if (open == NULL) {
		return 0;
	}
	close = memchr(open + 1, '}', len - (size_t) (open + 1 - key));
	if (close == NULL || close == open + 1) {
		return 0;
	}
	*start = (size_t) (open + 1 - key);
	*tag_len = (size_t) (close - open - 1);
	return 1;
}

/* Checks the lock key of resource[0..len) and returns it. */
static char *check_key(const lkc_rs_store *s, const char *resource, size_t len, size_t *key_len)
{
	static const char *const suffixes[] = { ":r", ":f", ":q", ":qd", ":p", ":h", ":ws",
		":t", ":m", ":wl", ":fw", ":fl", ":w:1795690629697359" };
	char *key = lkc_rs_lock_key(s, resource, len, key_len);
	size_t start, tag_len;
	char derived[LKC_RESOURCE_MAX + 256];

	FUZZ_CHECK(key != NULL);
	FUZZ_CHECK(key[*key_len] == '\0');
	/* Nothing outside the store's namespace: every key starts with the prefix. */
	FUZZ_CHECK(*key_len > s->cfg.prefix_len);
	FUZZ_CHECK(s->cfg.prefix_len == 0 || memcmp(key, s->cfg.prefix, s->cfg.prefix_len) == 0);
	FUZZ_CHECK(key[s->cfg.prefix_len] == '{' && key[*key_len - 1] == '}');
	/* One slot for every key of the resource: the tag is found, and no suffix moves it. */
	FUZZ_CHECK(hash_tag(key, *key_len, &start, &tag_len));
	FUZZ_CHECK(*key_len + 40 <= sizeof(derived));
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t slen = strlen(suffixes[i]), dstart, dlen;

		memcpy(derived, key, *key_len);
		memcpy(derived + *key_len, suffixes[i], slen);
		FUZZ_CHECK(hash_tag(derived, *key_len + slen, &dstart, &dlen));
		FUZZ_CHECK(dstart == start && dlen == tag_len);
	}
	return key;
}

/* Feeds text to a hiredis reader and runs every reply through the store's readers. */
static void check_replies(lkc_rs_store *s, const char *text, size_t len)
{
	redisReader *reader = lkc_rconn_reader(NULL);
	void *reply = NULL;
	lkc_hold hold;
	lkc_err err;

	FUZZ_CHECK(reader != NULL);
	memset(&hold, 0, sizeof(hold));
	hold.fd = -1;
	hold.semid = -1;
	if (redisReaderFeed(reader, text, len) != REDIS_OK) {
		redisReaderFree(reader);
		return;
	}
	for (int n = 0; n < 16; n++) {
		const redisReply *r;
		lkc_rs_answer ans;
		lkc_rc rc;

		if (redisReaderGetReply(reader, &reply) != REDIS_OK || reply == NULL) {
			break;
		}
		r = reply;
		lkc_err_clear(&err);
		rc = lkc_rs_read_answer(s, r, &ans, &err);
		if (rc == LKC_OK) {
			FUZZ_CHECK(ans.outcome == LKC_RS_TAKEN || ans.outcome == LKC_RS_REFUSED
				|| ans.outcome == LKC_RS_PROMOTING || ans.outcome == LKC_RS_QUEUED);
			FUZZ_CHECK(ans.outcome != LKC_RS_TAKEN || ans.fence == -1 || ans.fence > 0);
		} else {
			FUZZ_CHECK(rc == LKC_ERR_REFUSED || rc == LKC_ERR_PROTOCOL);
			check_message(s, &err);
		}
		lkc_err_clear(&err);
		rc = lkc_rs_unexpected(s, "the fuzzed command", r, &err);
		FUZZ_CHECK(rc == (r->type == REDIS_REPLY_ERROR ? LKC_ERR_REFUSED : LKC_ERR_PROTOCOL));
		check_message(s, &err);
		if (r->type == REDIS_REPLY_INTEGER) {
			lkc_err_clear(&err);
			rc = lkc_rs_hold_result(s, &hold, "check", r->integer, &err);
			if (rc != LKC_OK) {
				check_message(s, &err);
			}
		}
		(void) lkc_rs_is_ok(r);
		(void) lkc_rs_is_status(r, "QUEUED");
		freeReplyObject(reply);
		reply = NULL;
	}
	redisReaderFree(reader);
}

/* Whether two settings must share pooled connections. */
static int same_connection(const fuzz_cfg *a, const fuzz_cfg *b)
{
	int same_user = (a->username == NULL) == (b->username == NULL)
		&& (a->username == NULL || strcmp(a->username, b->username) == 0);
	int same_password = (a->password == NULL) == (b->password == NULL)
		&& (a->password == NULL || strcmp(a->password, b->password) == 0);

	return a->socket == b->socket && strcmp(a->host, b->host) == 0 && (a->socket || a->port == b->port)
		&& same_user && same_password && a->database == b->database;
}

/* libFuzzer's entry point: checks one input against every property above. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_in in = { data, size };
	fuzz_cfg c1, c2;
	lkc_rs_store *s1, *s2;
	char *text, *nul_text;
	size_t text_len;

	cfg_read(&in, &c1);
	cfg_mutate(&in, &c1, &c2);
	text_len = in.size;
	text = fuzz_copy(in.data, text_len);

	s1 = store_open(&c1);
	s2 = store_open(&c2);
	if (s1 != NULL && s2 != NULL) {
		int shared = s1->pool_key_len == s2->pool_key_len && memcmp(s1->pool_key, s2->pool_key, s1->pool_key_len) == 0;

		FUZZ_CHECK(shared == same_connection(&c1, &c2));
	}
	if (s1 != NULL) {
		check_quote(s1, text, text_len);
		nul_text = malloc(text_len + 1);
		FUZZ_CHECK(nul_text != NULL);
		memcpy(nul_text, text, text_len);
		nul_text[text_len] = '\0';
		{
			char out[160];

			lkc_rs_quote_errstr(s1, nul_text, out, sizeof(out));
			FUZZ_CHECK(fuzz_no_control(out));
		}
		free(nul_text);

		if (text_len >= 2 && text_len <= LKC_RESOURCE_MAX + 1) {
			/* Two resources: the first byte says where the first one ends. */
			size_t len1 = 1 + (unsigned char) text[0] % (text_len - 1), len2 = text_len - 1 - len1;
			size_t k1, k2;
			char *key1 = check_key(s1, text + 1, len1, &k1);

			if (len2 > 0) {
				char *key2 = check_key(s1, text + 1 + len1, len2, &k2);
				int same_resource = len1 == len2 && memcmp(text + 1, text + 1 + len1, len1) == 0;

				FUZZ_CHECK((k1 == k2 && memcmp(key1, key2, k1) == 0) == same_resource);
				free(key2);
			}
			free(key1);
		}
		check_replies(s1, text, text_len);
		lkc_rs_destroy(&s1->base);
	}
	if (s2 != NULL) {
		lkc_rs_destroy(&s2->base);
	}
	cfg_free(&c1);
	cfg_free(&c2);
	free(text);
	return 0;
}
