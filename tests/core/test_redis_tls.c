/*
 * Unit tests of the Redis store over TLS, against redis-server processes
 * with --tls-port and certificates made here with the openssl command.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "t.h"
#include "redis_server.h"

static char t_dir[64];       /* the certificates */
static t_redis t_srv;        /* TLS with the good certificate, client certificates optional */
static t_redis t_mutual;     /* TLS that requires a client certificate */
static t_redis t_expired;    /* TLS with an expired certificate */
static int t_tls_port, t_mutual_port, t_expired_port;
static int t_up;

/* Runs a shell command in the certificate directory; 0 when it worked. */
__attribute__((format(printf, 1, 2)))
static int t_sh(const char *fmt, ...)
{
	char cmd[1024], full[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd %s && { %s; } >/dev/null 2>&1", t_dir, cmd);
	return system(full);
}

/* A path in the certificate directory (one of a few static buffers). */
static const char *t_path(const char *name)
{
	static char bufs[8][128];
	static int next;
	char *out = bufs[next++ % 8];

	snprintf(out, 128, "%s/%s", t_dir, name);
	return out;
}

/* A CA, a server certificate for localhost and 127.0.0.1, an expired one, a client one, and another CA. */
static int t_make_certs(void)
{
	snprintf(t_dir, sizeof(t_dir), "/tmp/lkc-tls-XXXXXX");
	if (mkdtemp(t_dir) == NULL) {
		return -1;
	}
	return t_sh("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' >san.cnf"
		" && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=lock-test-ca"
		" && openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 2 -subj /CN=other-ca"
		" && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost"
		" && openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile san.cnf"
		" && openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out old.crt -days -1 -extfile san.cnf"
		" && openssl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj /CN=lock-client"
		" && openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out cli.crt -days 2"
		" && openssl pkey -in cli.key -aes256 -passout pass:secret -out enc.key"
		" && chmod 644 *.key");
}

/* Starts a server with a plain port (for set-up) and a TLS port serving cert, with clients' certificates as auth says. */
static int t_start_tls(t_redis *r, int *tls_port, const char *cert, const char *auth)
{
	static char ports[3][16], certs[3][128], keys[3][128], cas[3][128];
	static int n;
	int i = n++ % 3;

	*tls_port = t_free_port();
	snprintf(ports[i], sizeof(ports[i]), "%d", *tls_port);
	snprintf(certs[i], sizeof(certs[i]), "%s/%s", t_dir, cert);
	snprintf(keys[i], sizeof(keys[i]), "%s/srv.key", t_dir);
	snprintf(cas[i], sizeof(cas[i]), "%s/ca.crt", t_dir);
	{
		const char *extra[] = { "--tls-port", ports[i], "--tls-cert-file", certs[i], "--tls-key-file", keys[i],
			"--tls-ca-cert-file", cas[i], "--tls-auth-clients", auth, NULL };
		static const char *kept[3][11];

		memcpy(kept[i], extra, sizeof(extra));
		r->dir[0] = '\0';
		r->extra = kept[i];
		return t_redis_start_opts(r, 0, 0, NULL);
	}
}

static void t_stop_all(void)
{
	lkc_redis_pool_shutdown();
	if (t_up) {
		t_redis_stop(&t_srv);
		t_redis_stop(&t_mutual);
		t_redis_stop(&t_expired);
		t_up = 0;
	}
	if (t_dir[0] != '\0') {
		t_sh("rm -f *.key *.crt *.csr *.srl san.cnf");
		rmdir(t_dir);
	}
}

static void t_setup(void)
{
	if (t_up) {
		return;
	}
	if (t_make_certs() != 0 || t_start_tls(&t_srv, &t_tls_port, "srv.crt", "optional") != 0
		|| t_start_tls(&t_mutual, &t_mutual_port, "srv.crt", "yes") != 0
		|| t_start_tls(&t_expired, &t_expired_port, "old.crt", "no") != 0) {
		fprintf(stderr, "cannot set up the TLS servers\n");
		exit(1);
	}
	t_up = 1;
	atexit(t_stop_all);
}

/* A TLS config for host:port; the strings given are copied, NULL leaves a setting out. */
static void t_tls_config(lkc_redis_config *cfg, const char *host, int port, const char *ca, const char *cert,
	const char *key, const char *name)
{
	lkc_redis_config_init(cfg);
	free(cfg->host);
	cfg->host = strdup(host);
	cfg->port = port;
	cfg->tls = 1;
	cfg->prefix = strdup("tls:");
	cfg->prefix_len = 4;
	cfg->tls_ca_file = ca != NULL ? strdup(ca) : NULL;
	cfg->tls_cert = cert != NULL ? strdup(cert) : NULL;
	cfg->tls_key = key != NULL ? strdup(key) : NULL;
	cfg->tls_server_name = name != NULL ? strdup(name) : NULL;
}

/* Opens the store of cfg and tries one acquire+release: the acquire's result, its message in err. */
static lkc_rc t_cycle(lkc_redis_config *cfg, lkc_err *err)
{
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_rc rc;

	lkc_err_clear(err);
	rc = lkc_redis_open(&store, cfg, err);
	lkc_redis_config_free(cfg);
	if (rc != LKC_OK) {
		return rc;
	}
	lkc_hold_init(&h, "res", 3, err);
	rc = lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, 5000, 0, err);
	if (rc == LKC_OK) {
		lkc_err ignored;

		CHECK_RC(lkc_release(store, &h, 0, &ignored), LKC_OK, &ignored);
	}
	lkc_hold_dispose(&h);
	lkc_store_release(store);
	return rc;
}

static void verified_tls_works_by_name_and_by_address(void)
{
	lkc_redis_config cfg;
	lkc_err err;

	t_setup();
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), NULL, NULL, NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_OK, &err);
	t_tls_config(&cfg, "127.0.0.1", t_tls_port, t_path("ca.crt"), NULL, NULL, NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_OK, &err);
	/* The name verified may differ from the host connected to. */
	t_tls_config(&cfg, "127.0.0.1", t_tls_port, t_path("ca.crt"), NULL, NULL, "localhost");
	CHECK_RC(t_cycle(&cfg, &err), LKC_OK, &err);
}

static void mutual_tls_needs_the_client_certificate(void)
{
	lkc_redis_config cfg;
	lkc_err err;

	t_setup();
	t_tls_config(&cfg, "localhost", t_mutual_port, t_path("ca.crt"), t_path("cli.crt"), t_path("cli.key"), NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_OK, &err);
	/* Without one the server ends the session: an I/O error, not a hang. */
	t_tls_config(&cfg, "localhost", t_mutual_port, t_path("ca.crt"), NULL, NULL, NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "localhost:") != NULL);
}

static void bad_certificates_fail_clearly(void)
{
	lkc_redis_config cfg;
	lkc_err err;
	uint64_t start;

	t_setup();
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("other.crt"), NULL, NULL, NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "certificate verification failed") != NULL);
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), NULL, NULL, "wrong.example");
	CHECK_RC(t_cycle(&cfg, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "hostname mismatch") != NULL);
	t_tls_config(&cfg, "localhost", t_expired_port, t_path("ca.crt"), NULL, NULL, NULL);
	CHECK_RC(t_cycle(&cfg, &err), LKC_ERR_IO, &err);
	CHECK(strstr(err.msg, "expired") != NULL);
	/* Verification off (test set-ups only): any certificate goes. */
	t_tls_config(&cfg, "localhost", t_expired_port, t_path("other.crt"), NULL, NULL, "wrong.example");
	cfg.tls_verify = 0;
	CHECK_RC(t_cycle(&cfg, &err), LKC_OK, &err);
	/* A plain server behind TLS: it waits for the end of a "command", so the timeout ends it, named. */
	t_tls_config(&cfg, "127.0.0.1", t_srv.port, t_path("ca.crt"), NULL, NULL, NULL);
	cfg.timeout_ms = 300;
	start = lkc_now_ns();
	CHECK_RC(t_cycle(&cfg, &err), LKC_ERR_IO, &err);
	CHECK((lkc_now_ns() - start) / 1000000 < 1300);
	CHECK(strstr(err.msg, "TLS handshake") != NULL);
}

static void unreadable_files_are_named(void)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_err err;

	t_setup();
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("missing.crt"), NULL, NULL, NULL);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_PERM, &err);
	CHECK(strstr(err.msg, "tls_ca_file") != NULL && strstr(err.msg, "missing.crt") != NULL);
	lkc_redis_config_free(&cfg);
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), t_path("cli.crt"), t_path("srv.key"), NULL);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_SYSTEM, &err);
	CHECK(strstr(err.msg, "tls_key") != NULL && strstr(err.msg, "mismatch") != NULL);
	lkc_redis_config_free(&cfg);
	/* A key that is not a key. */
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), t_path("cli.crt"), t_path("san.cnf"), NULL);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_SYSTEM, &err);
	CHECK(strstr(err.msg, "tls_key") != NULL);
	lkc_redis_config_free(&cfg);
	/* A key with a passphrase: refused at once, never a prompt on the terminal. */
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), t_path("cli.crt"), t_path("enc.key"), NULL);
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_ERR_SYSTEM, &err);
	CHECK(strstr(err.msg, "encrypted") != NULL);
	lkc_redis_config_free(&cfg);
	CHECK(store == NULL);
}

/* How many connections the server has accepted so far. */
static long long t_connections(t_redis *r)
{
	redisReply *reply = t_redis_cmd(r, "INFO stats");
	const char *at = reply != NULL && reply->type == REDIS_REPLY_STRING ? strstr(reply->str, "total_connections_received:") : NULL;
	long long n = at != NULL ? atoll(at + strlen("total_connections_received:")) : -1;

	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return n;
}

/* A persistent TLS connection is reused by the next store; a forked child never writes on it. */
static void persistent_sessions_survive_a_child(void)
{
	lkc_redis_config cfg;
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_err err;
	long long before, after;
	pid_t pid;
	int status = -1;

	t_setup();
	lkc_err_clear(&err);
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), NULL, NULL, NULL);
	cfg.persistent = 1;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	lkc_hold_init(&h, "fork", 4, &err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, 5000, 0, &err), LKC_OK, &err);
	before = t_connections(&t_srv);
	pid = fork();
	if (pid == 0) {
		lkc_hold c;
		int locked = 0;
		lkc_err e;

		/* The child's calls go out on a connection of its own; its hold view is its own too. */
		lkc_hold_init(&c, "fork", 4, &e);
		if (store->ops->is_locked(store, "fork", 4, &locked, &e) != LKC_OK || !locked) {
			_exit(2);
		}
		if (lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, 5000, 0, &e) != LKC_BUSY) {
			_exit(3);
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The parent's session still works after the child closed its copy. */
	CHECK_RC(lkc_refresh(store, &h, 5000, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	lkc_store_release(store);
	/* The next store of the same settings takes the pooled session: no new connection. */
	t_tls_config(&cfg, "localhost", t_tls_port, t_path("ca.crt"), NULL, NULL, NULL);
	cfg.persistent = 1;
	CHECK_RC(lkc_redis_open(&store, &cfg, &err), LKC_OK, &err);
	lkc_redis_config_free(&cfg);
	lkc_hold_init(&h, "fork", 4, &err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, 5000, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	after = t_connections(&t_srv);
	/* Connections made meanwhile: the child's, and none for the second store. */
	CHECK(after - before == 1);
	lkc_hold_dispose(&h);
	lkc_store_release(store);
}

TEST_MAIN(T(verified_tls_works_by_name_and_by_address), T(mutual_tls_needs_the_client_certificate),
	T(bad_certificates_fail_clearly), T(unreadable_files_are_named), T(persistent_sessions_survive_a_child))
