/*
 * The connection layer of the Redis stores (see lkc_redis_conn.h): sockets
 * of our own, TLS by OpenSSL on them, hiredis's reader and formatter, and the
 * pool of idle persistent connections.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_redis_conn.h"
#include "lkc_pool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* Idle persistent connections kept per process; more are closed. */
#define LKC_RCONN_POOL_MAX 64
/* How much one read takes from the socket. */
#define LKC_RCONN_READ 16384

struct lkc_rtls {
	SSL_CTX *ctx;
	char *server_name;         /* NULL: the host connected to */
	int verify;
	int refs;                  /* atomic: the pool lets another thread close a connection */
};

struct lkc_rconn {
	int fd;
	pid_t pid;
	SSL *ssl;                  /* NULL: plain text */
	lkc_rtls *tls;
	char *tls_name;            /* the host to verify and name in SNI when the settings name none */
	int connecting;            /* the TCP connect is in progress */
	int handshaking;           /* the TLS handshake is in progress */
	struct addrinfo *addrs;    /* while connecting: the addresses still to try */
	struct addrinfo *next;
	redisReader *reader;
	int oversized;             /* the reader met an array longer than LKC_RCONN_ELEMENTS_MAX */
	char *obuf;                /* formatted commands not yet written */
	size_t olen, ocap;
	lkc_rconn_err err;
	int errnum;
	char errtext[384];
	int ping_first;            /* nothing authenticated it: its first command goes after a PING (see lkc_rconn_mark_ping) */
};


static BIO_METHOD *lkc_rconn_bio_method;
static pthread_once_t lkc_rconn_bio_once = PTHREAD_ONCE_INIT;

/* Marks the connection broken; the first cause is the one kept. */
static lkc_rconn_step lkc_rconn_fail(lkc_rconn *c, lkc_rconn_err kind, int errnum, const char *text)
{
	if (c->err == LKC_RCONN_OK) {
		c->err = kind;
		c->errnum = errnum;
		snprintf(c->errtext, sizeof(c->errtext), "%s", text != NULL ? text : "");
	}
	return LKC_RCONN_FAILED;
}

/* OpenSSL's latest error as text, emptying its queue. */
static void lkc_rtls_error_text(char *out, size_t size)
{
	/* The first error is the cause; the ones after it are the callers' wrappers ("PEM lib"). */
	unsigned long e = ERR_peek_error();
	const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;

	snprintf(out, size, "%s", reason != NULL ? reason : "unknown TLS error");
	ERR_clear_error();
}

/*
 * The socket BIO of our TLS sessions: it sends with MSG_NOSIGNAL, so that a
 * peer gone is an error and never a SIGPIPE, as on plain connections.
 */
static int lkc_rconn_bio_write(BIO *b, const char *data, int len)
{
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = send((int) (intptr_t) BIO_get_data(b), data, (size_t) len, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		BIO_set_retry_write(b);
	}
	return (int) n;
}

static int lkc_rconn_bio_read(BIO *b, char *data, int len)
{
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = recv((int) (intptr_t) BIO_get_data(b), data, (size_t) len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		BIO_set_retry_read(b);
	}
	return (int) n;
}

static long lkc_rconn_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void) b;
	(void) num;
	(void) ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int lkc_rconn_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static void lkc_rconn_bio_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "lock socket");

	if (m != NULL && BIO_meth_set_write(m, lkc_rconn_bio_write) && BIO_meth_set_read(m, lkc_rconn_bio_read)
		&& BIO_meth_set_ctrl(m, lkc_rconn_bio_ctrl) && BIO_meth_set_create(m, lkc_rconn_bio_create)) {
		lkc_rconn_bio_method = m;
	} else if (m != NULL) {
		BIO_meth_free(m);
	}
}

/* OpenSSL's question for a key's passphrase: none is given (never a prompt on the terminal); *asked records it. */
static int lkc_rtls_no_passphrase(char *buf, int size, int rwflag, void *asked)
{
	(void) buf;
	(void) size;
	(void) rwflag;
	*(int *) asked = 1;
	return 0;
}

/* Checks that an option's file can be read, so the error names it rather than OpenSSL's guess. */
static lkc_rc lkc_rtls_readable(const char *option, const char *path, int dir, lkc_err *err)
{
	if (access(path, dir ? (R_OK | X_OK) : R_OK) != 0) {
		return lkc_err_set(err, LKC_ERR_PERM, "Redis: cannot read %s '%s': %s", option, path, strerror(errno));
	}
	return LKC_OK;
}

/* Frees a half-made context and reports what OpenSSL said about what. */
static lkc_rc lkc_rtls_refused(lkc_rtls *tls, const char *what, lkc_err *err)
{
	char text[160];

	lkc_rtls_error_text(text, sizeof(text));
	lkc_rtls_unref(tls);
	return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: %s: %s", what, text);
}

lkc_rc lkc_rtls_new(const lkc_redis_config *cfg, lkc_rtls **out, lkc_err *err)
{
	lkc_rtls *tls;
	char what[300];
	lkc_rc rc;

	*out = NULL;
	if ((cfg->tls_ca_file != NULL && (rc = lkc_rtls_readable("tls_ca_file", cfg->tls_ca_file, 0, err)) != LKC_OK)
		|| (cfg->tls_ca_dir != NULL && (rc = lkc_rtls_readable("tls_ca_dir", cfg->tls_ca_dir, 1, err)) != LKC_OK)
		|| (cfg->tls_cert != NULL && (rc = lkc_rtls_readable("tls_cert", cfg->tls_cert, 0, err)) != LKC_OK)
		|| (cfg->tls_key != NULL && (rc = lkc_rtls_readable("tls_key", cfg->tls_key, 0, err)) != LKC_OK)) {
		return rc;
	}
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		return lkc_err_set(err, LKC_ERR_INVALID, "Redis: tls_cert and tls_key go together (mutual TLS needs both)");
	}
	pthread_once(&lkc_rconn_bio_once, lkc_rconn_bio_init);
	tls = calloc(1, sizeof(*tls));
	if (tls == NULL || lkc_rconn_bio_method == NULL) {
		free(tls);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory setting up TLS");
	}
	tls->refs = 1;
	tls->verify = cfg->tls_verify;
	if (cfg->tls_server_name != NULL && (tls->server_name = strdup(cfg->tls_server_name)) == NULL) {
		lkc_rtls_unref(tls);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "Redis: out of memory setting up TLS");
	}
	ERR_clear_error();
	tls->ctx = SSL_CTX_new(TLS_client_method());
	if (tls->ctx == NULL) {
		return lkc_rtls_refused(tls, "cannot set up TLS", err);
	}
	SSL_CTX_set_min_proto_version(tls->ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(tls->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (tls->verify) {
		SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, NULL);
		if (cfg->tls_ca_file != NULL || cfg->tls_ca_dir != NULL) {
			if (SSL_CTX_load_verify_locations(tls->ctx, cfg->tls_ca_file, cfg->tls_ca_dir) != 1) {
				snprintf(what, sizeof(what), "cannot load the CA of %s '%s'",
					cfg->tls_ca_file != NULL ? "tls_ca_file" : "tls_ca_dir",
					cfg->tls_ca_file != NULL ? cfg->tls_ca_file : cfg->tls_ca_dir);
				return lkc_rtls_refused(tls, what, err);
			}
		} else if (SSL_CTX_set_default_verify_paths(tls->ctx) != 1) {
			return lkc_rtls_refused(tls, "cannot load the system's CA certificates", err);
		}
	} else {
		SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_NONE, NULL);
	}
	if (cfg->tls_cert != NULL) {
		int asked = 0;

		SSL_CTX_set_default_passwd_cb(tls->ctx, lkc_rtls_no_passphrase);
		SSL_CTX_set_default_passwd_cb_userdata(tls->ctx, &asked);
		if (SSL_CTX_use_certificate_chain_file(tls->ctx, cfg->tls_cert) != 1) {
			snprintf(what, sizeof(what), "cannot load tls_cert '%s'", cfg->tls_cert);
			return lkc_rtls_refused(tls, what, err);
		}
		if (SSL_CTX_use_PrivateKey_file(tls->ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1) {
			if (asked) {
				ERR_clear_error();
				lkc_rtls_unref(tls);
				return lkc_err_set(err, LKC_ERR_SYSTEM,
					"Redis: tls_key '%s' is encrypted: keys with a passphrase are not supported", cfg->tls_key);
			}
			snprintf(what, sizeof(what), "cannot load tls_key '%s'", cfg->tls_key);
			return lkc_rtls_refused(tls, what, err);
		}
		SSL_CTX_set_default_passwd_cb_userdata(tls->ctx, NULL);
		if (SSL_CTX_check_private_key(tls->ctx) != 1) {
			snprintf(what, sizeof(what), "tls_key '%s' does not match tls_cert '%s'", cfg->tls_key, cfg->tls_cert);
			return lkc_rtls_refused(tls, what, err);
		}
	}
	*out = tls;
	return LKC_OK;
}

lkc_rtls *lkc_rtls_ref(lkc_rtls *tls)
{
	if (tls != NULL) {
		__atomic_add_fetch(&tls->refs, 1, __ATOMIC_RELAXED);
	}
	return tls;
}

void lkc_rtls_unref(lkc_rtls *tls)
{
	if (tls == NULL || __atomic_sub_fetch(&tls->refs, 1, __ATOMIC_ACQ_REL) > 0) {
		return;
	}
	SSL_CTX_free(tls->ctx);
	free(tls->server_name);
	free(tls);
}

/* Lets the kernel notice a vanished peer of a connection that sits idle in the pool for long. */
static void lkc_rconn_keepalive(int fd)
{
	int on = 1, idle = 15, interval = 5, count = 3;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

/* Starts a non-blocking connect to the next address to try: WANT_WRITE while it runs. */
static lkc_rconn_step lkc_rconn_try_next(lkc_rconn *c)
{
	int errnum = ECONNREFUSED;

	while (c->next != NULL) {
		struct addrinfo *a = c->next;

		c->next = a->ai_next;
		if (c->fd >= 0) {
			close(c->fd);
		}
		c->fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
		if (c->fd < 0) {
			errnum = errno;
			continue;
		}
		if (connect(c->fd, a->ai_addr, a->ai_addrlen) == 0) {
			c->connecting = 0;
			return LKC_RCONN_DONE;
		}
		if (errno == EINPROGRESS) {
			c->connecting = 1;
			return LKC_RCONN_WANT_WRITE;
		}
		errnum = errno;
	}
	return lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errnum, NULL);
}

/* Starts the TLS session on the connected socket, with SNI and the name to verify. */
static lkc_rconn_step lkc_rconn_tls_start(lkc_rconn *c)
{
	const char *name = c->tls->server_name != NULL ? c->tls->server_name : c->tls_name;
	unsigned char ip[16];
	int is_ip = name != NULL && (inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1);
	BIO *bio;

	ERR_clear_error();
	c->ssl = SSL_new(c->tls->ctx);
	bio = c->ssl != NULL ? BIO_new(lkc_rconn_bio_method) : NULL;
	if (bio == NULL) {
		ERR_clear_error();
		return lkc_rconn_fail(c, LKC_RCONN_ERR_OOM, 0, NULL);
	}
	BIO_set_data(bio, (void *) (intptr_t) c->fd);
	SSL_set_bio(c->ssl, bio, bio);
	if (name != NULL && !is_ip) {
		SSL_set_tlsext_host_name(c->ssl, name);
	}
	if (c->tls->verify && name != NULL) {
		int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), name) : SSL_set1_host(c->ssl, name);

		if (ok != 1) {
			ERR_clear_error();
			return lkc_rconn_fail(c, LKC_RCONN_ERR_TLS, 0, "cannot set the name to verify");
		}
	}
	c->handshaking = 1;
	return lkc_rconn_handshake(c);
}

/* hiredis's own reply constructors, and ours: the same but for arrays past LKC_RCONN_ELEMENTS_MAX. */
static redisReplyObjectFunctions lkc_rconn_hiredis_fn, lkc_rconn_fn;
static pthread_once_t lkc_rconn_fn_once = PTHREAD_ONCE_INIT;

/*
 * hiredis allocates an array's element pointers as soon as it reads its
 * length: a reply that says "*888888888" would cost gigabytes before a
 * single element came. Refused, the reader fails (as out of memory), and
 * privdata, when set, is told why.
 */
#if HIREDIS_MAJOR >= 1
typedef size_t lkc_rconn_count; /* hiredis 1.x counts an array's elements in a size_t */
#else
typedef int lkc_rconn_count;
#endif

static void *lkc_rconn_create_array(const redisReadTask *task, lkc_rconn_count elements)
{
	if (elements > LKC_RCONN_ELEMENTS_MAX) {
		if (task->privdata != NULL) {
			*(int *) task->privdata = 1;
		}
		return NULL;
	}
	return lkc_rconn_hiredis_fn.createArray(task, elements);
}

static void lkc_rconn_fn_init(void)
{
	redisReader *r = redisReaderCreate();

	if (r != NULL) {
		lkc_rconn_hiredis_fn = *r->fn;
		lkc_rconn_fn = *r->fn;
		lkc_rconn_fn.createArray = lkc_rconn_create_array;
		redisReaderFree(r);
	}
}

redisReader *lkc_rconn_reader(int *oversized)
{
	redisReader *r;

	pthread_once(&lkc_rconn_fn_once, lkc_rconn_fn_init);
	if (lkc_rconn_fn.createArray == NULL || (r = redisReaderCreateWithFunctions(&lkc_rconn_fn)) == NULL) {
		return NULL;
	}
	r->privdata = oversized;
	return r;
}

lkc_rconn *lkc_rconn_open(const lkc_rconn_target *t, lkc_rconn_step *step)
{
	lkc_rconn *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->reader = lkc_rconn_reader(&c->oversized)) == NULL) {
		free(c);
		*step = LKC_RCONN_FAILED;
		return NULL;
	}
	c->fd = -1;
	c->pid = lkc_pid();
	c->tls = lkc_rtls_ref(t->tls);
	if (c->tls != NULL && t->host != NULL && (c->tls_name = strdup(t->host)) == NULL) {
		*step = lkc_rconn_fail(c, LKC_RCONN_ERR_OOM, 0, NULL);
		return c;
	}
	if (t->socket_path != NULL) {
		struct sockaddr_un sun;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", t->socket_path);
		c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			*step = lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errno, NULL);
		} else if (connect(c->fd, (struct sockaddr *) &sun, sizeof(sun)) == 0) {
			*step = c->tls != NULL ? lkc_rconn_tls_start(c) : LKC_RCONN_DONE;
		} else {
			/* A unix socket connects at once or not at all: EAGAIN is a full listen queue. */
			*step = lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errno, NULL);
		}
		return c;
	} else {
		char text[sizeof(c->errtext)];

		if (lkc_resolve(t->host, t->port, t->deadline, &c->addrs, text, sizeof(text)) != 0) {
			/* errnum 0 with a text: the resolver's words. */
			*step = lkc_rconn_fail(c, LKC_RCONN_ERR_IO, 0, text);
			return c;
		}
		c->next = c->addrs;
		*step = lkc_rconn_try_next(c);
	}
	if (*step == LKC_RCONN_DONE) {
		lkc_rconn_keepalive(c->fd);
		if (c->tls != NULL) {
			*step = lkc_rconn_tls_start(c);
		}
	}
	return c;
}

/* Explains a failed handshake: the verification result when there is one, else OpenSSL's reason. */
static lkc_rconn_step lkc_rconn_tls_failed(lkc_rconn *c, int ssl_err)
{
	char text[sizeof(((lkc_rconn *) 0)->errtext)];
	long verify = SSL_get_verify_result(c->ssl);

	if (ssl_err == SSL_ERROR_SYSCALL && ERR_peek_last_error() == 0) {
		int errnum = errno;

		ERR_clear_error();
		if (errnum == 0) {
			return lkc_rconn_fail(c, LKC_RCONN_ERR_TLS, 0,
				"the server closed the connection during the TLS handshake (does it speak TLS?)");
		}
		return lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errnum, NULL);
	}
	if (verify != X509_V_OK) {
		snprintf(text, sizeof(text), "certificate verification failed: %s", X509_verify_cert_error_string(verify));
		ERR_clear_error();
	} else {
		unsigned long e = ERR_peek_last_error();
		char reason[96];

		lkc_rtls_error_text(reason, sizeof(reason));
		snprintf(text, sizeof(text), "TLS handshake failed: %s%s", reason,
			ERR_GET_REASON(e) == SSL_R_WRONG_VERSION_NUMBER || ERR_GET_REASON(e) == SSL_R_PACKET_LENGTH_TOO_LONG
				? " (does the server speak TLS?)" : "");
	}
	return lkc_rconn_fail(c, LKC_RCONN_ERR_TLS, 0, text);
}

lkc_rconn_step lkc_rconn_handshake(lkc_rconn *c)
{
	int r;

	if (c->err != LKC_RCONN_OK) {
		return LKC_RCONN_FAILED;
	}
	if (c->connecting) {
		int so_err = 0;
		socklen_t len = sizeof(so_err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so_err, &len) != 0) {
			so_err = errno;
		}
		if (so_err != 0) {
			lkc_rconn_step step;

			if (c->next == NULL) {
				return lkc_rconn_fail(c, LKC_RCONN_ERR_IO, so_err, NULL);
			}
			step = lkc_rconn_try_next(c);
			if (step != LKC_RCONN_DONE) {
				return step;
			}
		}
		c->connecting = 0;
		if (c->addrs != NULL) {
			lkc_rconn_keepalive(c->fd);
		}
		if (c->tls != NULL && c->ssl == NULL) {
			return lkc_rconn_tls_start(c);
		}
	}
	if (c->addrs != NULL) {
		freeaddrinfo(c->addrs);
		c->addrs = c->next = NULL;
	}
	if (!c->handshaking) {
		return LKC_RCONN_DONE;
	}
	ERR_clear_error();
	errno = 0;
	r = SSL_connect(c->ssl);
	if (r == 1) {
		c->handshaking = 0;
		return LKC_RCONN_DONE;
	}
	switch (SSL_get_error(c->ssl, r)) {
		case SSL_ERROR_WANT_READ:
			return LKC_RCONN_WANT_READ;
		case SSL_ERROR_WANT_WRITE:
			return LKC_RCONN_WANT_WRITE;
		default:
			return lkc_rconn_tls_failed(c, SSL_get_error(c->ssl, r));
	}
}

/* Writes "<mark><n>\r\n" at out; returns its length. */
static size_t lkc_rconn_head(char *out, char mark, size_t n)
{
	size_t at;

	out[0] = mark;
	at = 1 + lkc_i64_str(out + 1, (int64_t) n);
	out[at++] = '\r';
	out[at++] = '\n';
	return at;
}

/*
 * Formats the command as RESP straight into the output buffer: this is every
 * call's path, so no intermediate copy and no printf.
 */
int lkc_rconn_append(lkc_rconn *c, int argc, const char **argv, const size_t *lens)
{
	/* A header is at most a mark, 20 digits and CRLF; each argument adds its own CRLF. */
	size_t need = 24;
	char *out;

	if (argc < 1) {
		return 0;
	}
	for (int i = 0; i < argc; i++) {
		if (lens[i] > SIZE_MAX / 2 - need - 26) {
			return 0;
		}
		need += 26 + lens[i];
	}
	if (c->olen + need > c->ocap) {
		size_t cap = c->ocap > 0 ? c->ocap : 256;
		char *grown;

		while (cap < c->olen + need) {
			cap *= 2;
		}
		grown = realloc(c->obuf, cap);
		if (grown == NULL) {
			return 0;
		}
		c->obuf = grown;
		c->ocap = cap;
	}
	out = c->obuf + c->olen;
	out += lkc_rconn_head(out, '*', (size_t) argc);
	for (int i = 0; i < argc; i++) {
		out += lkc_rconn_head(out, '$', lens[i]);
		if (lens[i] > 0) {
			memcpy(out, argv[i], lens[i]);
		}
		out += lens[i];
		*out++ = '\r';
		*out++ = '\n';
	}
	c->olen = (size_t) (out - c->obuf);
	return 1;
}

/* Maps what SSL_read or SSL_write answered to a step. */
static lkc_rconn_step lkc_rconn_tls_io(lkc_rconn *c, int r, const char *doing)
{
	int e = SSL_get_error(c->ssl, r);
	char text[160], reason[120];

	switch (e) {
		case SSL_ERROR_WANT_READ:
			return LKC_RCONN_WANT_READ;
		case SSL_ERROR_WANT_WRITE:
			return LKC_RCONN_WANT_WRITE;
		case SSL_ERROR_ZERO_RETURN:
			return lkc_rconn_fail(c, LKC_RCONN_ERR_EOF, 0, NULL);
		case SSL_ERROR_SYSCALL:
			if (ERR_peek_last_error() == 0) {
				return lkc_rconn_fail(c, errno != 0 ? LKC_RCONN_ERR_IO : LKC_RCONN_ERR_EOF, errno, NULL);
			}
			/* fall through */
		default:
			lkc_rtls_error_text(reason, sizeof(reason));
			snprintf(text, sizeof(text), "TLS error %s: %s", doing, reason);
			return lkc_rconn_fail(c, LKC_RCONN_ERR_TLS, 0, text);
	}
}

lkc_rconn_step lkc_rconn_flush(lkc_rconn *c)
{
	size_t sent = 0;
	lkc_rconn_step step = LKC_RCONN_DONE;

	if (c->err != LKC_RCONN_OK) {
		return LKC_RCONN_FAILED;
	}
	while (sent < c->olen) {
		if (c->ssl != NULL) {
			int r;

			ERR_clear_error();
			errno = 0;
			r = SSL_write(c->ssl, c->obuf + sent, (int) (c->olen - sent > INT32_MAX ? INT32_MAX : c->olen - sent));
			if (r > 0) {
				sent += (size_t) r;
				continue;
			}
			step = lkc_rconn_tls_io(c, r, "sending");
			break;
		} else {
			ssize_t n = send(c->fd, c->obuf + sent, c->olen - sent, MSG_NOSIGNAL);

			if (n >= 0) {
				sent += (size_t) n;
				continue;
			}
			if (errno == EINTR) {
				continue;
			}
			step = errno == EAGAIN || errno == EWOULDBLOCK
				? LKC_RCONN_WANT_WRITE : lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errno, NULL);
			break;
		}
	}
	memmove(c->obuf, c->obuf + sent, c->olen - sent);
	c->olen -= sent;
	return step;
}

/* Reads everything the socket (and the TLS session) has into the reader: DONE when it got some. */
static lkc_rconn_step lkc_rconn_fill(lkc_rconn *c)
{
	char buf[LKC_RCONN_READ];
	int got = 0;

	for (;;) {
		ssize_t n;

		if (c->ssl != NULL) {
			int r;

			ERR_clear_error();
			errno = 0;
			r = SSL_read(c->ssl, buf, sizeof(buf));
			if (r <= 0) {
				lkc_rconn_step step = lkc_rconn_tls_io(c, r, "reading");

				return got && step != LKC_RCONN_FAILED ? LKC_RCONN_DONE : step;
			}
			n = r;
		} else {
			n = recv(c->fd, buf, sizeof(buf), 0);
			if (n == 0) {
				return lkc_rconn_fail(c, LKC_RCONN_ERR_EOF, 0, NULL);
			}
			if (n < 0) {
				if (errno == EINTR) {
					continue;
				}
				if (errno == EAGAIN || errno == EWOULDBLOCK) {
					return got ? LKC_RCONN_DONE : LKC_RCONN_WANT_READ;
				}
				return lkc_rconn_fail(c, LKC_RCONN_ERR_IO, errno, NULL);
			}
		}
		if (redisReaderFeed(c->reader, buf, (size_t) n) != REDIS_OK) {
			return lkc_rconn_fail(c, LKC_RCONN_ERR_OOM, 0, NULL);
		}
		got = 1;
		/* What the kernel still has, poll() sees; only what the TLS session decrypted and kept must be read now. */
		if (c->ssl == NULL || SSL_pending(c->ssl) == 0) {
			return LKC_RCONN_DONE;
		}
	}
}

lkc_rconn_step lkc_rconn_reply(lkc_rconn *c, redisReply **reply)
{
	*reply = NULL;
	for (;;) {
		void *r = NULL;
		lkc_rconn_step step;

		if (c->err != LKC_RCONN_OK) {
			return LKC_RCONN_FAILED;
		}
		if (redisReaderGetReply(c->reader, &r) != REDIS_OK) {
			if (c->oversized) {
				return lkc_rconn_fail(c, LKC_RCONN_ERR_PROTOCOL, 0, "a reply array longer than the store ever asks for");
			}
			return lkc_rconn_fail(c, c->reader->err == REDIS_ERR_OOM ? LKC_RCONN_ERR_OOM : LKC_RCONN_ERR_PROTOCOL,
				0, c->reader->errstr);
		}
		if (r != NULL) {
			*reply = r;
			return LKC_RCONN_DONE;
		}
		step = lkc_rconn_fill(c);
		if (step != LKC_RCONN_DONE) {
			return step;
		}
	}
}

int lkc_rconn_fd(const lkc_rconn *c)
{
	return c->fd;
}

int lkc_rconn_in_handshake(const lkc_rconn *c)
{
	return !c->connecting && c->handshaking;
}

pid_t lkc_rconn_pid(const lkc_rconn *c)
{
	return c->pid;
}

int lkc_rconn_buffered(const lkc_rconn *c)
{
	return c->reader->pos < c->reader->len || (c->ssl != NULL && SSL_has_pending(c->ssl));
}

int lkc_rconn_idle(lkc_rconn *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLRDHUP, .revents = 0 };

	if (c->err != LKC_RCONN_OK || c->olen > 0 || c->connecting || c->handshaking
		|| c->reader->pos < c->reader->len || (c->ssl != NULL && SSL_has_pending(c->ssl))) {
		return 0;
	}
	return poll(&pfd, 1, 0) == 0;
}

lkc_rconn_err lkc_rconn_error(const lkc_rconn *c, int *errnum, const char **text)
{
	*errnum = c->errnum;
	*text = c->errtext;
	return c->err;
}

void lkc_rconn_mark_ping(lkc_rconn *c)
{
	c->ping_first = 1;
}

int lkc_rconn_take_ping(lkc_rconn *c)
{
	int ping = c->ping_first;

	c->ping_first = 0;
	return ping;
}

void lkc_rconn_close(lkc_rconn *c)
{
	if (c == NULL) {
		return;
	}
	/* SSL_free writes nothing: no close_notify, which a forked child must never send. */
	SSL_free(c->ssl);
	lkc_rtls_unref(c->tls);
	free(c->tls_name);
	if (c->fd >= 0) {
		close(c->fd);
	}
	if (c->addrs != NULL) {
		freeaddrinfo(c->addrs);
	}
	redisReaderFree(c->reader);
	free(c->obuf);
	free(c);
}

static int lkc_rconn_reusable(void *c)
{
	return lkc_rconn_idle(c);
}

/* Closing never writes, so a parent's connection is closed as ours is: the parent's session stays intact. */
static void lkc_rconn_unpool(void *c, int ours)
{
	(void) ours;
	lkc_rconn_close(c);
}

static lkc_pool lkc_rconn_pool = LKC_POOL_INIT(lkc_rconn_reusable, lkc_rconn_unpool, LKC_RCONN_POOL_MAX);

/*
 * Takes an idle connection of this process made with the same settings, or
 * NULL. One with anything to read (a reply nobody waited for, a hang-up) is
 * closed instead: a reused connection must be known idle.
 */
lkc_rconn *lkc_rconn_pool_take(const char *key, size_t key_len)
{
	return lkc_pool_take(&lkc_rconn_pool, key, key_len);
}

/* Keeps c for reuse by this process, or closes it. */
void lkc_rconn_pool_put(const char *key, size_t key_len, lkc_rconn *c)
{
	lkc_pool_put(&lkc_rconn_pool, key, key_len, c);
}

/* Closes every pooled connection; a forked child closes only its copies of the sockets. */
void lkc_rconn_pool_shutdown(void)
{
	lkc_pool_shutdown(&lkc_rconn_pool);
}
