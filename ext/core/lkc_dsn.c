/*
 * The DSN parser: scheme ":" [ "//" [ user [ ":" password ] "@" ] [ host ] [ ":" port ] ] [ path ] [ "?" query ].
 *
 * lkc_dsn_parse only splits and percent-decodes; what a path or a query key
 * means is up to the store that reads the result. Below it, lkc_dsn_hosts
 * splits a list of hosts, and lkc_redis_config_dsn reads the parts of a Redis
 * DSN (scheme, authority, path) into a connection config. Error messages say
 * what is wrong and where, and never quote the DSN, which may carry a password.
 */
#include "lkc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longer DSNs are refused, so that offsets and copies stay small. */
#define LKC_DSN_MAX 4096

/* What the parser needs to report an error: the error context and a label naming the scheme. */
typedef struct {
	lkc_err *err;
	char label[48];
} dsn_ctx;

static lkc_rc dsn_fail(dsn_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Fails with LKC_ERR_INVALID and a message prefixed with the context's label. */
static lkc_rc dsn_fail(dsn_ctx *ctx, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return lkc_err_set(ctx->err, LKC_ERR_INVALID, "%s %s", ctx->label, what);
}

/* Fails with LKC_ERR_SYSTEM for a failed allocation. */
static lkc_rc dsn_oom(dsn_ctx *ctx)
{
	return lkc_err_set(ctx->err, LKC_ERR_SYSTEM, "%s: out of memory", ctx->label);
}

/* The value of a hex digit, or -1. */
static int dsn_hex(unsigned char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* Writes s into buf for a message, printable ASCII only and shortened, so a key name cannot garble it. */
static void dsn_quote(char *buf, size_t size, const char *s)
{
	size_t used = 0;

	for (; *s != '\0' && used + 5 < size; s++) {
		unsigned char c = (unsigned char) *s;
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			buf[used++] = (char) c;
		} else {
			used += (size_t) snprintf(buf + used, size - used, "\\x%02x", c);
		}
	}
	if (*s != '\0' && used + 4 <= size) {
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	buf[used] = '\0';
}

/* A malloc'd NUL-terminated copy of s[0..len) without decoding. */
static lkc_rc dsn_copy(dsn_ctx *ctx, const char *s, size_t len, char **out)
{
	char *copy = malloc(len + 1);

	if (copy == NULL) {
		return dsn_oom(ctx);
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	*out = copy;
	return LKC_OK;
}

/*
 * A malloc'd percent-decoded copy of dsn[start..start+len); part names the
 * component for messages. '+' stays '+': this is RFC 3986, not a form body.
 */
static lkc_rc dsn_decode(dsn_ctx *ctx, const char *dsn, size_t start, size_t len,
	const char *part, char **out)
{
	const char *s = dsn + start;
	char *dec = malloc(len + 1);
	size_t n = 0;

	if (dec == NULL) {
		return dsn_oom(ctx);
	}
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] != '%') {
			dec[n++] = s[i];
			continue;
		}
		hi = i + 1 < len ? dsn_hex((unsigned char) s[i + 1]) : -1;
		lo = i + 2 < len ? dsn_hex((unsigned char) s[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			free(dec);
			return dsn_fail(ctx, "has a bad percent escape in the %s at offset %zu: '%%' must be followed by two hex digits",
				part, start + i);
		}
		if (hi == 0 && lo == 0) {
			free(dec);
			return dsn_fail(ctx, "contains an encoded NUL byte (%%00) in the %s at offset %zu", part, start + i);
		}
		dec[n++] = (char) (hi << 4 | lo);
		i += 2;
	}
	dec[n] = '\0';
	*out = dec;
	return LKC_OK;
}

/* Parses dsn[start..start+len) as a port number from 1 to 65535. */
static lkc_rc dsn_port(dsn_ctx *ctx, const char *dsn, size_t start, size_t len, int *port)
{
	long value = 0;

	/* The digits are never quoted: a password with an unencoded '/' can end up here. */
	if (len == 0) {
		return dsn_fail(ctx, "has an empty port at offset %zu: expected a number from 1 to 65535", start);
	}
	for (size_t i = 0; i < len; i++) {
		char c = dsn[start + i];
		if (c < '0' || c > '9') {
			return dsn_fail(ctx, "has an invalid port at offset %zu: expected a number from 1 to 65535", start);
		}
		if (value <= 65535) {
			value = value * 10 + (c - '0');
		}
	}
	if (value < 1 || value > 65535) {
		return dsn_fail(ctx, "has an invalid port at offset %zu: expected a number from 1 to 65535", start);
	}
	*port = (int) value;
	return LKC_OK;
}

/* Parses the host and port of the authority, dsn[start..end). */
static lkc_rc dsn_hostport(dsn_ctx *ctx, const char *dsn, size_t start, size_t end, lkc_dsn *out)
{
	const char *s = dsn + start;
	size_t len = end - start;
	const char *colon;

	if (len == 0) {
		return LKC_OK;
	}
	/* A list of hosts keeps a port per host, so the store splits it, not us. */
	if (memchr(s, ',', len) != NULL) {
		return dsn_copy(ctx, s, len, &out->host);
	}
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);
		size_t hlen, after;

		if (close == NULL) {
			return dsn_fail(ctx, "has an IPv6 address without its closing ']' at offset %zu", start);
		}
		hlen = (size_t) (close - s) - 1;
		if (hlen == 0 || memchr(s + 1, ':', hlen) == NULL) {
			return dsn_fail(ctx, "has an invalid IPv6 address at offset %zu", start);
		}
		for (size_t i = 1; i <= hlen; i++) {
			if (dsn_hex((unsigned char) s[i]) < 0 && s[i] != ':' && s[i] != '.') {
				return dsn_fail(ctx, "has an invalid character in the IPv6 address at offset %zu", start + i);
			}
		}
		after = (size_t) (close - s) + 1;
		if (after < len) {
			if (s[after] != ':') {
				return dsn_fail(ctx, "has an unexpected character after the IPv6 address at offset %zu", start + after);
			}
			if (dsn_port(ctx, dsn, start + after + 1, len - after - 1, &out->port) != LKC_OK) {
				return ctx->err->code;
			}
		}
		return dsn_copy(ctx, s + 1, hlen, &out->host);
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '[' || s[i] == ']') {
			return dsn_fail(ctx, "has a '%c' in the host at offset %zu: only an IPv6 address goes in brackets",
				s[i], start + i);
		}
	}
	colon = memchr(s, ':', len);
	if (colon != NULL) {
		size_t at = (size_t) (colon - s);

		if (memchr(colon + 1, ':', len - at - 1) != NULL) {
			return dsn_fail(ctx, "has more than one ':' in the host at offset %zu: write an IPv6 address in brackets",
				start);
		}
		if (dsn_port(ctx, dsn, start + at + 1, len - at - 1, &out->port) != LKC_OK) {
			return ctx->err->code;
		}
		len = at;
	}
	if (len == 0) {
		return LKC_OK;
	}
	return dsn_copy(ctx, s, len, &out->host);
}

/* Parses the authority dsn[start..end): optional userinfo, then host and port. */
static lkc_rc dsn_authority(dsn_ctx *ctx, const char *dsn, size_t start, size_t end, lkc_dsn *out)
{
	size_t at = end;

	/* The last '@' ends the userinfo, so an unencoded '@' in a password still parses. */
	for (size_t i = start; i < end; i++) {
		if (dsn[i] == '@') {
			at = i;
		}
	}
	if (at < end) {
		const char *colon = memchr(dsn + start, ':', at - start);
		size_t user_end = colon != NULL ? (size_t) (colon - dsn) : at;

		if (user_end > start
			&& dsn_decode(ctx, dsn, start, user_end - start, "user name", &out->user) != LKC_OK) {
			return ctx->err->code;
		}
		if (colon != NULL && at > user_end + 1
			&& dsn_decode(ctx, dsn, user_end + 1, at - user_end - 1, "password", &out->password) != LKC_OK) {
			return ctx->err->code;
		}
		start = at + 1;
	}
	return dsn_hostport(ctx, dsn, start, end, out);
}

/* Parses the query dsn[start..end) into key/value pairs; keys are unique. */
static lkc_rc dsn_query(dsn_ctx *ctx, const char *dsn, size_t start, size_t end, lkc_dsn *out)
{
	size_t items = 1;
	size_t pos = start;

	if (start == end) {
		return LKC_OK;
	}
	for (size_t i = start; i < end; i++) {
		items += dsn[i] == '&';
	}
	out->param_keys = calloc(items, sizeof(char *));
	out->param_values = calloc(items, sizeof(char *));
	if (out->param_keys == NULL || out->param_values == NULL) {
		return dsn_oom(ctx);
	}
	while (pos <= end) {
		const char *amp = memchr(dsn + pos, '&', end - pos);
		size_t item_end = amp != NULL ? (size_t) (amp - dsn) : end;
		const char *eq = memchr(dsn + pos, '=', item_end - pos);
		size_t key_end;
		char *key, *value;

		if (item_end == pos) {
			return dsn_fail(ctx, "has an empty query item at offset %zu", pos);
		}
		if (eq == NULL) {
			return dsn_fail(ctx, "has a query item without '=' at offset %zu", pos);
		}
		key_end = (size_t) (eq - dsn);
		if (key_end == pos) {
			return dsn_fail(ctx, "has a query item with an empty key at offset %zu", pos);
		}
		if (dsn_decode(ctx, dsn, pos, key_end - pos, "query key", &key) != LKC_OK) {
			return ctx->err->code;
		}
		for (size_t i = 0; i < out->nparams; i++) {
			if (strcmp(out->param_keys[i], key) == 0) {
				char quoted[80];

				dsn_quote(quoted, sizeof(quoted), key);
				free(key);
				return dsn_fail(ctx, "repeats the query key '%s' at offset %zu", quoted, pos);
			}
		}
		if (dsn_decode(ctx, dsn, key_end + 1, item_end - key_end - 1, "query value", &value) != LKC_OK) {
			free(key);
			return ctx->err->code;
		}
		out->param_keys[out->nparams] = key;
		out->param_values[out->nparams] = value;
		out->nparams++;
		pos = item_end + 1;
	}
	return LKC_OK;
}

/* Parses and lowercases the scheme, dsn[0..len), and names it in the context's label. */
static lkc_rc dsn_scheme(dsn_ctx *ctx, const char *dsn, size_t len, lkc_dsn *out)
{
	if (len == 0) {
		return dsn_fail(ctx, "has an empty scheme: it must start with a name such as 'redis:'");
	}
	for (size_t i = 0; i < len; i++) {
		char c = dsn[i];
		int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		int other = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';

		if (!letter && (i == 0 || !other)) {
			return dsn_fail(ctx, "has an invalid scheme: character at offset %zu is not %s", i,
				i == 0 ? "a letter" : "a letter, digit, '+', '-' or '.'");
		}
	}
	if (dsn_copy(ctx, dsn, len, &out->scheme) != LKC_OK) {
		return ctx->err->code;
	}
	for (char *p = out->scheme; *p != '\0'; p++) {
		if (*p >= 'A' && *p <= 'Z') {
			*p = (char) (*p - 'A' + 'a');
		}
	}
	snprintf(ctx->label, sizeof(ctx->label), "%.24s DSN", out->scheme);
	return LKC_OK;
}

/* Fills out from dsn, or leaves it zeroed and fills err. */
static lkc_rc dsn_parse(dsn_ctx *ctx, const char *dsn, size_t len, lkc_dsn *out)
{
	const char *colon, *qmark;
	size_t pos, rest_end;

	if (len == 0) {
		return dsn_fail(ctx, "is empty");
	}
	if (len > LKC_DSN_MAX) {
		return dsn_fail(ctx, "is longer than %d bytes", LKC_DSN_MAX);
	}
	if (memchr(dsn, '\0', len) != NULL) {
		return dsn_fail(ctx, "contains a NUL byte at offset %zu", (size_t) ((const char *) memchr(dsn, '\0', len) - dsn));
	}
	colon = memchr(dsn, ':', len);
	if (colon == NULL) {
		return dsn_fail(ctx, "has no scheme: expected a name followed by ':', such as 'redis:'");
	}
	if (dsn_scheme(ctx, dsn, (size_t) (colon - dsn), out) != LKC_OK) {
		return ctx->err->code;
	}
	pos = (size_t) (colon - dsn) + 1;
	qmark = memchr(dsn + pos, '?', len - pos);
	rest_end = qmark != NULL ? (size_t) (qmark - dsn) : len;
	if (rest_end - pos >= 2 && dsn[pos] == '/' && dsn[pos + 1] == '/') {
		const char *slash = memchr(dsn + pos + 2, '/', rest_end - pos - 2);
		size_t auth_end = slash != NULL ? (size_t) (slash - dsn) : rest_end;

		if (dsn_authority(ctx, dsn, pos + 2, auth_end, out) != LKC_OK) {
			return ctx->err->code;
		}
		pos = auth_end;
	}
	if (rest_end > pos && dsn_decode(ctx, dsn, pos, rest_end - pos, "path", &out->path) != LKC_OK) {
		return ctx->err->code;
	}
	if (qmark != NULL) {
		return dsn_query(ctx, dsn, rest_end + 1, len, out);
	}
	return LKC_OK;
}

lkc_rc lkc_dsn_parse(const char *dsn, size_t len, lkc_dsn *out, lkc_err *err)
{
	dsn_ctx ctx;

	memset(out, 0, sizeof(*out));
	ctx.err = err;
	snprintf(ctx.label, sizeof(ctx.label), "DSN");
	if (dsn_parse(&ctx, dsn, len, out) != LKC_OK) {
		lkc_dsn_free(out);
		return err->code;
	}
	return LKC_OK;
}

void lkc_dsn_free(lkc_dsn *dsn)
{
	for (size_t i = 0; i < dsn->nparams; i++) {
		if (dsn->param_keys != NULL) {
			free(dsn->param_keys[i]);
		}
		if (dsn->param_values != NULL) {
			free(dsn->param_values[i]);
		}
	}
	free(dsn->param_keys);
	free(dsn->param_values);
	free(dsn->scheme);
	free(dsn->user);
	free(dsn->password);
	free(dsn->host);
	free(dsn->path);
	memset(dsn, 0, sizeof(*dsn));
}

lkc_rc lkc_dsn_hosts(const char *list, int default_port, const char *label,
	lkc_redis_addr **out, size_t *count, lkc_err *err)
{
	dsn_ctx ctx;
	lkc_redis_addr *addrs;
	size_t n = 1, len, pos = 0, filled = 0;
	lkc_rc rc = LKC_OK;

	*out = NULL;
	*count = 0;
	ctx.err = err;
	snprintf(ctx.label, sizeof(ctx.label), "%s", label);
	if (list == NULL || list[0] == '\0') {
		return dsn_fail(&ctx, "names no host");
	}
	len = strlen(list);
	for (size_t i = 0; i < len; i++) {
		n += list[i] == ',';
	}
	addrs = calloc(n, sizeof(*addrs));
	if (addrs == NULL) {
		return dsn_oom(&ctx);
	}
	for (size_t i = 0; i < n; i++) {
		const char *comma = memchr(list + pos, ',', len - pos);
		size_t end = comma != NULL ? (size_t) (comma - list) : len;
		dsn_ctx elem;
		lkc_dsn one;

		/* Hosts are never quoted: an unencoded '/' in a password can cut the authority into one. */
		memset(&one, 0, sizeof(one));
		elem.err = err;
		snprintf(elem.label, sizeof(elem.label), "%.20s's host %u", label, (unsigned) (i + 1));
		if (end == pos) {
			rc = dsn_fail(&elem, "is empty: separate the hosts with single commas");
			break;
		}
		if (dsn_hostport(&elem, list + pos, 0, end - pos, &one) != LKC_OK) {
			lkc_dsn_free(&one);
			rc = err->code;
			break;
		}
		if (one.host == NULL) {
			rc = dsn_fail(&elem, "has a port but no host name or address");
			break;
		}
		addrs[i].host = one.host;
		addrs[i].port = one.port != 0 ? one.port : default_port;
		filled = i + 1;
		for (size_t j = 0; j < i; j++) {
			if (addrs[j].port == addrs[i].port && strcasecmp(addrs[j].host, addrs[i].host) == 0) {
				rc = dsn_fail(&elem, "repeats host %zu: name each server once", j + 1);
				break;
			}
		}
		if (rc != LKC_OK) {
			break;
		}
		pos = end + 1;
	}
	if (rc != LKC_OK) {
		lkc_dsn_hosts_free(addrs, filled);
		return rc;
	}
	*out = addrs;
	*count = n;
	return LKC_OK;
}

void lkc_dsn_hosts_free(lkc_redis_addr *addrs, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(addrs[i].host);
	}
	free(addrs);
}

/* Replaces *slot with a copy of value (NULL clears it); LKC_ERR_SYSTEM when out of memory. */
static lkc_rc dsn_set(dsn_ctx *ctx, char **slot, const char *value)
{
	free(*slot);
	*slot = NULL;
	if (value == NULL) {
		return LKC_OK;
	}
	return dsn_copy(ctx, value, strlen(value), slot);
}

/*
 * Reads a database number from db, "/N" (0 to 999999999), into *database;
 * NULL, "" and "/" leave it as it is. what names the part for messages.
 */
static lkc_rc dsn_database(dsn_ctx *ctx, const char *db, const char *what, int *database)
{
	size_t len;

	if (db == NULL || db[0] == '\0' || strcmp(db, "/") == 0) {
		return LKC_OK;
	}
	len = strlen(db + 1);
	/* Never quoted: an unencoded '/' in a password lands in the path. */
	if (db[0] != '/' || len > 9 || strspn(db + 1, "0123456789") != len) {
		return dsn_fail(ctx, "has %s that is not a database number (0 to 999999999)", what);
	}
	*database = atoi(db + 1);
	return LKC_OK;
}

/* Fills cfg's seeds from the DSN's host or host list, default_port where none is given. */
static lkc_rc dsn_seeds(dsn_ctx *ctx, lkc_redis_config *cfg, const lkc_dsn *dsn, int default_port,
	const char *example)
{
	lkc_dsn_hosts_free(cfg->seeds, cfg->nseeds);
	cfg->seeds = NULL;
	cfg->nseeds = 0;
	if (dsn->host == NULL) {
		return dsn_fail(ctx, "names no host: write %s", example);
	}
	if (strchr(dsn->host, ',') != NULL) {
		return lkc_dsn_hosts(dsn->host, default_port, ctx->label, &cfg->seeds, &cfg->nseeds, ctx->err);
	}
	/* One host: the parser took its brackets and its port off already. */
	cfg->seeds = calloc(1, sizeof(*cfg->seeds));
	if (cfg->seeds == NULL) {
		return dsn_oom(ctx);
	}
	cfg->nseeds = 1;
	cfg->seeds[0].port = dsn->port != 0 ? dsn->port : default_port;
	return dsn_copy(ctx, dsn->host, strlen(dsn->host), &cfg->seeds[0].host);
}

/* redis: and rediss:, one server: a host and port, or (redis: only) a unix socket path. */
static lkc_rc dsn_redis_single(dsn_ctx *ctx, lkc_redis_config *cfg, const lkc_dsn *dsn)
{
	const char *scheme = cfg->tls ? "rediss" : "redis";

	if (dsn->host != NULL && strchr(dsn->host, ',') != NULL) {
		return dsn_fail(ctx, "names several hosts: a list of hosts needs %s+sentinel: or %s+cluster:"
			" (several independent masters: redlock:)", scheme, scheme);
	}
	if (dsn->host == NULL) {
		if (dsn->path == NULL || dsn->path[0] != '/' || dsn->path[1] == '\0') {
			return dsn_fail(ctx, "names no host and no unix socket path");
		}
		if (cfg->tls) {
			return dsn_fail(ctx, "names a unix socket, which Redis does not serve over TLS: use redis: for the socket");
		}
		if (dsn_set(ctx, &cfg->socket_path, dsn->path) != LKC_OK) {
			return ctx->err->code;
		}
		return dsn_set(ctx, &cfg->host, NULL);
	}
	if (dsn_set(ctx, &cfg->host, dsn->host) != LKC_OK || dsn_set(ctx, &cfg->socket_path, NULL) != LKC_OK) {
		return ctx->err->code;
	}
	if (dsn->port != 0) {
		cfg->port = dsn->port;
	}
	return dsn_database(ctx, dsn->path, "a path", &cfg->database);
}

/* redis+sentinel: and rediss+sentinel:, the sentinels then "/master[/db]". */
static lkc_rc dsn_redis_sentinel(dsn_ctx *ctx, lkc_redis_config *cfg, const lkc_dsn *dsn, const char *example)
{
	const char *name, *slash;
	size_t len;

	if (dsn_seeds(ctx, cfg, dsn, 26379, example) != LKC_OK) {
		return ctx->err->code;
	}
	name = dsn->path != NULL && dsn->path[0] == '/' ? dsn->path + 1 : "";
	slash = strchr(name, '/');
	len = slash != NULL ? (size_t) (slash - name) : strlen(name);
	if (len == 0) {
		return dsn_fail(ctx, "names no master: write %s", example);
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char) name[i];
		if (c <= 0x20 || c >= 0x7f) {
			return dsn_fail(ctx, "has a master name with a space, a control byte or a non-ASCII byte at offset %zu of it", i);
		}
	}
	free(cfg->master_name);
	cfg->master_name = NULL;
	if (dsn_copy(ctx, name, len, &cfg->master_name) != LKC_OK) {
		return ctx->err->code;
	}
	return dsn_database(ctx, slash, "a path after the master name", &cfg->database);
}

/* redis+cluster: and rediss+cluster:, the nodes to read the slot map from; database 0 only. */
static lkc_rc dsn_redis_cluster(dsn_ctx *ctx, lkc_redis_config *cfg, const lkc_dsn *dsn, const char *example)
{
	int database = 0;

	if (dsn_seeds(ctx, cfg, dsn, 6379, example) != LKC_OK
		|| dsn_database(ctx, dsn->path, "a path", &database) != LKC_OK) {
		return ctx->err->code;
	}
	if (database != 0) {
		return dsn_fail(ctx, "selects a database other than 0, and Redis Cluster has database 0 only");
	}
	cfg->database = 0;
	return LKC_OK;
}

lkc_rc lkc_redis_config_dsn(lkc_redis_config *cfg, const lkc_dsn *dsn, lkc_err *err)
{
	const char *scheme = dsn->scheme != NULL ? dsn->scheme : "";
	const char *rest;
	char example[80];
	dsn_ctx ctx;
	int tls;

	ctx.err = err;
	snprintf(ctx.label, sizeof(ctx.label), "%.24s DSN", scheme);
	tls = strncmp(scheme, "rediss", 6) == 0;
	if (!tls && strncmp(scheme, "redis", 5) != 0) {
		return dsn_fail(&ctx, "is not a Redis DSN: expected the scheme redis, rediss, redis+sentinel, "
			"rediss+sentinel, redis+cluster or rediss+cluster");
	}
	rest = scheme + (tls ? 6 : 5);
	if (rest[0] == '\0') {
		cfg->topology = LKC_REDIS_SINGLE;
	} else if (strcmp(rest, "+sentinel") == 0) {
		cfg->topology = LKC_REDIS_SENTINEL;
	} else if (strcmp(rest, "+cluster") == 0) {
		cfg->topology = LKC_REDIS_CLUSTER;
	} else {
		return dsn_fail(&ctx, "mixes topologies or names an unknown one: expected the scheme redis, rediss, "
			"redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster");
	}
	cfg->tls = tls;
	/* The DSN's credentials are the server's: the master's behind sentinels, every node's in a cluster. */
	if ((dsn->user != NULL && dsn_set(&ctx, &cfg->username, dsn->user) != LKC_OK)
		|| (dsn->password != NULL && dsn_set(&ctx, &cfg->password, dsn->password) != LKC_OK)) {
		return err->code;
	}
	if (cfg->topology == LKC_REDIS_SINGLE) {
		return dsn_redis_single(&ctx, cfg, dsn);
	}
	/* The seeds hold every address: no single host stands for the store. */
	if (dsn_set(&ctx, &cfg->host, NULL) != LKC_OK || dsn_set(&ctx, &cfg->socket_path, NULL) != LKC_OK) {
		return err->code;
	}
	cfg->port = 0;
	if (cfg->topology == LKC_REDIS_SENTINEL) {
		snprintf(example, sizeof(example), "%s://h1:26379,h2,h3/mymaster", scheme);
		return dsn_redis_sentinel(&ctx, cfg, dsn, example);
	}
	snprintf(example, sizeof(example), "%s://h1:7000,h2:7001", scheme);
	return dsn_redis_cluster(&ctx, cfg, dsn, example);
}
