/* Unit tests of the SysV semaphore store, on real semaphore sets that each test removes again. */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Generous bound for waits that must succeed; a failure shows as BUSY, never as a hang. */
#define LONG_WAIT_MS 20000

/* The semaphores of a set, as lkc_sem.c numbers them. */
#define SEM_READERS   0
#define SEM_WRITER    1
#define SEM_WAITING   2
#define SEM_PROMOTING 3
#define SEM_USERS     4
#define SEM_DYING     5

/* A resource name with a random suffix, so runs never share a set with anything else. */
static void unique_resource(char *buf, size_t size, const char *base)
{
	char token[LKC_TOKEN_LEN + 1];
	lkc_err err;

	CHECK_RC(lkc_token_new(token, &err), LKC_OK, &err);
	snprintf(buf, size, "lkc-test-%s-%s", base, token);
}

/* Removes the set of resource, if there is one, so the machine is not littered. */
static void remove_set(const char *resource)
{
	int id = semget((key_t) lkc_sem_key(resource, strlen(resource)), 0, 0);

	if (id >= 0) {
		semctl(id, 0, IPC_RMID);
	}
}

/* The value of semaphore num of resource's set, -1 when there is no set. */
static int semval(const char *resource, int num)
{
	int id = semget((key_t) lkc_sem_key(resource, strlen(resource)), 0, 0);

	return id < 0 ? -1 : semctl(id, num, GETVAL);
}

/* Waits (bounded) until semaphore num of resource's set reaches want; whether it did. */
static int await_semval(const char *resource, int num, int want)
{
	for (int i = 0; i < 4000; i++) {
		if (semval(resource, num) == want) {
			return 1;
		}
		usleep(5000);
	}
	return 0;
}

static lkc_store *open_store(void)
{
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_sem_open(&store, 0600, &err), LKC_OK, &err);
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

static void key_is_derived_and_never_private(void)
{
	/* 0xa7, then the first three bytes of sha256("lock-ext-sem/2\0" + resource), big-endian. */
	CHECK(lkc_sem_key("abc", 3) == (int32_t) 0xa75952b2);
	CHECK(lkc_sem_key("x", 1) == (int32_t) 0xa7a07e87);
	CHECK(lkc_sem_key("abc", 3) != lkc_sem_key("abd", 3));
	for (int i = 0; i < 1000; i++) {
		char r[16];
		snprintf(r, sizeof(r), "r%d", i);
		CHECK(lkc_sem_key(r, strlen(r)) != IPC_PRIVATE);
	}
	{
		char *big = calloc(1, LKC_RESOURCE_MAX);
		int32_t k = lkc_sem_key(big, LKC_RESOURCE_MAX);
		CHECK(k != IPC_PRIVATE && k == lkc_sem_key(big, LKC_RESOURCE_MAX));
		free(big);
	}
}

static void exclusive_holds_conflict_in_process(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;

	unique_resource(res, sizeof(res), "excl");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(a.semid >= 0 && a.semkey == lkc_sem_key(res, strlen(res)));
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK(b.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_refresh(store, &a, LKC_TTL_NONE, &err), LKC_OK, &err);
	/* Acquiring again in the same mode keeps the hold, and counts nothing twice. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_WRITER) == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_WRITER) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* Releasing keeps the set, so that its waiters are never cut off. */
	CHECK(semval(res, SEM_WRITER) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

static void shared_holds_coexist(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b, c;
	lkc_err err;

	unique_resource(res, sizeof(res), "shared");
	init_hold(&a, res);
	init_hold(&b, res);
	init_hold(&c, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_READERS) == 2);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &c, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &c, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_READERS) == 0 && semval(res, SEM_WRITER) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	lkc_hold_dispose(&c);
	store->ops->destroy(store);
	remove_set(res);
}

static void timed_wait_ends_busy(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;

	unique_resource(res, sizeof(res), "timed");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 100, &err), LKC_BUSY, &err);
	/* The writer that gave up is no longer announced. */
	CHECK(semval(res, SEM_WAITING) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 30, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 100, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

/* In a child: takes resource in mode, writes a byte to fd, then calls then(). */
static void child_hold(const char *resource, lkc_mode mode, int fd, void (*then)(lkc_store *, lkc_hold *))
{
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_err err;

	if (lkc_sem_open(&store, 0600, &err) != LKC_OK
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

static void then_pause(lkc_store *store, lkc_hold *h)
{
	(void) store;
	(void) h;
	for (;;) {
		pause();
	}
}

static void then_release_and_live(lkc_store *store, lkc_hold *h)
{
	lkc_err err;

	usleep(200000);
	if (lkc_release(store, h, 0, &err) != LKC_OK) {
		_exit(4);
	}
	then_pause(store, h);
}

static void killed_holder_is_undone(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold h;
	lkc_err err;
	int p[2];
	pid_t pid;

	unique_resource(res, sizeof(res), "killed");
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child_hold(res, LKC_MODE_EXCLUSIVE, p[1], then_pause);
	}
	close(p[1]);
	await_child(p[0]);
	close(p[0]);
	init_hold(&h, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	kill(pid, SIGKILL);
	CHECK(reap(pid) == 128 + SIGKILL);
	/* SEM_UNDO gave the dead holder's hold back as it died: no wait needed. */
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	store->ops->destroy(store);
	remove_set(res);
}

static void release_wakes_waiter(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold h;
	lkc_err err;
	int p[2];
	pid_t pid;

	for (int mode = LKC_MODE_EXCLUSIVE; mode <= LKC_MODE_SHARED; mode++) {
		unique_resource(res, sizeof(res), "woken");
		CHECK(pipe(p) == 0);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			child_hold(res, LKC_MODE_EXCLUSIVE, p[1], then_release_and_live);
		}
		close(p[1]);
		await_child(p[0]);
		close(p[0]);
		init_hold(&h, res);
		lkc_err_clear(&err);
		/* Woken by the release of a holder that lives on, not by its exit. */
		CHECK_RC(acquire_woken(store, &h, (lkc_mode) mode, &err), LKC_OK, &err);
		kill(pid, SIGKILL);
		CHECK(reap(pid) == 128 + SIGKILL);
		CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
		lkc_hold_dispose(&h);
		remove_set(res);
	}
	store->ops->destroy(store);
}

/* In a child: waits for an exclusive hold on resource; exits 0 when woken with it. */
static void child_wait_exclusive(const char *resource)
{
	lkc_store *store = NULL;
	lkc_hold h;
	lkc_err err;

	if (lkc_sem_open(&store, 0600, &err) != LKC_OK || lkc_hold_init(&h, resource, strlen(resource), &err) != LKC_OK) {
		_exit(2);
	}
	_exit(acquire_woken(store, &h, LKC_MODE_EXCLUSIVE, &err) == LKC_OK ? 0 : 1);
}

static void waiting_writer_holds_readers_back(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;
	pid_t pid;

	unique_resource(res, sizeof(res), "writerfirst");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		child_wait_exclusive(res);
	}
	CHECK(await_semval(res, SEM_WAITING, 1));
	/* Only a reader holds it, yet a new reader waits behind the announced writer. */
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 30, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	/* The writer exited; SEM_UNDO balanced everything it did. */
	CHECK(semval(res, SEM_WRITER) == 0 && semval(res, SEM_WAITING) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

static void force_release_breaks_holder(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;
	int locked = -1;

	unique_resource(res, sizeof(res), "forced");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	/* Nothing to break yet. */
	CHECK_RC(store->ops->force_release(store, res, strlen(res), &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, res, strlen(res), &err), LKC_OK, &err);
	CHECK(semval(res, SEM_WRITER) == -1);
	CHECK_RC(lkc_check(store, &a, &err), LKC_EXPIRED, &err);
	CHECK_RC(store->ops->is_locked(store, res, strlen(res), &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_check(store, &a, &err), LKC_LOST, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_LOST, &err);
	CHECK(a.mode == LKC_MODE_NONE);
	CHECK_RC(lkc_check(store, &b, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* A broken hold asked to change mode takes a new hold instead. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->force_release(store, res, strlen(res), &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_WRITER) == 1 && semval(res, SEM_READERS) == 0);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

static void force_release_wakes_waiter(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	unique_resource(res, sizeof(res), "stuck");
	init_hold(&a, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		child_wait_exclusive(res);
	}
	CHECK(await_semval(res, SEM_WAITING, 1));
	/* The removal wakes the waiter with EIDRM; it makes the set anew and takes it. */
	CHECK_RC(store->ops->force_release(store, res, strlen(res), &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK(lkc_check(store, &a, &err) != LKC_OK);
	CHECK(lkc_release(store, &a, 0, &err) != LKC_OK);
	CHECK(a.mode == LKC_MODE_NONE);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	remove_set(res);
}

static void holds_convert(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;

	unique_resource(res, sizeof(res), "convert");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	/* A promotion that cannot happen leaves the reader a reader, and nothing announced. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 50, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK(semval(res, SEM_READERS) == 2 && semval(res, SEM_WAITING) == 0 && semval(res, SEM_PROMOTING) == 0);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 50, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_EXCLUSIVE);
	CHECK(semval(res, SEM_READERS) == 0 && semval(res, SEM_WRITER) == 1);
	CHECK(semval(res, SEM_WAITING) == 0 && semval(res, SEM_PROMOTING) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK(semval(res, SEM_READERS) == 1 && semval(res, SEM_WRITER) == 0);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	/* Promotion without a wait works too. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_READERS) == 0 && semval(res, SEM_WRITER) == 0);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

static void second_promoter_is_refused(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	unique_resource(res, sizeof(res), "promoters");
	init_hold(&a, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		lkc_hold c;

		if (lkc_hold_init(&c, res, strlen(res), &err) != LKC_OK
			|| lkc_acquire(store, &c, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err) != LKC_OK) {
			_exit(2);
		}
		_exit(acquire_woken(store, &c, LKC_MODE_EXCLUSIVE, &err) == LKC_OK ? 0 : 1);
	}
	CHECK(await_semval(res, SEM_PROMOTING, 1));
	/* Both readers waiting for the other to stop reading would wait forever: we are told at once. */
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, LONG_WAIT_MS, &err), LKC_BUSY, &err);
	CHECK(a.mode == LKC_MODE_SHARED);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK(semval(res, SEM_READERS) == 2);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK(semval(res, SEM_PROMOTING) == 0 && semval(res, SEM_WAITING) == 0 && semval(res, SEM_WRITER) == 0);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	remove_set(res);
}

static void is_locked_sees_every_mode(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a;
	lkc_err err;
	int locked = -1;

	unique_resource(res, sizeof(res), "probe");
	init_hold(&a, res);
	lkc_err_clear(&err);
	CHECK_RC(store->ops->is_locked(store, res, strlen(res), &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	/* Looking creates nothing. */
	CHECK(semval(res, SEM_READERS) == -1);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_SHARED, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, res, strlen(res), &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, res, strlen(res), &locked, &err), LKC_OK, &err);
	CHECK(locked == 0);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(store->ops->is_locked(store, res, strlen(res), &locked, &err), LKC_OK, &err);
	CHECK(locked == 1);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	remove_set(res);
}

static void forked_child_cannot_touch_parent_hold(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	unique_resource(res, sizeof(res), "fork");
	init_hold(&a, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		if (lkc_release(store, &a, 0, &err) != LKC_ERR_STATE) {
			_exit(2);
		}
		lkc_abandon(store, &a);
		_exit(0);
	}
	CHECK(reap(pid) == 0);
	/* The child's exit undid nothing of ours. */
	CHECK(semval(res, SEM_WRITER) == 1);
	CHECK_RC(lkc_check(store, &a, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	remove_set(res);
}

static void permission_denied_names_key(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a;
	lkc_err err;
	pid_t pid;

	unique_resource(res, sizeof(res), "perm");
	init_hold(&a, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	pid = fork();
	if (pid == 0) {
		char want[64];
		lkc_hold h;

		/* The set is owner-only (0600): another user is refused. */
		if (geteuid() == 0 && setuid(65534) != 0) {
			_exit(2);
		}
		if (lkc_hold_init(&h, res, strlen(res), &err) != LKC_OK) {
			_exit(3);
		}
		snprintf(want, sizeof(want), "key 0x%08x", (unsigned) lkc_sem_key(res, strlen(res)));
		_exit(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err) == LKC_ERR_PERM
			&& strstr(err.msg, want) != NULL && strncmp(err.msg, "semaphore: ", 11) == 0 ? 0 : 1);
	}
	CHECK(reap(pid) == 0);
	{
		lkc_store *bad = NULL;
		CHECK_RC(lkc_sem_open(&bad, 01000, &err), LKC_ERR_INVALID, &err);
		CHECK(bad == NULL);
	}
	lkc_hold_dispose(&a);
	store->ops->destroy(store);
	remove_set(res);
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
	char res[96];
	lkc_store *store = open_store();
	lkc_hold a, b;
	lkc_err err;
	struct sigaction sa, old;
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };

	unique_resource(res, sizeof(res), "interrupt");
	init_hold(&a, res);
	init_hold(&b, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(store, &a, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old);
	alarmed = 0;
	lkc_set_interrupt_hook(alarm_hook);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, LKC_WAIT_FOREVER, &err), LKC_INTERRUPTED, &err);
	/* The interrupted writer withdrew its announcement. */
	CHECK(b.mode == LKC_MODE_NONE && semval(res, SEM_WAITING) == 0);
	/* Without the host's say-so, an interrupted wait goes on to its end. */
	lkc_set_interrupt_hook(NULL);
	alarmed = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_SHARED, LKC_TTL_NONE, 300, &err), LKC_BUSY, &err);
	CHECK(alarmed == 1);
	sigaction(SIGALRM, &old, NULL);
	CHECK_RC(lkc_release(store, &a, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &b, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &b, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&a);
	lkc_hold_dispose(&b);
	store->ops->destroy(store);
	remove_set(res);
}

/* Whether resource has a set now. */
static int has_set(const char *resource)
{
	return semget((key_t) lkc_sem_key(resource, strlen(resource)), 0, 0) >= 0;
}

static lkc_store *open_cache(int cache)
{
	lkc_store *store = NULL;
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_sem_open_cache(&store, 0600, cache, &err), LKC_OK, &err);
	return store;
}

/* One acquire and release of resource on store; whether both worked. */
static int cycle(lkc_store *store, const char *resource)
{
	lkc_hold h;
	lkc_err err;
	int ok;

	lkc_err_clear(&err);
	if (lkc_hold_init(&h, resource, strlen(resource), &err) != LKC_OK) {
		return 0;
	}
	ok = lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err) == LKC_OK
		&& lkc_release(store, &h, 0, &err) == LKC_OK;
	lkc_hold_dispose(&h);
	return ok;
}

static void idle_sets_are_removed(void)
{
	char base[96], res[128];
	int left = 0;
	lkc_store *store = open_cache(4);
	lkc_store *none = open_cache(0);
	lkc_store *bad = NULL;
	lkc_err err;

	unique_resource(base, sizeof(base), "idle");
	for (int i = 0; i < 100; i++) {
		snprintf(res, sizeof(res), "%s-%d", base, i);
		CHECK(cycle(store, res));
	}
	/* Only the four most recently used stay, for the next cycle. */
	for (int i = 0; i < 100; i++) {
		snprintf(res, sizeof(res), "%s-%d", base, i);
		left += has_set(res);
		if (i >= 96) {
			CHECK(has_set(res));
		}
	}
	CHECK(left == 4);
	store->ops->destroy(store);
	for (int i = 96; i < 100; i++) {
		snprintf(res, sizeof(res), "%s-%d", base, i);
		CHECK(!has_set(res));
	}
	/* Without a cache, a set goes with its last release. */
	snprintf(res, sizeof(res), "%s-none", base);
	CHECK(cycle(none, res));
	CHECK(!has_set(res));
	none->ops->destroy(none);
	CHECK_RC(lkc_sem_open_cache(&bad, 0600, -1, &err), LKC_ERR_INVALID, &err);
	CHECK_RC(lkc_sem_open_cache(&bad, 0600, LKC_SEM_CACHE_MAX + 1, &err), LKC_ERR_INVALID, &err);
	CHECK(bad == NULL);
}

static void kept_set_outlives_other_users(void)
{
	char res[96];
	lkc_store *keeper = open_store();
	lkc_store *none = open_cache(0);
	lkc_hold h;
	lkc_err err;
	int id;

	unique_resource(res, sizeof(res), "kept");
	CHECK(cycle(keeper, res));
	id = semget((key_t) lkc_sem_key(res, strlen(res)), 0, 0);
	CHECK(id >= 0 && semval(res, SEM_USERS) == 1);
	/* Another store's last release finds the set kept by the first: it stays. */
	CHECK(cycle(none, res));
	CHECK(semget((key_t) lkc_sem_key(res, strlen(res)), 0, 0) == id);
	init_hold(&h, res);
	lkc_err_clear(&err);
	CHECK_RC(lkc_acquire(keeper, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	CHECK(h.semid == id);
	/* A store destroyed while a hold of its own is out removes nothing under the holder. */
	none->ops->destroy(none);
	CHECK(has_set(res) && semval(res, SEM_WRITER) == 1);
	CHECK_RC(lkc_release(keeper, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	keeper->ops->destroy(keeper);
	CHECK(!has_set(res));
}

/*
 * Children cycle on one resource (writers, and one reader) with stores that keep at most
 * one set or nothing, so its set is removed and made anew all the time while others wait
 * on it: no writer is ever inside together with anybody else, and every wait ends with
 * the lock.
 */
static void removal_never_breaks_exclusion(void)
{
	enum { CHILDREN = 4, CYCLES = 1500 };
	char res[96];
	volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[CHILDREN];

	CHECK(shared != MAP_FAILED);
	if (shared == MAP_FAILED) {
		return;
	}
	unique_resource(res, sizeof(res), "race");
	for (int c = 0; c < CHILDREN; c++) {
		pids[c] = fork();
		if (pids[c] == 0) {
			lkc_store *store = NULL;
			lkc_err err;

			if (lkc_sem_open_cache(&store, 0600, c % 2 ? 0 : 1, &err) != LKC_OK) {
				_exit(2);
			}
			for (int i = 0; i < CYCLES; i++) {
				lkc_hold h;
				/* Half wait, half try: both meet sets that are being removed. */
				int64_t wait = (i + c) % 2 ? LONG_WAIT_MS : 0;
				lkc_rc rc;

				if (lkc_hold_init(&h, res, strlen(res), &err) != LKC_OK) {
					_exit(3);
				}
				/* The last child reads: shared[0] counts writers inside, shared[3] readers. */
				if (c == CHILDREN - 1) {
					rc = lkc_acquire(store, &h, LKC_MODE_SHARED, LKC_TTL_NONE, wait, &err);
					if (rc == LKC_OK) {
						__sync_add_and_fetch(&shared[3], 1);
						if (shared[0] != 0) {
							shared[1] = 1;
						}
						__sync_sub_and_fetch(&shared[3], 1);
						if (lkc_release(store, &h, 0, &err) != LKC_OK) {
							_exit(4);
						}
					} else if (rc != LKC_BUSY || wait != 0) {
						_exit(5);
					}
					lkc_hold_dispose(&h);
					continue;
				}
				rc = lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, wait, &err);
				if (rc == LKC_OK) {
					if (__sync_add_and_fetch(&shared[0], 1) != 1 || shared[3] != 0) {
						shared[1] = 1;
					}
					shared[2]++;
					__sync_sub_and_fetch(&shared[0], 1);
					if (lkc_release(store, &h, 0, &err) != LKC_OK) {
						_exit(4);
					}
				} else if (rc != LKC_BUSY || wait != 0) {
					_exit(5);
				}
				lkc_hold_dispose(&h);
			}
			store->ops->destroy(store);
			_exit(0);
		}
	}
	for (int c = 0; c < CHILDREN; c++) {
		CHECK(reap(pids[c]) == 0);
	}
	CHECK(shared[1] == 0);
	CHECK(shared[2] >= (CHILDREN - 1) * CYCLES / 2);
	CHECK(!has_set(res));
	munmap((void *) shared, 4096);
}

static void dying_set_is_waited_out(void)
{
	char res[96];
	lkc_store *store = open_store();
	lkc_hold h;
	lkc_err err;
	int fds[2];
	pid_t pid;

	unique_resource(res, sizeof(res), "dying");
	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		/* A remover that checked the set idle and stops before IPC_RMID; its death undoes the mark. */
		struct sembuf mark[] = { { SEM_DYING, 1, SEM_UNDO } };
		int id = semget((key_t) lkc_sem_key(res, strlen(res)), 6, IPC_CREAT | 0600);

		if (id < 0 || semop(id, mark, 1) != 0 || write(fds[1], "x", 1) != 1) {
			_exit(2);
		}
		usleep(400000);
		_exit(0);
	}
	await_child(fds[0]);
	init_hold(&h, res);
	lkc_err_clear(&err);
	/* A try waits a little for the removal, then answers busy; a wait goes on to the end. */
	CHECK_RC(lkc_acquire(store, &h, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_BUSY, &err);
	CHECK_RC(acquire_woken(store, &h, LKC_MODE_EXCLUSIVE, &err), LKC_OK, &err);
	CHECK(reap(pid) == 0);
	CHECK(semval(res, SEM_DYING) == 0 && semval(res, SEM_WRITER) == 1);
	CHECK_RC(lkc_release(store, &h, 0, &err), LKC_OK, &err);
	lkc_hold_dispose(&h);
	store->ops->destroy(store);
	CHECK(!has_set(res));
	close(fds[0]);
	close(fds[1]);
}

/* The body of set_limit_in_own_namespace, in a child with an IPC namespace of its own: the exit status says what failed. */
static int at_the_limit(void)
{
	enum { LIMIT = 16 };
	lkc_store *store = NULL;
	lkc_hold holds[LIMIT + 1];
	lkc_err err;
	char res[64];
	int fd = open("/proc/sys/kernel/sem", O_WRONLY);

	if (fd < 0 || write(fd, "250 32000 32 16", 15) != 15) {
		return 10;
	}
	close(fd);
	{
		/* A process that dies holding every set the system allows leaves them idle behind it. */
		pid_t pid = fork();
		if (pid == 0) {
			if (lkc_sem_open_cache(&store, 0600, 0, &err) != LKC_OK) {
				_exit(1);
			}
			for (int i = 0; i < LIMIT; i++) {
				snprintf(res, sizeof(res), "dead-%d", i);
				if (lkc_hold_init(&holds[0], res, strlen(res), &err) != LKC_OK
					|| lkc_acquire(store, &holds[0], LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err) != LKC_OK) {
					_exit(1);
				}
			}
			_exit(0);
		}
		if (reap(pid) != 0) {
			return 17;
		}
	}
	if (lkc_sem_open(&store, 0600, &err) != LKC_OK) {
		return 11;
	}
	/* Far more names than the system has sets: the dead holder's sets, then the store's idle ones make room. */
	for (int i = 0; i < 1000; i++) {
		snprintf(res, sizeof(res), "limit-%d", i);
		if (!cycle(store, res)) {
			return 12;
		}
	}
	for (int i = 0; i <= LIMIT; i++) {
		snprintf(res, sizeof(res), "held-%d", i);
		if (lkc_hold_init(&holds[i], res, strlen(res), &err) != LKC_OK) {
			return 13;
		}
		lkc_err_clear(&err);
		lkc_rc rc = lkc_acquire(store, &holds[i], LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err);
		if (i < LIMIT ? rc != LKC_OK : rc != LKC_ERR_SYSTEM || strstr(err.msg, "limit of 16 semaphore sets") == NULL) {
			fprintf(stderr, "hold %d: %s %s\n", i, lkc_rc_name(rc), err.msg);
			return 14;
		}
	}
	for (int i = 0; i <= LIMIT; i++) {
		if (i < LIMIT && lkc_release(store, &holds[i], 0, &err) != LKC_OK) {
			return 15;
		}
		lkc_hold_dispose(&holds[i]);
	}
	store->ops->destroy(store);
	{
		/* Nothing is left in the namespace. */
		struct seminfo info;
		union { int val; struct semid_ds *buf; unsigned short *array; struct seminfo *info; } arg = { .info = &info };
		if (semctl(0, 0, SEM_INFO, arg) < 0 || info.semusz != 0) {
			return 16;
		}
	}
	return 0;
}

static void set_limit_in_own_namespace(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (unshare(CLONE_NEWIPC) != 0) {
			/* Not allowed here (no privilege): nothing to test. */
			_exit(0);
		}
		_exit(at_the_limit());
	}
	CHECK(reap(pid) == 0);
}

/* A forked child using its parent's store neither gives back nor removes what the parent keeps. */
static void forked_child_keeps_parent_sets(void)
{
	char res[96], other[128];
	lkc_store *store = open_store();
	pid_t pid;

	unique_resource(res, sizeof(res), "forkkeep");
	snprintf(other, sizeof(other), "%s-child", res);
	CHECK(cycle(store, res));
	CHECK(semval(res, SEM_USERS) == 1);
	pid = fork();
	if (pid == 0) {
		/* The child's own count on res comes and goes with its own use; the parent's stays. */
		int ok = cycle(store, res) && cycle(store, other) && semval(res, SEM_USERS) == 2;
		store->ops->destroy(store);
		_exit(ok && semval(res, SEM_USERS) == 1 && !has_set(other) ? 0 : 1);
	}
	CHECK(reap(pid) == 0);
	CHECK(semval(res, SEM_USERS) == 1);
	CHECK(cycle(store, res));
	store->ops->destroy(store);
	CHECK(!has_set(res) && !has_set(other));
}

TEST_MAIN(T(key_is_derived_and_never_private), T(exclusive_holds_conflict_in_process), T(shared_holds_coexist),
	T(timed_wait_ends_busy), T(killed_holder_is_undone), T(release_wakes_waiter),
	T(waiting_writer_holds_readers_back), T(force_release_breaks_holder), T(force_release_wakes_waiter),
	T(holds_convert), T(second_promoter_is_refused), T(is_locked_sees_every_mode),
	T(forked_child_cannot_touch_parent_hold), T(permission_denied_names_key), T(host_interrupts_wait),
	T(idle_sets_are_removed), T(kept_set_outlives_other_users), T(removal_never_breaks_exclusion),
	T(dying_set_is_waited_out), T(set_limit_in_own_namespace), T(forked_child_keeps_parent_sets))
