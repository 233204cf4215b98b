/*
 * Throwaway redis-server processes for the C tests: each on a free loopback
 * port with its own directory, killed with the test process at the latest.
 */
#ifndef LKC_T_REDIS_SERVER_H
#define LKC_T_REDIS_SERVER_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

/* Each test program uses the helpers it needs of these. */
#pragma GCC diagnostic ignored "-Wunused-function"

typedef struct {
	pid_t pid;
	int port;
	char dir[64];
	char sock[128];          /* the unix socket, "" when not asked for */
	char password[64];       /* --requirepass, "" for none */
	redisContext *admin;     /* a plain hiredis connection for set-up and inspection */
	const char *const *extra; /* more arguments for redis-server (NULL-terminated), or NULL */
} t_redis;

/* Set by the SIGALRM that t_alarm_in arms. */
static volatile sig_atomic_t t_alarmed;

static void t_on_alarm(int sig)
{
	(void) sig;
	t_alarmed = 1;
}

/* Arms a one-shot SIGALRM in ms milliseconds, with a handler that does not restart calls. */
static void t_alarm_in(long ms)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	t_alarmed = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A loopback port nobody listens on right now: the kernel picks one for a socket bound to port 0. */
static int t_free_port(void)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *) &addr, sizeof(addr)) == 0
		&& getsockname(fd, (struct sockaddr *) &addr, &len) == 0) {
		port = ntohs(addr.sin_port);
	}
	if (fd >= 0) {
		close(fd);
	}
	return port;
}

/* Sleeps ms milliseconds, resuming after signals. */
static void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/* Connects the admin connection and answers whether the server serves commands yet. */
static int t_redis_ready(t_redis *r)
{
	struct timeval tv = { 0, 200000 };
	redisReply *reply;
	int ok;

	if (r->admin == NULL) {
		r->admin = redisConnectWithTimeout("127.0.0.1", r->port, tv);
		if (r->admin == NULL) {
			return 0;
		}
		if (r->admin->err != 0) {
			redisFree(r->admin);
			r->admin = NULL;
			return 0;
		}
		redisSetTimeout(r->admin, (struct timeval) { 10, 0 });
		if (r->password[0] != '\0') {
			reply = redisCommand(r->admin, "AUTH %s", r->password);
			if (reply != NULL) {
				freeReplyObject(reply);
			}
		}
	}
	reply = redisCommand(r->admin, "PING");
	ok = reply != NULL && reply->type == REDIS_REPLY_STATUS;
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	if (!ok) {
		redisFree(r->admin);
		r->admin = NULL;
	}
	return ok;
}

/*
 * Starts redis-server on r->port (a free one when 0), with a unix socket when
 * want_sock and a password when password is not NULL; waits until it answers.
 */
static int t_redis_start_opts(t_redis *r, int port, int want_sock, const char *password)
{
	char port_s[16];
	const char *argv[32];
	int argc = 0;

	if (r->dir[0] == '\0') {
		const char *const *extra = r->extra;

		memset(r, 0, sizeof(*r));
		r->extra = extra;
		snprintf(r->dir, sizeof(r->dir), "/tmp/lkc-redis-XXXXXX");
		if (mkdtemp(r->dir) == NULL) {
			return -1;
		}
	}
	r->admin = NULL;
	r->port = port != 0 ? port : t_free_port();
	if (want_sock) {
		snprintf(r->sock, sizeof(r->sock), "%s/redis.sock", r->dir);
	}
	if (password != NULL) {
		snprintf(r->password, sizeof(r->password), "%s", password);
	}
	snprintf(port_s, sizeof(port_s), "%d", r->port);
	argv[argc++] = "redis-server";
	argv[argc++] = "--port";
	argv[argc++] = port_s;
	argv[argc++] = "--bind";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = "--save";
	argv[argc++] = "";
	argv[argc++] = "--appendonly";
	argv[argc++] = "no";
	argv[argc++] = "--daemonize";
	argv[argc++] = "no";
	argv[argc++] = "--dir";
	argv[argc++] = r->dir;
	argv[argc++] = "--loglevel";
	argv[argc++] = "warning";
	if (r->sock[0] != '\0') {
		argv[argc++] = "--unixsocket";
		argv[argc++] = r->sock;
		argv[argc++] = "--unixsocketperm";
		argv[argc++] = "700";
	}
	if (r->password[0] != '\0') {
		argv[argc++] = "--requirepass";
		argv[argc++] = r->password;
	}
	for (int i = 0; r->extra != NULL && r->extra[i] != NULL && argc < 31; i++) {
		argv[argc++] = r->extra[i];
	}
	argv[argc] = NULL;

	r->pid = fork();
	if (r->pid < 0) {
		return -1;
	}
	if (r->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* Never outlive the test, whatever way it ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("redis-server", (char *const *) argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int status;

		if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
			r->pid = 0;
			fprintf(stderr, "redis-server on port %d exited at start\n", r->port);
			return -1;
		}
		if (t_redis_ready(r)) {
			return 0;
		}
		t_sleep_ms(20);
	}
	fprintf(stderr, "redis-server on port %d did not answer\n", r->port);
	return -1;
}

/* Starts a plain server on a free port. */
static int t_redis_start(t_redis *r)
{
	r->dir[0] = '\0';
	r->extra = NULL;
	return t_redis_start_opts(r, 0, 0, NULL);
}

/* Kills the server with sig (resuming it first if stopped) and reaps it; the directory stays for a restart. */
static void t_redis_kill(t_redis *r, int sig)
{
	if (r->admin != NULL) {
		redisFree(r->admin);
		r->admin = NULL;
	}
	if (r->pid > 0) {
		kill(r->pid, SIGCONT);
		kill(r->pid, sig);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
}

/* Starts the server again on the same port, socket and password. */
static int t_redis_restart(t_redis *r)
{
	return t_redis_start_opts(r, r->port, r->sock[0] != '\0', NULL);
}

/* Stops the server and removes its directory. */
static void t_redis_stop(t_redis *r)
{
	char path[192];

	t_redis_kill(r, SIGTERM);
	if (r->dir[0] != '\0') {
		if (r->sock[0] != '\0') {
			unlink(r->sock);
		}
		snprintf(path, sizeof(path), "%s/dump.rdb", r->dir);
		unlink(path);
		rmdir(r->dir);
		r->dir[0] = '\0';
	}
}

/* Runs a command on the admin connection (hiredis format, %b for binary); the caller frees the reply. */
static redisReply *t_redis_cmd(t_redis *r, const char *fmt, ...)
{
	va_list ap;
	redisReply *reply;

	if (r->admin == NULL && !t_redis_ready(r)) {
		return NULL;
	}
	va_start(ap, fmt);
	reply = redisvCommand(r->admin, fmt, ap);
	va_end(ap);
	return reply;
}

/* Runs a command that answers an integer; returns it, or LLONG_MIN on any other answer. */
static long long t_redis_int(t_redis *r, const char *fmt, ...)
{
	va_list ap;
	redisReply *reply;
	long long v = -9223372036854775807LL - 1;

	if (r->admin == NULL && !t_redis_ready(r)) {
		return v;
	}
	va_start(ap, fmt);
	reply = redisvCommand(r->admin, fmt, ap);
	va_end(ap);
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER) {
		v = reply->integer;
	}
	if (reply != NULL) {
		freeReplyObject(reply);
	}
	return v;
}

/* What a t_proxy does to the first connection it relays; later ones pass untouched. */
typedef enum {
	T_PROXY_DROP_REPLY,      /* forwards the first request, then hangs up instead of relaying the answer */
	T_PROXY_DROP_REQUEST     /* hangs up on the first request without forwarding it */
} t_proxy_mode;

typedef struct {
	pid_t pid;
	int port;
} t_proxy;

/* Writes all of buf; 0 on success. */
static int t_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return -1;
		}
		buf += n;
		len -= (size_t) n;
	}
	return 0;
}

/* Relays one client connection to the server on upstream_port, faulting the first request when fault is set. */
static void t_proxy_serve(int client, int upstream_port, int fault, t_proxy_mode mode)
{
	struct sockaddr_in addr;
	struct pollfd pfd[2];
	char buf[65536];
	int up = socket(AF_INET, SOCK_STREAM, 0);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t) upstream_port);
	if (up < 0 || connect(up, (struct sockaddr *) &addr, sizeof(addr)) != 0) {
		_exit(1);
	}
	pfd[0].fd = client;
	pfd[1].fd = up;
	pfd[0].events = pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			_exit(1);
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (pfd[i].revents == 0) {
				continue;
			}
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				_exit(0);
			}
			if (fault && i == 0 && mode == T_PROXY_DROP_REQUEST) {
				_exit(0);
			}
			if (fault && i == 1) {
				/* The server ran the request; its answer never reaches the client. */
				_exit(0);
			}
			if (t_write_all(pfd[1 - i].fd, buf, (size_t) n) != 0) {
				_exit(0);
			}
		}
	}
}

/* Starts a relay on a free loopback port to the server on upstream_port. */
static int t_proxy_start(t_proxy *p, int upstream_port, t_proxy_mode mode)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *) &addr, sizeof(addr)) != 0 || listen(lfd, 16) != 0
		|| getsockname(lfd, (struct sockaddr *) &addr, &len) != 0) {
		return -1;
	}
	p->port = ntohs(addr.sin_port);
	p->pid = fork();
	if (p->pid < 0) {
		close(lfd);
		return -1;
	}
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGCHLD, SIG_IGN);
		for (int n = 0; ; n++) {
			int client = accept(lfd, NULL, NULL);
			pid_t pid;

			if (client < 0) {
				if (errno == EINTR) {
					n--;
					continue;
				}
				_exit(1);
			}
			pid = fork();
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close(lfd);
				t_proxy_serve(client, upstream_port, n == 0, mode);
			}
			close(client);
		}
	}
	close(lfd);
	return 0;
}

/* Stops the relay and every connection it serves. */
static void t_proxy_stop(t_proxy *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
}

#endif
