/*
 * The SysV semaphore store: one set of four semaphores per resource, found by
 * an IPC key hashed from the resource. Every change that is a hold is made
 * with SEM_UNDO, so the kernel gives a dead process's holds back.
 *
 * The semaphores of a set:
 *   0  readers: how many shared holds there are
 *   1  writer: 1 while an exclusive hold exists
 *   2  writers waiting: new readers hold back while it is above 0, so a
 *      steady flow of readers cannot starve a writer
 *   3  promotion: 1 while a reader waits to become the writer
 *
 * Linux creates the semaphores of a new set at 0, which is exactly the free
 * state, so a set needs no initialisation and there is no race in making one.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>

#define LKC_SEM_READERS   0
#define LKC_SEM_WRITER    1
#define LKC_SEM_WAITING   2
#define LKC_SEM_PROMOTING 3
#define LKC_SEM_COUNT     4

/* Waits longer than this (about 34 years) are waits without bound, so deadlines never overflow. */
#define LKC_SEM_WAIT_MAX (INT64_C(1) << 40)

typedef struct {
	lkc_store base;
	int mode;           /* permissions of new sets */
} lkc_sem_store;

static const lkc_store_ops lkc_sem_ops;

/* The key's hash input starts with this, NUL included, so our keys differ from other programs' hashes of the same name. */
static const char lkc_sem_salt[] = "lock-ext-sem";

/* Computes the IPC key of a resource into *key; -1 when out of memory. */
static int lkc_sem_key_of(const char *resource, size_t len, int32_t *key)
{
	unsigned char small[256];
	unsigned char *buf = small;
	unsigned char d[32];
	size_t total = sizeof(lkc_sem_salt) + len;
	uint32_t k;

	if (total > sizeof(small)) {
		buf = malloc(total);
		if (buf == NULL) {
			return -1;
		}
	}
	memcpy(buf, lkc_sem_salt, sizeof(lkc_sem_salt));
	if (len > 0) {
		memcpy(buf + sizeof(lkc_sem_salt), resource, len);
	}
	lkc_sha256(buf, total, d);
	if (buf != small) {
		free(buf);
	}
	/*
	 * 32 bits of a hash can collide. Two resources on one key share one set: they then
	 * exclude each other (false contention), but one resource never gets two holders.
	 */
	k = (uint32_t) d[0] << 24 | (uint32_t) d[1] << 16 | (uint32_t) d[2] << 8 | (uint32_t) d[3];
	*key = (int32_t) k;
	if (*key == IPC_PRIVATE) {
		/* IPC_PRIVATE would make a new, unshared set on every call. */
		*key = 1;
	}
	return 0;
}

/* The IPC key of a resource: never IPC_PRIVATE, except as the out-of-memory answer. */
int32_t lkc_sem_key(const char *resource, size_t len)
{
	int32_t key;

	/* IPC_PRIVATE (0) is never a key of ours, so it can stand for "out of memory". */
	return lkc_sem_key_of(resource, len, &key) == 0 ? key : IPC_PRIVATE;
}

/* Opens the store; sets are made with mode as they are first needed. */
lkc_rc lkc_sem_open(lkc_store **out, int mode, lkc_err *err)
{
	lkc_sem_store *s;

	*out = NULL;
	if (mode < 0 || mode > 0777) {
		return lkc_err_set(err, LKC_ERR_INVALID, "semaphore: mode must be between 0 and 0777, %#o given", (unsigned) mode);
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	s->base.ops = &lkc_sem_ops;
	s->mode = mode;
	*out = &s->base;
	return LKC_OK;
}

/* Fills err for a failed call on the set of key. */
static lkc_rc lkc_sem_error(lkc_err *err, const char *what, int32_t key, int errnum)
{
	switch (errnum) {
		case EACCES:
		case EPERM:
			return lkc_err_set(err, LKC_ERR_PERM,
				"semaphore: permission denied to %s the set with key 0x%08x", what, (unsigned) key);
		case ENOSPC:
			return lkc_err_set(err, LKC_ERR_SYSTEM,
				"semaphore: cannot create the set with key 0x%08x: the system limit on semaphore sets is reached (see kernel.sem)",
				(unsigned) key);
		default:
			return lkc_err_errno(err, LKC_ERR_SYSTEM, errnum, "semaphore: cannot %s the set with key 0x%08x", what, (unsigned) key);
	}
}

/* The id of the set of key, created when missing; -1 with err filled. */
static int lkc_sem_create(const lkc_sem_store *s, int32_t key, lkc_err *err)
{
	int id = semget((key_t) key, LKC_SEM_COUNT, IPC_CREAT | s->mode);

	if (id < 0) {
		if (errno == EINVAL) {
			lkc_err_set(err, LKC_ERR_SYSTEM,
				"semaphore: a set with key 0x%08x exists with fewer than %d semaphores; another program uses this key",
				(unsigned) key, LKC_SEM_COUNT);
		} else {
			lkc_sem_error(err, "create", key, errno);
		}
	}
	return id;
}

/* The id of the existing set of key; -1 with *missing set when there is none, -1 with err filled on failure. */
static int lkc_sem_find(int32_t key, int *missing, lkc_err *err)
{
	int id = semget((key_t) key, 0, 0);

	*missing = 0;
	if (id < 0) {
		if (errno == ENOENT) {
			*missing = 1;
		} else {
			lkc_sem_error(err, "open", key, errno);
		}
	}
	return id;
}

/* Whether the set id has a holder: 1, 0 (also when the set is gone), -1 with err filled. */
static int lkc_sem_held(int id, int32_t key, lkc_err *err)
{
	int readers = semctl(id, LKC_SEM_READERS, GETVAL);
	int writer = readers < 0 ? -1 : semctl(id, LKC_SEM_WRITER, GETVAL);

	if (readers < 0 || writer < 0) {
		if (errno == EIDRM || errno == EINVAL) {
			return 0;
		}
		lkc_sem_error(err, "read", key, errno);
		return -1;
	}
	return readers > 0 || writer > 0;
}

/* Our hold on key is gone: LKC_LOST if somebody holds the resource now, else LKC_EXPIRED. */
static lkc_rc lkc_sem_gone(int32_t key)
{
	lkc_err ignored;
	int missing;
	int id = lkc_sem_find(key, &missing, &ignored);

	/* The hold is gone either way; a failing look only loses the detail of who has it. */
	return id >= 0 && lkc_sem_held(id, key, &ignored) == 1 ? LKC_LOST : LKC_EXPIRED;
}

/*
 * Performs the n operations as one atomic step, waiting as wait_ms allows (0: not
 * at all; deadline_ns is the end of a bounded wait). Returns 0, or the errno:
 * EAGAIN when not done within the wait, EINTR when the host ended the wait.
 */
static int lkc_sem_apply(int id, struct sembuf *ops, size_t n, int64_t wait_ms, uint64_t deadline_ns)
{
	if (wait_ms == 0) {
		for (size_t i = 0; i < n; i++) {
			ops[i].sem_flg |= IPC_NOWAIT;
		}
	}
	for (;;) {
		struct timespec ts, *timeout = NULL;

		if (wait_ms > 0) {
			/* Relative, so it is recomputed from the monotonic clock after every interruption. */
			uint64_t now = lkc_now_ns();
			uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
			ts.tv_sec = (time_t) (left / 1000000000u);
			ts.tv_nsec = (long) (left % 1000000000u);
			timeout = &ts;
		}
		if (semtimedop(id, ops, n, timeout) == 0) {
			return 0;
		}
		if (errno != EINTR) {
			return errno;
		}
		if (lkc_interrupted()) {
			return EINTR;
		}
	}
}

/* Whether errnum says the set went away under us (force_release removed it). */
static int lkc_sem_removed(int errnum)
{
	return errnum == EIDRM || errnum == EINVAL;
}

/* Maps the errno of a failed wait to a result code. */
static lkc_rc lkc_sem_wait_rc(int errnum, int32_t key, lkc_err *err)
{
	if (errnum == EAGAIN) {
		return LKC_BUSY;
	}
	if (errnum == EINTR) {
		return LKC_INTERRUPTED;
	}
	return lkc_sem_error(err, "lock", key, errnum);
}

/* One try at taking a new hold in mode on the set id: 0 or the errno, as lkc_sem_apply. */
static int lkc_sem_take(int id, lkc_mode mode, int64_t wait_ms, uint64_t deadline_ns)
{
	int r;

	if (mode == LKC_MODE_SHARED) {
		/*
		 * A reader waits for no writer, and for no writer waiting either. So a process
		 * that reads and asks for a second shared hold while a writer waits for it
		 * waits on itself: such a wait ends only by its timeout.
		 */
		struct sembuf ops[] = {
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_WAITING, 0, 0 },
			{ LKC_SEM_READERS, 1, SEM_UNDO },
		};
		return lkc_sem_apply(id, ops, 3, wait_ms, deadline_ns);
	}
	{
		struct sembuf ops[] = {
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_READERS, 0, 0 },
			{ LKC_SEM_WRITER, 1, SEM_UNDO },
		};
		r = lkc_sem_apply(id, ops, 3, 0, 0);
		if (r != EAGAIN || wait_ms == 0) {
			return r;
		}
	}
	{
		/* Busy: announce a waiting writer first, so that new readers hold back. */
		struct sembuf announce[] = { { LKC_SEM_WAITING, 1, SEM_UNDO } };
		struct sembuf ops[] = {
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_READERS, 0, 0 },
			{ LKC_SEM_WRITER, 1, SEM_UNDO },
			{ LKC_SEM_WAITING, -1, SEM_UNDO },
		};
		struct sembuf withdraw[] = { { LKC_SEM_WAITING, -1, SEM_UNDO | IPC_NOWAIT } };

		r = lkc_sem_apply(id, announce, 1, 0, 0);
		if (r != 0) {
			return r;
		}
		r = lkc_sem_apply(id, ops, 4, wait_ms, deadline_ns);
		if (r != 0 && !lkc_sem_removed(r)) {
			/* A removed set took our announcement with it. */
			lkc_sem_apply(id, withdraw, 1, 0, 0);
		}
		return r;
	}
}

/*
 * Changes the mode of a hold we have on the set id: 0 or the errno, as lkc_sem_apply.
 * Unlike flock, the change is atomic: a failed promotion leaves the reader a reader.
 */
static int lkc_sem_convert(int id, lkc_mode from, lkc_mode to, int64_t wait_ms, uint64_t deadline_ns)
{
	int r;

	if (from == to) {
		return 0;
	}
	if (to == LKC_MODE_SHARED) {
		/* Demotion never waits: we are the only holder. */
		struct sembuf ops[] = {
			{ LKC_SEM_WRITER, -1, SEM_UNDO },
			{ LKC_SEM_READERS, 1, SEM_UNDO },
		};
		return lkc_sem_apply(id, ops, 2, 0, 0);
	}
	if (wait_ms == 0) {
		/* One try: become the writer if we are the only reader and there is no writer. */
		struct sembuf ops[] = {
			{ LKC_SEM_READERS, -1, SEM_UNDO },
			{ LKC_SEM_READERS, 0, 0 },
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_WRITER, 1, SEM_UNDO },
		};
		return lkc_sem_apply(id, ops, 4, 0, 0);
	}
	{
		/*
		 * Two readers waiting to promote would each wait for the other to stop reading,
		 * forever. Semaphore 3 lets only one reader wait to promote: a second one is
		 * told BUSY at once. The promoter also counts as a waiting writer, so that new
		 * readers hold back; everything it took is given back in the same step that
		 * makes it the writer, or after the wait failed.
		 */
		struct sembuf guard[] = {
			{ LKC_SEM_PROMOTING, 0, IPC_NOWAIT },
			{ LKC_SEM_PROMOTING, 1, SEM_UNDO },
			{ LKC_SEM_WAITING, 1, SEM_UNDO },
		};
		struct sembuf ops[] = {
			{ LKC_SEM_READERS, -1, SEM_UNDO },
			{ LKC_SEM_READERS, 0, 0 },
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_WRITER, 1, SEM_UNDO },
			{ LKC_SEM_WAITING, -1, SEM_UNDO },
			{ LKC_SEM_PROMOTING, -1, SEM_UNDO },
		};
		struct sembuf unguard[] = {
			{ LKC_SEM_WAITING, -1, SEM_UNDO | IPC_NOWAIT },
			{ LKC_SEM_PROMOTING, -1, SEM_UNDO | IPC_NOWAIT },
		};

		r = lkc_sem_apply(id, guard, 3, 0, 0);
		if (r != 0) {
			return r;
		}
		r = lkc_sem_apply(id, ops, 6, wait_ms, deadline_ns);
		if (r != 0 && !lkc_sem_removed(r)) {
			lkc_sem_apply(id, unguard, 2, 0, 0);
		}
		return r;
	}
}

/* Fills hold->semkey once; -1 with err filled when out of memory. */
static int lkc_sem_hold_key(lkc_hold *hold, lkc_err *err)
{
	if (hold->semkey == IPC_PRIVATE && lkc_sem_key_of(hold->resource, hold->resource_len, &hold->semkey) != 0) {
		lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
		return -1;
	}
	return 0;
}

/* Takes or converts the hold, waiting as wait_ms allows; on failure the hold keeps what it had. */
static lkc_rc lkc_sem_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_sem_store *s = (lkc_sem_store *) store;
	uint64_t deadline_ns;
	int failed_id = -1;
	int r;

	(void) ttl_ms; /* A semaphore hold lasts until released or until its process ends. */
	if (lkc_sem_hold_key(hold, err) != 0) {
		return err->code;
	}
	if (wait_ms < 0 || wait_ms > LKC_SEM_WAIT_MAX) {
		wait_ms = LKC_WAIT_FOREVER;
	}
	deadline_ns = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	if (hold->mode != LKC_MODE_NONE && hold->semid >= 0) {
		int missing;
		int id = lkc_sem_find(hold->semkey, &missing, err);

		if (id < 0 && !missing) {
			return err->code;
		}
		if (id == hold->semid) {
			r = lkc_sem_convert(id, hold->mode, mode, wait_ms, deadline_ns);
			if (r == 0) {
				return LKC_OK;
			}
			if (!lkc_sem_removed(r)) {
				return lkc_sem_wait_rc(r, hold->semkey, err);
			}
		}
		/* The set was removed (force_release), and our hold with it: take a new one. */
		hold->semid = -1;
	}
	for (;;) {
		if (hold->semid < 0) {
			hold->semid = lkc_sem_create(s, hold->semkey, err);
			if (hold->semid < 0) {
				return err->code;
			}
		}
		r = lkc_sem_take(hold->semid, mode, wait_ms, deadline_ns);
		if (r == 0) {
			return LKC_OK;
		}
		if (!lkc_sem_removed(r)) {
			return lkc_sem_wait_rc(r, hold->semkey, err);
		}
		/*
		 * force_release removed the set, which woke us with EIDRM: make the set anew and
		 * wait on that. The same id failing twice is not a removal but a real error.
		 */
		if (hold->semid == failed_id) {
			return lkc_sem_error(err, "lock", hold->semkey, r);
		}
		failed_id = hold->semid;
		hold->semid = -1;
	}
}

/* Gives the hold's count back; LKC_EXPIRED or LKC_LOST when force_release removed the set first. */
static lkc_rc lkc_sem_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	struct sembuf op[] = { { LKC_SEM_WRITER, -1, SEM_UNDO | IPC_NOWAIT } };
	int r;

	(void) store;
	(void) delay_ms; /* The lock layer refuses delays for stores without expiry. */
	if (lkc_sem_hold_key(hold, err) != 0) {
		return err->code;
	}
	if (hold->semid < 0) {
		return lkc_sem_gone(hold->semkey);
	}
	if (hold->mode == LKC_MODE_SHARED) {
		op[0].sem_num = LKC_SEM_READERS;
	}
	r = lkc_sem_apply(hold->semid, op, 1, 0, 0);
	if (r == 0) {
		return LKC_OK;
	}
	if (lkc_sem_removed(r)) {
		hold->semid = -1;
		return lkc_sem_gone(hold->semkey);
	}
	if (r == EAGAIN) {
		/* The count we would give back is not there: the hold is not ours any more. */
		return lkc_sem_gone(hold->semkey);
	}
	return lkc_sem_error(err, "unlock", hold->semkey, r);
}

/* LKC_OK while the set we hold a count in is still the resource's set. */
static lkc_rc lkc_sem_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	int missing, id;

	(void) store;
	if (lkc_sem_hold_key(hold, err) != 0) {
		return err->code;
	}
	if (hold->semid < 0) {
		return lkc_sem_gone(hold->semkey);
	}
	id = lkc_sem_find(hold->semkey, &missing, err);
	if (id < 0 && !missing) {
		return err->code;
	}
	/* Sets are only ever removed by force_release, so the same set means the same hold. */
	return id == hold->semid ? LKC_OK : lkc_sem_gone(hold->semkey);
}

/* As check: semaphore holds do not expire. */
static lkc_rc lkc_sem_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	(void) ttl_ms; /* Nothing expires; refreshing only confirms the hold. */
	return lkc_sem_check(store, hold, err);
}

/* Whether anybody holds the resource in any mode; creates nothing. */
static lkc_rc lkc_sem_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	int32_t key;
	int missing, id, held;

	(void) store;
	if (lkc_sem_key_of(resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	id = lkc_sem_find(key, &missing, err);
	if (id < 0) {
		if (!missing) {
			return err->code;
		}
		*locked = 0;
		return LKC_OK;
	}
	held = lkc_sem_held(id, key, err);
	if (held < 0) {
		return err->code;
	}
	*locked = held;
	return LKC_OK;
}

/*
 * Waits until the set of the resource has neither a writer nor a reader nor a
 * waiting writer, with wait-for-zero operations that take nothing: the kernel
 * wakes us on the release, and a writer that waits is served first.
 */
static lkc_rc lkc_sem_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	uint64_t deadline = 0;
	int32_t key;
	int missing, id, r;

	(void) store;
	if (lkc_sem_key_of(resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	wait_ms = wait_ms > LKC_SEM_WAIT_MAX ? LKC_WAIT_FOREVER : wait_ms;
	if (wait_ms > 0) {
		deadline = lkc_now_ns() + (uint64_t) wait_ms * 1000000u;
	}
	id = lkc_sem_find(key, &missing, err);
	if (id < 0) {
		/* No set: nobody ever held it, or it was removed while idle. */
		return missing ? LKC_OK : err->code;
	}
	{
		/* No waiting writer either: one queued before us is served before we call the resource free. */
		struct sembuf ops[] = {
			{ LKC_SEM_WRITER, 0, 0 },
			{ LKC_SEM_READERS, 0, 0 },
			{ LKC_SEM_WAITING, 0, 0 },
		};
		r = lkc_sem_apply(id, ops, 3, wait_ms, deadline);
	}
	/* A set removed under the wait had nobody left in it (or was broken by force_release): free. */
	if (r == 0 || lkc_sem_removed(r)) {
		return LKC_OK;
	}
	return lkc_sem_wait_rc(r, key, err);
}

/* Breaks every holder of the resource by removing its set. */
static lkc_rc lkc_sem_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	int32_t key;
	int missing, id;

	(void) store;
	if (lkc_sem_key_of(resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	id = lkc_sem_find(key, &missing, err);
	if (id < 0) {
		return missing ? LKC_OK : err->code;
	}
	/*
	 * The only place a set is removed. Removal wakes its waiters with EIDRM, and ours
	 * make the set anew and wait on that; holders find their set gone.
	 */
	if (semctl(id, 0, IPC_RMID) != 0 && !lkc_sem_removed(errno)) {
		return lkc_sem_error(err, "remove", key, errno);
	}
	return LKC_OK;
}

/* Forgets an inherited hold: there is nothing to close. */
static void lkc_sem_abandon(lkc_store *store, lkc_hold *hold)
{
	/* Nothing to undo: a forked child does not inherit its parent's SEM_UNDO adjustments. */
	(void) store;
	(void) hold;
}

/* Frees the store; sets stay, for their holders and waiters. */
static void lkc_sem_destroy(lkc_store *store)
{
	free(store);
}

static const lkc_store_ops lkc_sem_ops = {
	.name = "semaphore",
	.caps = LKC_CAP_SHARED | LKC_CAP_PROCESS_BOUND,
	.acquire = lkc_sem_acquire,
	.release = lkc_sem_release,
	.refresh = lkc_sem_refresh,
	.check = lkc_sem_check,
	.is_locked = lkc_sem_is_locked,
	.force_release = lkc_sem_force_release,
	.abandon = lkc_sem_abandon,
	.destroy = lkc_sem_destroy,
	.wait_free = lkc_sem_wait_free,
};
