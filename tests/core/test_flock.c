/* Unit tests of the flock store, on real files in a fresh temporary directory. */
#define _GNU_SOURCE
#include "t.h"
#include "t_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Generous bound for waits that must succeed; a failure shows as BUSY, never as a hang. */
#define LONG_WAIT_MS 20000

/* A fresh directory under /tmp, its path in buf. */
static void make_tmpdir(char buf[64])
{
	CHECK(t_make_tmpdir(buf, "flock"));
}

static lkc_store *open_store(const char *dir)
{
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_open(&store, dir, 0600, &err), LKC_OK, &err);
	return store;
}

static void init_hold(lkc_hold *hold, const char *resource)
{
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_hold_init(hold, resource, strlen(resource), &err), LKC_OK, &err);
}

/*
 * A wait that must be ended by a wake-up: LKC_OK only if acquired before its
 * (generous) deadline, since a lost wake-up shows as a last try at the deadline.
 */
static lkc_rc acquire_woken(lkc_store *store, lkc_hold *hold, lkc_mode mode, lkc_err *err)
{
	uint64_t start = lkc_now_ns();
	lkc_rc rc = lkc_acquire(store, hold, mode, LKC_TTL_NONE, LONG_WAIT_MS, err);

	if (rc == LKC_OK && lkc_now_ns() - start >= (uint64_t) LONG_WAIT_MS * 1000000u) {
		snprintf(err->msg, sizeof(err->msg), "acquired only at the deadline: no wake-up");
		return LKC_BUSY;
	}
	return rc;
}

/* Waits for a child and returns its exit status, or 128 + signal. */
static int reap(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		continue;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Blocks until the child writes its byte to the pipe. */
static void await_child(int fd)
{
	char c;

	CHECK(read(fd, &c, 1) == 1);
}

/* Whether another open file description has an OFD lock on byte of fd's file. */
static int has_mark(int fd, off_t byte)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = byte;
	fl.l_len = 1;
	CHECK(fcntl(fd, F_OFD_GETLK, &fl) == 0);
	return fl.l_type != F_UNLCK;
}

/*
 * Whether another open file description marks itself as waiting on fd's file: an
 * OFD read lock on byte 0 (asleep on inotify) or byte 2 (asleep on the futex word).
 */
static int has_waiter(int fd)
{
	return has_mark(fd, 0) || has_mark(fd, 2);
}

/* Whether another open file description marks itself as a waiting writer on fd's file (byte 1). */
static int has_writer(int fd)
{
	return has_mark(fd, 1);
}

/* Waits (10 s at most) until somebody marks itself as waiting on fd's file; whether somebody did. */
static int await_waiter(int fd)
{
	for (int i = 0; i < 2000 && !has_waiter(fd); i++) {
		usleep(5000);
	}
	return has_waiter(fd);
}

/* Waits (10 s at most) until somebody marks itself as a waiting writer on fd's file; whether somebody did. */
static int await_writer(int fd)
{
	for (int i = 0; i < 2000 && !has_writer(fd); i++) {
		usleep(5000);
	}
	return has_writer(fd);
}

/* In another process with a store of its own, one attempt at resource in mode: the child's lkc_rc. */
static lkc_rc other_process_tries(const char *dir, const char *resource, lkc_mode mode)
{
	pid_t pid = fork();

	if (pid == 0) {
		lkc_store *store = NULL;
		lkc_hold h;
		lkc_err err;

		if (lkc_flock_open(&store, dir, 0600, &err) != LKC_OK
			|| lkc_hold_init(&h, resource, strlen(resource), &err) != LKC_OK) {
			_exit(100);
		}
		_exit(lkc_acquire(store, &h, mode, LKC_TTL_NONE, 0, &err));
	}
	return (lkc_rc) reap(pid);
}

/* The number of descriptors this process has open. */
static int open_fds(void)
{
	int n = 0;
	char path[64];

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/* The path of resource's lock file in dir, in buf. */
static void lock_path(char *buf, size_t size, const char *dir, const char *resource)
{
	char *name = lkc_flock_file_name(resource, strlen(resource));

	snprintf(buf, size, "%s/%s", dir, name);
	free(name);
}

/* Whether name is a lock file name that cannot leave its directory. */
static int name_is_safe(const char *name, size_t len)
{
	size_t n = strlen(name);

	return n > 0 && n <= 48 + 1 + 64 + 5 && name[0] != '.'
		&& strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n
		&& strcmp(name + n - 5, ".lock") == 0
		&& (len == 0 || n == (len < 48 ? len : 48) + 1 + 64 + 5);
}

static void file_names_are_safe(void)
{
	static const struct { const char *s; size_t len; } hostile[] = {
		{ "../x", 4 }, { "/etc/passwd", 11 }, { "a\0b", 3 }, { ".", 1 }, { "..", 2 },
		{ ".hidden", 7 }, { "a/b", 3 }, { "a-b", 3 }, { "\n\t\xff", 3 }, { "plain", 5 },
	};
	char *big = malloc(LKC_RESOURCE_MAX);
	char *names[sizeof(hostile) / sizeof(hostile[0])];
	char *name;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		names[i] = lkc_flock_file_name(hostile[i].s, hostile[i].len);
		CHECK(names[i] != NULL && name_is_safe(names[i], hostile[i].len));
	}
	CHECK(strncmp(names[0], "-.-x.", 5) == 0);
	CHECK(strncmp(names[9], "plain.", 6) == 0);
	/* Lossy readable parts still give distinct names. */
	CHECK(strcmp(names[6], names[7]) != 0);
	CHECK(strncmp(names[2], "a-b.", 4) == 0 && strcmp(names[2], names[7]) != 0);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		free(names[i]);
	}
	memset(big, '/', LKC_RESOURCE_MAX);
	name = lkc_flock_file_name(big, LKC_RESOURCE_MAX);
	CHECK(name != NULL && name_is_safe(name, LKC_RESOURCE_MAX));
	free(name);
	free(big);
}

static void hostile_resources_stay_inside(void)
{
	static const char *const hostile[] = { "../escape", "/etc/passwd-lkc-test", "..", "x/../../escape2" };
	char top[64], dir[96], path[160];
	lkc_store *store;
	lkc_err err;
	int files = 0;

	make_tmpdir(top);
	snprintf(dir, sizeof(dir), "%s/locks", top);
	store = open_store(dir);
	lkc_err_clear(&err);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		lkc_hold h;
		init_hold(&h, hostile[i]);
		CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
		lkc_hold_dispose(&h);
	}
	/* Nothing beside the lock directory, nothing but lock files in it. */
	snprintf(path, sizeof(path), "%s/escape", top);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/escape2", top);
	CHECK(access(path, F_OK) != 0);
	CHECK(access("/etc/passwd-lkc-test", F_OK) != 0);
	{
		char cmd[160];
		FILE *ls;
		char line[256];

		snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
		ls = popen(cmd, "r");
		CHECK(ls != NULL);
		while (ls != NULL && fgets(line, sizeof(line), ls) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			CHECK(name_is_safe(line, 0));
			files++;
		}
		if (ls != NULL) {
			pclose(ls);
		}
		snprintf(cmd, sizeof(cmd), "ls -A %s", top);
		ls = popen(cmd, "r");
		CHECK(ls != NULL && fgets(line, sizeof(line), ls) != NULL && strcmp(line, "locks\n") == 0);
		CHECK(ls != NULL && fgets(line, sizeof(line), ls) == NULL);
		if (ls != NULL) {
			pclose(ls);
		}
	}
	CHECK(files == 4);
	store->ops->destroy(store);
	rm_rf(top);
}

static void exclusive_holds_conflict_in_process(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "res");
	init_hold(&b, "res");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	/* Acquiring again in the same mode keeps the hold. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(a.fd == -1 && a.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* Releasing what is not held is a no-op. */
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void shared_holds_coexist(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b, c;
	lkc_err err;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "shared");
	init_hold(&b, "shared");
	init_hold(&c, "shared");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &c, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_hold_dispose(&c);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void timed_wait_ends_busy(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "timed");
	init_hold(&b, "timed");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 100, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 30, &err), LKC_BUSY, &err);
	CHECK(b.mode == LKC_MODE_NONE && b.fd == -1);
	/* The waits are over, and so are their marks: releases need not wake anybody, readers need not hold back. */
	CHECK(!has_waiter(a.fd) && !has_writer(a.fd));
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 100, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

/* The lock layer counts every answer once under the store's kind (Lock\stats()). */
static void counters_follow_answers(void)
{
	lkc_stats *st = &lkc_stats_of[LKC_KIND_FLOCK];
	lkc_stats before;
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;

	make_tmpdir(dir);
	store = open_store(dir);
	CHECK(st->used);
	before = *st;
	init_hold(&a, "counted");
	init_hold(&b, "counted");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 20, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_refresh(store, &a, LKC_TTL_NONE, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 20, &err), LKC_OK, &err);
	/* Broken: found gone by the check and by the release, counted once. */
	CHECK_RC(store->ops->force_release(store, "counted", 7, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &b, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_check(store, &b, &err), LKC_EXPIRED, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_EXPIRED, &err);
	CHECK(st->n[LKC_STAT_ACQUIRED] - before.n[LKC_STAT_ACQUIRED] == 2);
	CHECK(st->n[LKC_STAT_FAILED] - before.n[LKC_STAT_FAILED] == 1);
	CHECK(st->n[LKC_STAT_TIMED_OUT] - before.n[LKC_STAT_TIMED_OUT] == 1);
	CHECK(st->n[LKC_STAT_WAITED] - before.n[LKC_STAT_WAITED] == 1);
	CHECK(st->n[LKC_STAT_HANDED_OVER] == before.n[LKC_STAT_HANDED_OVER]);
	CHECK(st->n[LKC_STAT_REFRESHED] - before.n[LKC_STAT_REFRESHED] == 1);
	CHECK(st->n[LKC_STAT_RELEASED] - before.n[LKC_STAT_RELEASED] == 1);
	CHECK(st->n[LKC_STAT_EXPIRED] - before.n[LKC_STAT_EXPIRED] == 1);
	CHECK(st->n[LKC_STAT_LOST] == before.n[LKC_STAT_LOST]);
	CHECK(st->n[LKC_STAT_STORAGE_ERRORS] == before.n[LKC_STAT_STORAGE_ERRORS]);
	/* At least the 20 ms of the wait that timed out. */
	CHECK(st->wait_ns - before.wait_ns >= 20000000u);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

/* In a child: takes the lock with a store of its own, writes a byte to fd, then calls then(). */
static void child_hold(const char *dir, const char *resource, lkc_mode mode, int fd, void (*then)(lkc_store *, lkc_hold *))
{
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_err err;

	if (lkc_flock_open(&store, dir, 0600, &err) != LKC_OK
		|| lkc_hold_init(&h, resource, strlen(resource), &err) != LKC_OK
		|| lkc_acquire(store, &h, mode, LKC_TTL_NONE, 0, &err) != LKC_OK) {
		_exit(2);
	}
	if (write(fd, "x", 1) != 1) {
		_exit(3);
	}
	then(store, &h);
	_exit(0);
}

static void then_die(lkc_store *store, lkc_hold *h)
{
	(void) store;
	(void) h;
	usleep(200000);
	raise(SIGKILL);
}

static void then_release_and_live(lkc_store *store, lkc_hold *h)
{
	lkc_err err;

	usleep(200000);
	if (lkc_release(store, h, 0, &err) != LKC_OK) {
		_exit(4);
	}
	for (;;) {
		pause();
	}
}

static void killed_holder_frees_waiter(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold h;
	lkc_err err;
	int p[2];
	pid_t pid;

	make_tmpdir(dir);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child_hold(dir, "killed", LKC_MODE_EXCLUSIVE, p[1], then_die);
	}
	close(p[1]);
	await_child(p[0]);
	close(p[0]);
	store = open_store(dir);
	init_hold(&h, "killed");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	/* The child dies holding the lock while we wait: the kernel frees it and wakes us. */
	CHECK_RC(acquire_woken(store, &h, LKC_MODE_EXCLUSIVE, &err), LKC_OK, &err);
	CHECK(reap(pid) == 128 + SIGKILL);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void release_wakes_waiter(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold h;
	lkc_err err;
	int p[2];
	pid_t pid;

	make_tmpdir(dir);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child_hold(dir, "woken", LKC_MODE_EXCLUSIVE, p[1], then_release_and_live);
	}
	close(p[1]);
	await_child(p[0]);
	close(p[0]);
	store = open_store(dir);
	init_hold(&h, "woken");
	lkc_err_clear(&err);
	/* A shared waiter is woken by the release of a holder that lives on. */
	CHECK_RC(acquire_woken(store, &h, LKC_MODE_SHARED, &err), LKC_OK, &err);
	kill(pid, SIGKILL);
	CHECK(reap(pid) == 128 + SIGKILL);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void release_while_child_keeps_descriptor(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int p[2];
	pid_t keeper, waiter;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "inherited");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	/* This child inherits our descriptor, and with it our open file description, and keeps it. */
	keeper = fork();
	if (keeper == 0) {
		for (;;) {
			pause();
		}
	}
	CHECK(pipe(p) == 0);
	waiter = fork();
	if (waiter == 0) {
		lkc_store *s2 = NULL;
		lkc_hold h;
		lkc_rc rc;

		close(p[0]);
		lkc_abandon(store, &a);
		if (lkc_flock_open(&s2, dir, 0600, &err) != LKC_OK || lkc_hold_init(&h, "inherited", 9, &err) != LKC_OK
			|| lkc_acquire(s2, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err) != LKC_BUSY) {
			_exit(2);
		}
		if (write(p[1], "x", 1) != 1) {
			_exit(3);
		}
		rc = acquire_woken(s2, &h, LKC_MODE_EXCLUSIVE, &err);
		_exit(rc == LKC_OK ? 0 : 1);
	}
	close(p[1]);
	await_child(p[0]);
	close(p[0]);
	usleep(50000);
	/* The release must unlock despite the keeper, and wake the waiter although our close() is not the last. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(waiter) == 0);
	kill(keeper, SIGKILL);
	CHECK(reap(keeper) == 128 + SIGKILL);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void forked_child_abandons(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "parent");
	init_hold(&b, "parent");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		int locked = 0;

		if (lkc_release(store, &a, 0, &err) != LKC_ERR_STATE) {
			_exit(2);
		}
		lkc_abandon(store, &a);
		if (a.fd != -1 || store->ops->is_locked(store, "parent", 6, &locked, &err) != LKC_OK || !locked) {
			_exit(3);
		}
		_exit(0);
	}
	CHECK(reap(pid) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void force_release_breaks_holder(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	int locked = -1;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "forced");
	init_hold(&b, "forced");
	lkc_err_clear(&err);
	/* Nothing to break yet. */
	CHECK_RC(store->ops->force_release(store, "forced", 6, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "forced", 6, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(store->ops->is_locked(store, "forced", 6, &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	/* Releasing a broken hold lets go of the orphaned file and says who has the lock now. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_LOST, &err);
	CHECK(a.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &b, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* A refresh of a broken hold reports it and lets the old file go. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "forced", 6, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, LKC_TTL_NONE, &err), LKC_EXPIRED, &err);
	CHECK(a.mode == LKC_MODE_NONE && a.fd == -1);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void force_release_wakes_waiter(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int p[2];
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "stuck");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		lkc_store *s2 = NULL;
		lkc_hold h;
		lkc_rc rc;

		close(p[0]);
		lkc_abandon(store, &a);
		if (lkc_flock_open(&s2, dir, 0600, &err) != LKC_OK || lkc_hold_init(&h, "stuck", 5, &err) != LKC_OK
			|| write(p[1], "x", 1) != 1) {
			_exit(2);
		}
		rc = acquire_woken(s2, &h, LKC_MODE_EXCLUSIVE, &err);
		_exit(rc == LKC_OK ? 0 : 1);
	}
	close(p[1]);
	await_child(p[0]);
	close(p[0]);
	usleep(50000);
	/* Our hold stays on the old inode; the waiter moves to the new file. */
	CHECK_RC(store->ops->force_release(store, "stuck", 5, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK(lkc_check(store, &a, &err) != LKC_OK);
	lkc_release(store, &a, 0, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void is_locked_sees_every_mode(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int locked = -1;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "probe");
	lkc_err_clear(&err);
	CHECK_RC(store->ops->is_locked(store, "probe", 5, &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, "probe", 5, &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, "probe", 5, &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, "probe", 5, &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	/* The probe must not have disturbed the hold. */
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void directory_is_created(void)
{
	char top[64], dir[128], file[128];
	lkc_store *store = NULL;
	lkc_err err;
	struct stat st;
	mode_t old = umask(022);
	pid_t pid;
	int fd;

	make_tmpdir(top);
	snprintf(dir, sizeof(dir), "%s/a//b/c/", top);
	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_open(&store, dir, 0640, &err), LKC_OK, &err);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0750);
	if (store != NULL) {
		store->ops->destroy(store);
	}
	/* An existing directory is used as it is. */
	store = open_store(dir);
	if (store != NULL) {
		store->ops->destroy(store);
	}
	/* A file where the directory should be, or on its way, is an error that says so. */
	snprintf(file, sizeof(file), "%s/file", top);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_RC(lkc_flock_open(&store, file, 0600, &err), LKC_ERR_SYSTEM, &err);
	CHECK(strstr(err.msg, "not a directory") != NULL && strstr(err.msg, "flock: ") == err.msg);
	snprintf(dir, sizeof(dir), "%s/file/sub", top);
	CHECK_RC(lkc_flock_open(&store, dir, 0600, &err), LKC_ERR_SYSTEM, &err);
	CHECK(strstr(err.msg, "cannot open directory") != NULL && strstr(err.msg, "Not a directory") != NULL);
	CHECK(store == NULL);
	/* A directory that cannot be made is an error naming the part that failed. */
	snprintf(dir, sizeof(dir), "%s/ro", top);
	CHECK(chmod(top, 0755) == 0 && mkdir(dir, 0555) == 0);
	pid = fork();
	if (pid == 0) {
		lkc_rc rc;
		char want[160];

		/* root may write anywhere: drop to nobody to meet the permission check. */
		if (geteuid() == 0 && setuid(65534) != 0) {
			_exit(2);
		}
		snprintf(dir, sizeof(dir), "%s/ro/sub/deeper", top);
		snprintf(want, sizeof(want), "flock: cannot create directory %s/ro/sub: Permission denied", top);
		rc = lkc_flock_open(&store, dir, 0600, &err);
		_exit(rc == LKC_ERR_PERM && strcmp(err.msg, want) == 0 ? 0 : 1);
	}
	CHECK(reap(pid) == 0);
	CHECK_RC(lkc_flock_open(&store, "", 0600, &err), LKC_ERR_INVALID, &err);
	CHECK_RC(lkc_flock_open(&store, top, 01777, &err), LKC_ERR_INVALID, &err);
	umask(old);
	rm_rf(top);
}

static void symlink_is_refused(void)
{
	char dir[64], target[128], link[256];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int locked = -1;
	char *name = lkc_flock_file_name("evil", 4);

	make_tmpdir(dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/%s", dir, name);
	CHECK(symlink(target, link) == 0);
	store = open_store(dir);
	init_hold(&a, "evil");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_ERR_PERM, &err);
	CHECK(strstr(err.msg, "symbolic link") != NULL);
	CHECK(access(target, F_OK) != 0);
	CHECK(a.fd == -1 && a.mode == LKC_MODE_NONE);
	CHECK(store->ops->is_locked(store, "evil", 4, &locked, &err) == LKC_ERR_PERM);
	/* force_release replaces the link itself, never what it points to. */
	CHECK_RC(store->ops->force_release(store, "evil", 4, &err), LKC_OK, &err);
	CHECK(access(target, F_OK) != 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	free(name);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void holds_convert(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "convert");
	init_hold(&b, "convert");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	/* A promotion that cannot happen leaves the reader a reader. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 50, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_EXCLUSIVE);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void cached_file_serves_repeated_holds(void)
{
	char dir[64], path[256];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	int fd, fds;

	make_tmpdir(dir);
	lock_path(path, sizeof(path), dir, "kept");
	store = open_store(dir);
	init_hold(&a, "kept");
	init_hold(&b, "kept");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	fd = a.fd;
	/* The offset belongs to the open file description: a reopen would reset it. */
	CHECK(lseek(fd, 7, SEEK_SET) == 7);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(a.fd == -1);
	/* Another hold of this store gets the idle file from the cache. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(b.fd == fd && lseek(b.fd, 0, SEEK_CUR) == 7);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* Two holds at once need two descriptions: the second is cached as well. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	fds = open_fds();
	for (int i = 0; i < 5; i++) {
		CHECK_RC(lkc_acquire(store, &a, i % 2 ? LKC_MODE_SHARED : LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
		CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
		CHECK(a.fd == -1 && a.mode == LKC_MODE_NONE);
		CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	}
	CHECK(open_fds() == fds);
	/* Another process's holds conflict with a cached description as with a fresh one. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(other_process_tries(dir, "kept", LKC_MODE_EXCLUSIVE) == LKC_BUSY);
	CHECK(other_process_tries(dir, "kept", LKC_MODE_SHARED) == LKC_OK);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(other_process_tries(dir, "kept", LKC_MODE_EXCLUSIVE) == LKC_OK);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	CHECK(open_fds() == fds);
	CHECK(access(path, F_OK) == 0);
	/* The store removes its idle files when it goes. */
	store->ops->destroy(store);
	CHECK(access(path, F_OK) != 0);
	rm_rf(dir);
}

/* In a child: waits (long) for resource in mode with a store of its own; exits 0 only when woken. */
static void child_waits(const char *dir, const char *resource, lkc_mode mode)
{
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_err err;

	if (lkc_flock_open(&store, dir, 0600, &err) != LKC_OK
		|| lkc_hold_init(&h, resource, strlen(resource), &err) != LKC_OK) {
		_exit(2);
	}
	_exit(acquire_woken(store, &h, mode, &err) == LKC_OK ? 0 : 1);
}

static void release_wakes_waiter_without_close(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	pid_t pid;
	int fd;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "no-close");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	fd = a.fd;
	CHECK(!has_waiter(fd));
	pid = fork();
	if (pid == 0) {
		child_waits(dir, "no-close", LKC_MODE_EXCLUSIVE);
	}
	/* The waiter marks itself before it sleeps; our release looks for that mark, as it closes nothing. */
	CHECK(await_waiter(fd));
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	/* The file stays open in the store's cache. */
	CHECK(a.fd == -1);
	CHECK(reap(pid) == 0);
	CHECK(!has_waiter(fd));
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void downgrade_wakes_readers(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "downgrade");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		child_waits(dir, "downgrade", LKC_MODE_SHARED);
	}
	CHECK(await_waiter(a.fd));
	/* Turning reader lets the waiting reader in, although nothing was released. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void force_release_while_kept_reopens(void)
{
	char dir[64], path[256];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	struct stat mine, at;
	int locked = 0;

	make_tmpdir(dir);
	lock_path(path, sizeof(path), dir, "replaced");
	store = open_store(dir);
	init_hold(&a, "replaced");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, "replaced", 8, &err), LKC_OK, &err);
	/* The kept descriptor is the orphaned file: the hold must move to the new one. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(fstat(a.fd, &mine) == 0 && stat(path, &at) == 0 && mine.st_ino == at.st_ino && mine.st_nlink == 1);
	CHECK(other_process_tries(dir, "replaced", LKC_MODE_SHARED) == LKC_BUSY);
	CHECK_RC(store->ops->is_locked(store, "replaced", 8, &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(other_process_tries(dir, "replaced", LKC_MODE_EXCLUSIVE) == LKC_OK);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

/* The number of lock files (names ending in .lock) in dir. */
static int lock_files(const char *dir)
{
	char cmd[160], line[256];
	FILE *ls;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	ls = popen(cmd, "r");
	while (ls != NULL && fgets(line, sizeof(line), ls) != NULL) {
		n += strstr(line, ".lock\n") != NULL;
	}
	if (ls != NULL) {
		pclose(ls);
	}
	return n;
}

static void idle_files_are_removed(void)
{
	char dir[64], path[256], name[32];
	lkc_store *store;
	lkc_hold a, h;
	lkc_err err;
	int64_t t1 = -1, t2 = -1, t3 = -1;

	make_tmpdir(dir);
	lock_path(path, sizeof(path), dir, "removed");
	store = open_store(dir);
	init_hold(&a, "removed");
	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_set_cache(store, -1, &err), LKC_ERR_INVALID, &err);
	CHECK_RC(lkc_flock_set_cache(store, 65537, &err), LKC_ERR_INVALID, &err);
	/* Without a cache, a released file nobody waits for goes at once, and its counter lives on. */
	CHECK_RC(lkc_flock_set_cache(store, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &t1, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(access(path, F_OK) != 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &t2, &err), LKC_OK, &err);
	CHECK(t2 > t1);
	/* A file held elsewhere stays. */
	CHECK(other_process_tries(dir, "removed", LKC_MODE_EXCLUSIVE) == LKC_BUSY);
	CHECK(access(path, F_OK) == 0);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(lock_files(dir) == 0);
	/* With a cache of two, a hundred names leave two files. */
	CHECK_RC(lkc_flock_set_cache(store, 2, &err), LKC_OK, &err);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "name-%d", i);
		init_hold(&h, name);
		CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
		CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
		lkc_hold_dispose(&h);
	}
	CHECK(lock_files(dir) == 2);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &t3, &err), LKC_OK, &err);
	CHECK(t3 > t2);
	/* A file removed by hand while held: check() says so. */
	CHECK(unlink(path) == 0);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	CHECK(lock_files(dir) == 0);
	rm_rf(dir);
}

static void hold_after_fork_is_not_shared(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int go[2], ready[2];
	pid_t holder, child = -1;

	make_tmpdir(dir);
	CHECK(pipe(go) == 0 && pipe(ready) == 0);
	holder = fork();
	if (holder == 0) {
		/* Holds, forks a child that outlives us, and dies without releasing. */
		store = open_store(dir);
		init_hold(&a, "after-fork");
		if (lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err) != LKC_OK) {
			_exit(2);
		}
		child = fork();
		if (child == 0) {
			char c;
			pid_t self = getpid();

			/*
			 * The child says it is there itself: fork() returns to it only after its
			 * fork handlers ran, while the parent may run on (and exit) before.
			 */
			if (write(ready[1], &self, sizeof(self)) != (ssize_t) sizeof(self)) {
				_exit(4);
			}
			close(ready[1]);
			close(go[1]);
			/* Until the test closes go, whatever our parent does. */
			if (read(go[0], &c, 1) < 0) {
				_exit(3);
			}
			_exit(0);
		}
		_exit(child > 0 ? 0 : 5);
	}
	close(ready[1]);
	close(go[0]);
	CHECK(read(ready[0], &child, sizeof(child)) == (ssize_t) sizeof(child));
	CHECK(reap(holder) == 0);
	/* The holder is gone, its child lives on with what it inherited closed: the lock is free. */
	CHECK(kill(child, 0) == 0);
	CHECK(other_process_tries(dir, "after-fork", LKC_MODE_EXCLUSIVE) == LKC_OK);
	close(go[1]);
	close(ready[0]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
		continue;
	}
	rm_rf(dir);
}

static volatile sig_atomic_t alarmed;

static void on_alarm(int sig)
{
	(void) sig;
	alarmed = 1;
}

static int alarm_hook(void)
{
	return alarmed;
}

static void host_interrupts_wait(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	struct sigaction sa, old;
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "interrupt");
	init_hold(&b, "interrupt");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old);
	alarmed = 0;
	lkc_set_interrupt_hook(alarm_hook);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, LKC_WAIT_FOREVER, &err), LKC_INTERRUPTED, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK(!has_waiter(a.fd) && !has_writer(a.fd));
	lkc_set_interrupt_hook(NULL);
	sigaction(SIGALRM, &old, NULL);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void fencing_tokens_increase(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	int64_t t1 = -1, t2 = -1, t3 = -1, again = -1;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "fenced");
	init_hold(&b, "fenced");
	lkc_err_clear(&err);
	/* Not held: no token. */
	CHECK_RC(lkc_fence(store, &a, &t1, &err), LKC_ERR_STATE, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &t1, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &again, &err), LKC_OK, &err);
	CHECK(t1 >= 1 && again == t1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	/* A hold that never asks leaves the counter alone; the next one that asks gets more. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &b, &t2, &err), LKC_OK, &err);
	CHECK(t2 > t1);
	/* A forced release carries the counter to the new file, ahead of the broken holder. */
	CHECK_RC(store->ops->force_release(store, "fenced", 6, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &t3, &err), LKC_OK, &err);
	CHECK(t3 > t2 + 1);
	/* Shared holds have none. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_fence(store, &a, &again, &err), LKC_ERR_STATE, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

/* In a child: opens a store of its own on dir and a hold on resource, or exits 100. */
static void child_setup(const char *dir, const char *resource, lkc_store **store, lkc_hold *h)
{
	lkc_err err;

	if (lkc_flock_open(store, dir, 0600, &err) != LKC_OK
		|| lkc_hold_init(h, resource, strlen(resource), &err) != LKC_OK) {
		_exit(100);
	}
}

static void readers_hold_back_for_waiting_writer(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b, c;
	lkc_err err;
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "prefer");
	init_hold(&b, "prefer");
	init_hold(&c, "prefer");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	/* Readers mark nothing while they hold. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(!has_writer(a.fd) && !has_waiter(a.fd));
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		child_waits(dir, "prefer", LKC_MODE_EXCLUSIVE);
	}
	CHECK(await_writer(a.fd));
	/*
	 * Only a reader holds the lock, yet a new reader waits behind the writer, in this
	 * process as in another (b, whose last release found nobody waiting, may take one
	 * more hold without looking; c has not released anything yet).
	 */
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_SHARED, LKC_TTL_NONE, 50, &err), LKC_BUSY, &err);
	CHECK(c.mode == LKC_MODE_NONE);
	CHECK(other_process_tries(dir, "prefer", LKC_MODE_SHARED) == LKC_BUSY);
	/* The last reader's release lets the writer in; it exits holding, which releases. */
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(!has_writer(b.fd) && !has_waiter(b.fd));
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&c);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

/*
 * A reader whose last release found nobody waiting takes its next hold without
 * looking for a waiting writer's mark: a writer that began to wait since sees
 * that reader take one more hold, and no second one.
 */
static void quiet_release_allows_one_more_reader(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;
	int go[2];
	char c = 'g';

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "quiet");
	init_hold(&b, "quiet");
	lkc_err_clear(&err);
	CHECK(pipe(go) == 0);
	/* Forked first: a fork since a hold's last acquire makes it reopen its file, and look. */
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		await_child(go[0]);
		child_waits(dir, "quiet", LKC_MODE_EXCLUSIVE);
	}
	close(go[0]);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK(write(go[1], &c, 1) == 1);
	close(go[1]);
	CHECK(await_writer(a.fd));
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* That release saw the writer's mark: from now on b holds back. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void demotion_ignores_waiting_writer(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "demote");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		child_waits(dir, "demote", LKC_MODE_EXCLUSIVE);
	}
	CHECK(await_writer(a.fd));
	/* The writer's mark holds new readers back, not the holder that turns reader. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK(other_process_tries(dir, "demote", LKC_MODE_SHARED) == LKC_BUSY);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void promotion_waits_as_writer(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "promote");
	init_hold(&b, "promote");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		lkc_store *s2;
		lkc_hold h;

		child_setup(dir, "promote", &s2, &h);
		if (lkc_acquire(s2, &h, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err) != LKC_OK) {
			_exit(2);
		}
		_exit(acquire_woken(s2, &h, LKC_MODE_EXCLUSIVE, &err) == LKC_OK ? 0 : 1);
	}
	CHECK(await_writer(a.fd));
	/* A reader waiting to become the writer holds new readers back like any writer. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

/* How many reader processes keep the stream going; each holds for a while and reads again at once. */
#define STREAM_READERS 4

/* In a child: reads resource again and again, staggered by index, until stop reaches end of file; writes to ready once in. */
static void child_reads_until_stopped(const char *dir, const char *resource, int index, int ready, int stop)
{
	lkc_store *store;
	lkc_hold h;
	lkc_err err;
	char c;

	child_setup(dir, resource, &store, &h);
	if (fcntl(stop, F_SETFL, O_NONBLOCK) != 0) {
		_exit(2);
	}
	usleep((useconds_t) index * 7000);
	for (int n = 0;; n++) {
		if (lkc_acquire(store, &h, LKC_MODE_SHARED, LKC_TTL_NONE, LONG_WAIT_MS, &err) != LKC_OK) {
			_exit(1);
		}
		if (n == 0 && write(ready, "x", 1) != 1) {
			_exit(3);
		}
		usleep(25000);
		if (lkc_release(store, &h, 0, &err) != LKC_OK) {
			_exit(4);
		}
		if (read(stop, &c, 1) == 0) {
			_exit(0);
		}
	}
}

static void writer_not_starved_by_readers(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold w;
	lkc_err err;
	pid_t pids[STREAM_READERS];
	int ready[2], stop[2];

	make_tmpdir(dir);
	CHECK(pipe(ready) == 0 && pipe(stop) == 0);
	for (int i = 0; i < STREAM_READERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			close(ready[0]);
			close(stop[1]);
			child_reads_until_stopped(dir, "stream", i, ready[1], stop[0]);
		}
	}
	close(ready[1]);
	close(stop[0]);
	for (int i = 0; i < STREAM_READERS; i++) {
		await_child(ready[0]);
	}
	close(ready[0]);
	/* Let the holds overlap: from now on some reader always holds the lock, and they go on until told to stop. */
	usleep(100000);
	store = open_store(dir);
	init_hold(&w, "stream");
	lkc_err_clear(&err);
	CHECK_RC(acquire_woken(store, &w, LKC_MODE_EXCLUSIVE, &err), LKC_OK, &err);
	CHECK(w.mode == LKC_MODE_EXCLUSIVE);
	CHECK(other_process_tries(dir, "stream", LKC_MODE_SHARED) == LKC_BUSY);
	CHECK_RC(lkc_release(store, &w, 0, &err), LKC_OK, &err);
	/* The readers carry on after the writer, and stop when the pipe closes. */
	usleep(50000);
	close(stop[1]);
	for (int i = 0; i < STREAM_READERS; i++) {
		CHECK(reap(pids[i]) == 0);
	}
	lkc_hold_dispose(&w);
	store->ops->destroy(store);
	rm_rf(dir);
}

/*
 * In a child: watches for a waiting writer's mark on resource's lock file, checks
 * that it holds our one attempt back although only readers hold the lock, then
 * waits until woken: exits 0 when that worked.
 */
static void child_reads_behind_writer(const char *dir, const char *resource)
{
	lkc_store *store;
	lkc_hold h;
	lkc_err err;
	char path[256];
	int fd, seen;

	child_setup(dir, resource, &store, &h);
	lock_path(path, sizeof(path), dir, resource);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		_exit(2);
	}
	seen = await_writer(fd);
	/* Closed before our wait, so that its event cannot wake us. */
	close(fd);
	if (!seen) {
		_exit(3);
	}
	if (lkc_acquire(store, &h, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err) != LKC_BUSY) {
		_exit(4);
	}
	_exit(acquire_woken(store, &h, LKC_MODE_SHARED, &err) == LKC_OK ? 0 : 1);
}

static void timed_out_writer_lets_readers_in(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a;
	lkc_err err;
	int result[2], go[2];
	pid_t writer, reader;
	char rc = -1;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "timeout");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(pipe(result) == 0 && pipe(go) == 0);
	writer = fork();
	if (writer == 0) {
		lkc_store *s2;
		lkc_hold h;
		char c;

		close(result[0]);
		close(go[1]);
		child_setup(dir, "timeout", &s2, &h);
		c = (char) lkc_acquire(s2, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 3000, &err);
		/*
		 * Alive until told: our exit would close the lock file, and that event would
		 * wake the reader even if our timed-out wait forgot to.
		 */
		if (write(result[1], &c, 1) != 1 || read(go[0], &c, 1) != 0) {
			_exit(2);
		}
		_exit(0);
	}
	close(result[1]);
	close(go[0]);
	CHECK(await_writer(a.fd));
	reader = fork();
	if (reader == 0) {
		child_reads_behind_writer(dir, "timeout");
	}
	/* We keep our shared hold throughout: the reader gets in only when the writer gives up, and is woken then. */
	CHECK(read(result[0], &rc, 1) == 1 && rc == LKC_BUSY);
	CHECK(reap(reader) == 0);
	CHECK(!has_writer(a.fd) && !has_waiter(a.fd));
	close(go[1]);
	close(result[0]);
	CHECK(reap(writer) == 0);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	rm_rf(dir);
}

static void interrupted_writer_lets_readers_in(void)
{
	char dir[64];
	lkc_store *store;
	lkc_hold a, b;
	lkc_err err;
	struct sigaction sa, old;
	struct itimerval it = { { 0, 0 }, { 2, 0 } };
	pid_t reader;

	make_tmpdir(dir);
	store = open_store(dir);
	init_hold(&a, "interrupt-writer");
	init_hold(&b, "interrupt-writer");
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	reader = fork();
	if (reader == 0) {
		child_reads_behind_writer(dir, "interrupt-writer");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old);
	alarmed = 0;
	lkc_set_interrupt_hook(alarm_hook);
	setitimer(ITIMER_REAL, &it, NULL);
	/* Our own shared hold keeps us waiting until the host ends the wait. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, LKC_WAIT_FOREVER, &err), LKC_INTERRUPTED, &err);
	lkc_set_interrupt_hook(NULL);
	sigaction(SIGALRM, &old, NULL);
	CHECK(b.mode == LKC_MODE_NONE);
	/* The reader that held back for us is woken, and our marks are gone. */
	CHECK(reap(reader) == 0);
	CHECK(!has_writer(a.fd) && !has_waiter(a.fd));
	CHECK(other_process_tries(dir, "interrupt-writer", LKC_MODE_SHARED) == LKC_OK);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	rm_rf(dir);
}

TEST_MAIN(T(file_names_are_safe), T(hostile_resources_stay_inside), T(exclusive_holds_conflict_in_process),
	T(shared_holds_coexist), T(timed_wait_ends_busy), T(counters_follow_answers), T(killed_holder_frees_waiter), T(release_wakes_waiter),
	T(release_while_child_keeps_descriptor), T(forked_child_abandons), T(force_release_breaks_holder),
	T(force_release_wakes_waiter), T(is_locked_sees_every_mode), T(directory_is_created), T(symlink_is_refused),
	T(holds_convert), T(host_interrupts_wait), T(cached_file_serves_repeated_holds),
	T(release_wakes_waiter_without_close), T(downgrade_wakes_readers), T(force_release_while_kept_reopens),
	T(idle_files_are_removed), T(hold_after_fork_is_not_shared), T(fencing_tokens_increase),
	T(readers_hold_back_for_waiting_writer), T(quiet_release_allows_one_more_reader),
	T(demotion_ignores_waiting_writer), T(promotion_waits_as_writer),
	T(writer_not_starved_by_readers), T(timed_out_writer_lets_readers_in), T(interrupted_writer_lets_readers_in))
