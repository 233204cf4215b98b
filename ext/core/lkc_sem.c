/*
 * The SysV semaphore store: one set of six semaphores per resource, found by
 * an IPC key hashed from the resource. Every change that is a hold is made
 * with SEM_UNDO, so the kernel gives a dead process's holds back.
 *
 * The semaphores of a set:
 *   0  readers: how many shared holds there are
 *   1  writer: 1 while an exclusive hold exists
 *   2  writers waiting: new readers hold back while it is above 0, so a
 *      steady flow of readers cannot starve a writer
 *   3  promotion: 1 while a reader waits to become the writer
 *   4  users: how many stores keep the set's id (each adds 1, with SEM_UNDO,
 *      before its first operation on the set and takes it back when it lets go)
 *   5  dying: 1 from the moment a remover found the set idle until it is gone
 *
 * Linux creates the semaphores of a new set at 0, which is exactly the free
 * state, so a set needs no initialisation and there is no race in making one.
 *
 * Sets do not stay forever: a set that nobody uses (all six at 0) may be removed
 * by anybody, with one atomic operation that checks all six and sets "dying",
 * followed by IPC_RMID. A user announces itself with one atomic operation that
 * requires "dying" at 0, so nobody ever holds, waits on or keeps the id of a set
 * that is being removed: a removal never breaks a holder or a waiter, and a kept
 * id is never recycled by the kernel for another set under us. A store keeps
 * the ids of the sets its holds use plus at most `cache` idle ones (the most
 * recently used), so that a repeated cycle on one resource costs two system calls.
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
#include <sys/syscall.h>
#include <time.h>

#define LKC_SEM_READERS   0
#define LKC_SEM_WRITER    1
#define LKC_SEM_WAITING   2
#define LKC_SEM_PROMOTING 3
#define LKC_SEM_USERS     4
#define LKC_SEM_DYING     5
#define LKC_SEM_COUNT     6

/* Every key of ours has this top byte; ftok() puts its proj_id there, and 0xa7 is no printable character. */
#define LKC_SEM_KEY_PREFIX 0xa7000000u

/* Waits longer than this (about 34 years) are waits without bound, so deadlines never overflow. */
#define LKC_SEM_WAIT_MAX (INT64_C(1) << 40)

/* A try that meets a set being removed waits this long at most for it to go before it answers busy. */
#define LKC_SEM_DYING_WAIT_MS 50

/* What a store knows about one set: its id, kept with a count in "users". */
typedef struct lkc_sem_entry {
	int32_t key;
	int id;
	unsigned holds;                  /* holds of this store that have or wait for a count in the set */
	struct lkc_sem_entry *chain;     /* next entry of the same hash bucket */
	struct lkc_sem_entry *older;     /* the idle list (holds == 0), oldest first */
	struct lkc_sem_entry *newer;
} lkc_sem_entry;

typedef struct {
	lkc_store base;
	int mode;                        /* permissions of new sets */
	unsigned cache;                  /* idle sets kept at most */
	unsigned idle;                   /* idle entries now */
	size_t count;                    /* entries now */
	size_t nbuckets;                 /* a power of two */
	lkc_sem_entry **buckets;
	lkc_sem_entry *oldest;
	lkc_sem_entry *newest;
	pid_t pid;                       /* the process the entries' counts in "users" belong to */
} lkc_sem_store;

static const lkc_store_ops lkc_sem_ops;

/*
 * The key's hash input starts with this, NUL included, so our keys differ from other
 * programs' hashes of the same name. "/2": sets of six semaphores, removed when idle;
 * the four-semaphore sets of earlier versions have other keys and are never shared.
 */
static const char lkc_sem_salt[] = "lock-ext-sem/2";

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
	 * 24 bits of a hash can collide. Two resources on one key share one set: they then
	 * exclude each other (false contention), but one resource never gets two holders.
	 * The prefix keeps our keys recognisable and never IPC_PRIVATE.
	 */
	k = LKC_SEM_KEY_PREFIX | (uint32_t) d[0] << 16 | (uint32_t) d[1] << 8 | (uint32_t) d[2];
	*key = (int32_t) k;
	return 0;
}

/* The IPC key of a resource: never IPC_PRIVATE, except as the out-of-memory answer. */
int32_t lkc_sem_key(const char *resource, size_t len)
{
	int32_t key;

	/* IPC_PRIVATE (0) is never a key of ours, so it can stand for "out of memory". */
	return lkc_sem_key_of(resource, len, &key) == 0 ? key : IPC_PRIVATE;
}

/* Opens the store; sets are made with mode as they are first needed, and at most cache idle ones are kept. */
lkc_rc lkc_sem_open_cache(lkc_store **out, int mode, int cache, lkc_err *err)
{
	lkc_sem_store *s;

	*out = NULL;
	if (mode < 0 || mode > 0777) {
		return lkc_err_set(err, LKC_ERR_INVALID, "semaphore: mode must be between 0 and 0777, %#o given", (unsigned) mode);
	}
	if (cache < 0 || cache > LKC_SEM_CACHE_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "semaphore: cache must be between 0 and %d, %d given", LKC_SEM_CACHE_MAX, cache);
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	s->nbuckets = 16;
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	if (s->buckets == NULL) {
		free(s);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	s->base.ops = &lkc_sem_ops;
	s->mode = mode;
	s->cache = (unsigned) cache;
	s->pid = lkc_pid();
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}

/* Opens the store with the default cache. */
lkc_rc lkc_sem_open(lkc_store **out, int mode, lkc_err *err)
{
	return lkc_sem_open_cache(out, mode, LKC_SEM_CACHE_DEFAULT, err);
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

/* The id of the set of key, created when missing; -1 with errno set. */
static int lkc_sem_get(const lkc_sem_store *s, int32_t key)
{
	return semget((key_t) key, LKC_SEM_COUNT, IPC_CREAT | s->mode);
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
 * semtimedop(2) made in place on x86-64 rather than through libc's wrapper: after a
 * system call, each return to a caller that was on the stack before it is a
 * mispredicted branch on kernels that refill the return stack buffer on the way
 * back (SRSO and Spectre mitigations), and the wrapper's frame is one of them on
 * every acquire and release. Elsewhere, libc's. 0, or -1 with errno set.
 */
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_semtimedop)
static inline int lkc_semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
	long ret;
	register long r10 __asm__("r10") = (long) timeout;

	__asm__ volatile ("syscall"
		: "=a" (ret)
		: "0" ((long) SYS_semtimedop), "D" ((long) id), "S" (ops), "d" (n), "r" (r10)
		: "rcx", "r11", "memory");
	if (ret < 0) {
		errno = (int) -ret;
		return -1;
	}
	return 0;
}
#else
# define lkc_semtimedop semtimedop
#endif

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
		if (lkc_semtimedop(id, ops, n, timeout) == 0) {
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

/* The store's entry for key, or NULL. */
static lkc_sem_entry *lkc_sem_lookup(const lkc_sem_store *s, int32_t key)
{
	lkc_sem_entry *e = s->buckets[(uint32_t) key & (s->nbuckets - 1)];

	while (e != NULL && e->key != key) {
		e = e->chain;
	}
	return e;
}

/* Doubles the hash table when it is full; a failed allocation keeps the old, longer chains. */
static void lkc_sem_grow(lkc_sem_store *s)
{
	size_t n = s->nbuckets * 2;
	lkc_sem_entry **b;

	if (s->count < s->nbuckets || (b = calloc(n, sizeof(*b))) == NULL) {
		return;
	}
	for (size_t i = 0; i < s->nbuckets; i++) {
		lkc_sem_entry *e = s->buckets[i];
		while (e != NULL) {
			lkc_sem_entry *next = e->chain;
			size_t j = (uint32_t) e->key & (n - 1);
			e->chain = b[j];
			b[j] = e;
			e = next;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

static void lkc_sem_idle_unlink(lkc_sem_store *s, lkc_sem_entry *e)
{
	*(e->older ? &e->older->newer : &s->oldest) = e->newer;
	*(e->newer ? &e->newer->older : &s->newest) = e->older;
	e->older = e->newer = NULL;
	s->idle--;
}

/* Forgets the entry without touching its set (the set is gone, or its count is not ours). */
static void lkc_sem_forget(lkc_sem_store *s, lkc_sem_entry *e)
{
	lkc_sem_entry **p = &s->buckets[(uint32_t) e->key & (s->nbuckets - 1)];

	while (*p != e) {
		p = &(*p)->chain;
	}
	*p = e->chain;
	if (e->holds == 0) {
		lkc_sem_idle_unlink(s, e);
	}
	s->count--;
	free(e);
}

/*
 * Gives up a count in "users" (unpin: the store's own) and removes the set when that
 * leaves it idle: nobody holds, waits, promotes or keeps its id. Safe for anybody to call.
 */
static void lkc_sem_retire(int id, int unpin)
{
	struct sembuf ops[] = {
		{ LKC_SEM_USERS, -1, SEM_UNDO | IPC_NOWAIT },
		{ LKC_SEM_READERS, 0, IPC_NOWAIT },
		{ LKC_SEM_WRITER, 0, IPC_NOWAIT },
		{ LKC_SEM_WAITING, 0, IPC_NOWAIT },
		{ LKC_SEM_PROMOTING, 0, IPC_NOWAIT },
		{ LKC_SEM_USERS, 0, IPC_NOWAIT },
		{ LKC_SEM_DYING, 0, IPC_NOWAIT },
		/* With SEM_UNDO: a remover that dies before IPC_RMID leaves the set as it was. */
		{ LKC_SEM_DYING, 1, SEM_UNDO | IPC_NOWAIT },
	};
	struct sembuf *first = unpin ? ops : ops + 1;
	size_t n = unpin ? 8 : 7;

	if (semop(id, first, n) == 0) {
		if (semctl(id, 0, IPC_RMID) != 0 && !lkc_sem_removed(errno)) {
			/* Not ours to remove (another user's set): take the mark back so that others go on using it. */
			struct sembuf undo[] = { { LKC_SEM_DYING, -1, SEM_UNDO | IPC_NOWAIT } };
			semop(id, undo, 1);
		}
		return;
	}
	if (unpin && errno == EAGAIN) {
		/* In use: only our count goes. */
		semop(id, ops, 1);
	}
}

/* Lets go of an idle entry: forgets it and removes its set if nobody else uses it. */
static void lkc_sem_evict(lkc_sem_store *s, lkc_sem_entry *e)
{
	int id = e->id;

	lkc_sem_forget(s, e);
	lkc_sem_retire(id, 1);
}

/* One hold of the store stopped using the entry; the idle ones are trimmed back to the cache size. */
static void lkc_sem_put(lkc_sem_store *s, lkc_sem_entry *e)
{
	if (--e->holds > 0) {
		return;
	}
	e->older = s->newest;
	e->newer = NULL;
	*(s->newest ? &s->newest->newer : &s->oldest) = e;
	s->newest = e;
	s->idle++;
	while (s->idle > s->cache) {
		lkc_sem_evict(s, s->oldest);
	}
}

/*
 * In a forked child the counts in "users" are the parent's (a child inherits no
 * SEM_UNDO adjustments): the child forgets the entries and starts anew.
 */
static void lkc_sem_after_fork(lkc_sem_store *s)
{
	if (s->pid == lkc_pid()) {
		return;
	}
	for (size_t i = 0; i < s->nbuckets; i++) {
		while (s->buckets[i] != NULL) {
			lkc_sem_entry *e = s->buckets[i];
			s->buckets[i] = e->chain;
			free(e);
		}
	}
	s->count = 0;
	s->idle = 0;
	s->oldest = s->newest = NULL;
	s->pid = lkc_pid();
}

/* Lets go of every idle entry, to make room under the system's limit. */
static void lkc_sem_evict_idle(lkc_sem_store *s)
{
	while (s->oldest != NULL) {
		lkc_sem_evict(s, s->oldest);
	}
}

/*
 * Removes every idle set of ours on the system that nobody keeps: those left by
 * processes that died holding (killed, or keeping a hold to their end). Linux only
 * (SEM_STAT); one call per slot of the kernel's table, so only when the table is full.
 */
static void lkc_sem_sweep(void)
{
	struct seminfo info;
	union {
		int val;
		struct semid_ds *buf;
		unsigned short *array;
		struct seminfo *info;
	} arg;
	int max;

	arg.info = &info;
	max = semctl(0, 0, SEM_INFO, arg);
	for (int i = 0; i <= max; i++) {
		struct semid_ds ds;
		int id;

		arg.buf = &ds;
		id = semctl(i, 0, SEM_STAT, arg);
		if (id >= 0 && ds.sem_nsems == LKC_SEM_COUNT
			&& ((uint32_t) ds.sem_perm.__key & 0xff000000u) == LKC_SEM_KEY_PREFIX) {
			lkc_sem_retire(id, 0);
		}
	}
}

/* The error for a set that cannot be created because a system limit is reached. */
static lkc_rc lkc_sem_limit_error(lkc_err *err, int32_t key)
{
	struct seminfo info;
	union {
		int val;
		struct semid_ds *buf;
		unsigned short *array;
		struct seminfo *info;
	} arg;

	arg.info = &info;
	if (semctl(0, 0, IPC_INFO, arg) < 0) {
		return lkc_sem_error(err, "create", key, ENOSPC);
	}
	return lkc_err_set(err, LKC_ERR_SYSTEM,
		"semaphore: cannot create the set with key 0x%08x: the system limit of %d semaphore sets (SEMMNI) "
		"or %d semaphores (SEMMNS) is reached (see sysctl kernel.sem), and no idle set of this store is left to remove",
		(unsigned) key, info.semmni, info.semmns);
}

/*
 * Waits while a remover takes the set id away (it marked it dying): 0 when gone or
 * given back, EAGAIN when the deadline (for a try, a short bound) passed first,
 * EINTR when the host ended the wait.
 */
static int lkc_sem_await_removal(int id, int64_t wait_ms, uint64_t deadline_ns)
{
	uint64_t end = wait_ms == 0 ? lkc_now_ns() + LKC_SEM_DYING_WAIT_MS * 1000000u : deadline_ns;
	struct timespec pause = { 0, 20000 };

	for (;;) {
		if (semctl(id, LKC_SEM_DYING, GETVAL) <= 0) {
			return 0;
		}
		if (wait_ms != LKC_WAIT_FOREVER && lkc_now_ns() >= end) {
			return EAGAIN;
		}
		/* The remover's IPC_RMID follows its check at once: the first short sleep nearly always sees it. */
		if (nanosleep(&pause, NULL) != 0 && lkc_interrupted()) {
			return EINTR;
		}
		if (pause.tv_nsec < 1000000) {
			pause.tv_nsec *= 2;
		}
	}
}

/* Adds an entry for the set id of key, in use by one hold; NULL when out of memory. */
static lkc_sem_entry *lkc_sem_insert(lkc_sem_store *s, int32_t key, int id)
{
	lkc_sem_entry *e = calloc(1, sizeof(*e));
	size_t b;

	if (e == NULL) {
		return NULL;
	}
	lkc_sem_grow(s);
	b = (uint32_t) key & (s->nbuckets - 1);
	e->key = key;
	e->id = id;
	e->holds = 1;
	e->chain = s->buckets[b];
	s->buckets[b] = e;
	s->count++;
	return e;
}

/*
 * The store's entry for key, with one more hold counted and a count of the store's
 * in the set's "users" (made when missing). NULL with *rc and err filled on failure;
 * *rc is LKC_BUSY or LKC_INTERRUPTED when a set being removed outlasted the wait.
 */
static lkc_sem_entry *lkc_sem_enter(lkc_sem_store *s, int32_t key, int64_t wait_ms, uint64_t deadline_ns,
	lkc_rc *rc, lkc_err *err)
{
	struct sembuf pin[] = {
		{ LKC_SEM_DYING, 0, IPC_NOWAIT },
		{ LKC_SEM_USERS, 1, SEM_UNDO | IPC_NOWAIT },
	};
	struct sembuf unpin[] = { { LKC_SEM_USERS, -1, SEM_UNDO | IPC_NOWAIT } };
	lkc_sem_entry *e = lkc_sem_lookup(s, key);
	int freed = 0;
	int id;

	if (e != NULL) {
		if (e->holds++ == 0) {
			lkc_sem_idle_unlink(s, e);
		}
		return e;
	}
	for (;;) {
		int r;

		id = lkc_sem_get(s, key);
		if (id < 0) {
			if (errno == ENOSPC && freed < 2) {
				/*
				 * Make room: first the sets this store keeps idle, then every idle set of
				 * ours that nobody keeps (left by dead holders), trying again after each.
				 */
				if (freed++ == 0) {
					lkc_sem_evict_idle(s);
				} else {
					lkc_sem_sweep();
				}
				continue;
			}
			if (errno == ENOSPC) {
				*rc = lkc_sem_limit_error(err, key);
			} else if (errno == EINVAL) {
				*rc = lkc_err_set(err, LKC_ERR_SYSTEM,
					"semaphore: a set with key 0x%08x exists with fewer than %d semaphores; another program uses this key",
					(unsigned) key, LKC_SEM_COUNT);
			} else {
				*rc = lkc_sem_error(err, "create", key, errno);
			}
			return NULL;
		}
		if (semop(id, pin, 2) == 0) {
			break;
		}
		r = errno;
		if (r == EAGAIN) {
			/* Being removed: once it is gone, make it anew. */
			r = lkc_sem_await_removal(id, wait_ms, deadline_ns);
			if (r != 0) {
				*rc = r == EAGAIN ? LKC_BUSY : LKC_INTERRUPTED;
				return NULL;
			}
		} else if (!lkc_sem_removed(r)) {
			*rc = lkc_sem_error(err, "open", key, r);
			return NULL;
		}
	}
	e = lkc_sem_insert(s, key, id);
	if (e == NULL) {
		semop(id, unpin, 1);
		*rc = lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	return e;
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
	lkc_sem_after_fork(s);
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
		lkc_rc rc = LKC_OK;
		lkc_sem_entry *e = lkc_sem_enter(s, hold->semkey, wait_ms, deadline_ns, &rc, err);

		if (e == NULL) {
			return rc;
		}
		r = lkc_sem_take(e->id, mode, wait_ms, deadline_ns);
		if (r == 0) {
			hold->semid = e->id;
			return LKC_OK;
		}
		if (!lkc_sem_removed(r) || e->id == failed_id) {
			/* A new set of the same id failing again is not a removal but a real error. */
			lkc_sem_put(s, e);
			return lkc_sem_wait_rc(r, hold->semkey, err);
		}
		/*
		 * force_release (or ipcrm) removed the set, which woke us with EIDRM; idle
		 * removal never does, since our count in "users" keeps the set. Make it anew
		 * and wait on that.
		 */
		failed_id = e->id;
		lkc_sem_forget(s, e);
	}
}

/* Gives the hold's count back; LKC_EXPIRED or LKC_LOST when force_release removed the set first. */
static lkc_rc lkc_sem_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_sem_store *s = (lkc_sem_store *) store;
	struct sembuf op[] = { { LKC_SEM_WRITER, -1, SEM_UNDO | IPC_NOWAIT } };
	lkc_sem_entry *e;
	int id = hold->semid;
	int r;

	(void) delay_ms; /* The lock layer refuses delays for stores without expiry. */
	if (lkc_sem_hold_key(hold, err) != 0) {
		return err->code;
	}
	if (id < 0) {
		return lkc_sem_gone(hold->semkey);
	}
	/* No fork check: the lock layer releases only holds taken in this process, whose acquire made it. */
	hold->semid = -1;
	e = lkc_sem_lookup(s, hold->semkey);
	if (e != NULL && (e->id != id || e->holds == 0)) {
		/* Our set was removed (force_release) and the store has moved on to a new one. */
		e = NULL;
	}
	if (hold->mode == LKC_MODE_SHARED) {
		op[0].sem_num = LKC_SEM_READERS;
	}
	r = lkc_sem_apply(id, op, 1, 0, 0);
	if (e != NULL) {
		if (lkc_sem_removed(r)) {
			lkc_sem_forget(s, e);
		} else {
			lkc_sem_put(s, e);
		}
	}
	if (r == 0) {
		return LKC_OK;
	}
	if (lkc_sem_removed(r) || r == EAGAIN) {
		/* The set is gone, or the count we would give back is not there: the hold is not ours any more. */
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
	/* A set we hold a count in is only ever removed by force_release, so the same set means the same hold. */
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
 * What the set of the resource says, in one read of its values: the mode, and
 * how many processes the kernel counts as blocked on it (waiters for a hold and
 * waitUntilFree() callers; each is counted on the one semaphore it waits on).
 * Owners and the order of the waiters are the kernel's alone.
 */
static lkc_rc lkc_sem_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	unsigned short values[LKC_SEM_COUNT];
	union {
		int val;
		struct semid_ds *buf;
		unsigned short *array;
	} arg;
	int32_t key;
	int missing, id;

	(void) store;
	out->mode = LKC_SEEN_FREE;
	out->ttl_ms = LKC_TTL_NONE;
	out->waiters = 0;
	if (lkc_sem_key_of(resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	id = lkc_sem_find(key, &missing, err);
	if (id < 0) {
		return missing ? LKC_OK : err->code;
	}
	arg.array = values;
	if (semctl(id, 0, GETALL, arg) != 0) {
		/* Removed meanwhile: nobody held or waited on it. */
		return lkc_sem_removed(errno) ? LKC_OK : lkc_sem_error(err, "read", key, errno);
	}
	for (int i = LKC_SEM_READERS; i <= LKC_SEM_PROMOTING; i++) {
		int increase = semctl(id, i, GETNCNT), zero = semctl(id, i, GETZCNT);

		out->waiters += (increase > 0 ? increase : 0) + (zero > 0 ? zero : 0);
	}
	out->mode = values[LKC_SEM_WRITER] > 0 ? LKC_SEEN_WRITE : values[LKC_SEM_READERS] > 0 ? LKC_SEEN_READ : LKC_SEEN_FREE;
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
	lkc_sem_store *s = (lkc_sem_store *) store;
	lkc_sem_entry *e;
	int32_t key;
	int missing, id;

	if (lkc_sem_key_of(resource, len, &key) != 0) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "semaphore: out of memory");
	}
	id = lkc_sem_find(key, &missing, err);
	if (id < 0) {
		return missing ? LKC_OK : err->code;
	}
	/*
	 * The only removal of a set in use. It wakes the set's waiters with EIDRM, and ours
	 * make the set anew and wait on that; holders find their set gone.
	 */
	if (semctl(id, 0, IPC_RMID) != 0 && !lkc_sem_removed(errno)) {
		return lkc_sem_error(err, "remove", key, errno);
	}
	lkc_sem_after_fork(s);
	e = lkc_sem_lookup(s, key);
	if (e != NULL && e->id == id && e->holds == 0) {
		lkc_sem_forget(s, e);
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

/* Frees the store, removing the sets it kept that nobody else uses; sets in use stay for their holders and waiters. */
static void lkc_sem_destroy(lkc_store *store)
{
	lkc_sem_store *s = (lkc_sem_store *) store;

	lkc_sem_after_fork(s);
	for (size_t i = 0; i < s->nbuckets; i++) {
		while (s->buckets[i] != NULL) {
			lkc_sem_entry *e = s->buckets[i];
			int id = e->id;

			s->buckets[i] = e->chain;
			free(e);
			lkc_sem_retire(id, 1);
		}
	}
	free(s->buckets);
	free(s);
}

static const lkc_store_ops lkc_sem_ops = {
	.name = "semaphore",
	.caps = LKC_CAP_SHARED | LKC_CAP_PROCESS_BOUND,
	.acquire = lkc_sem_acquire,
	.release = lkc_sem_release,
	.refresh = lkc_sem_refresh,
	.check = lkc_sem_check,
	.is_locked = lkc_sem_is_locked,
	.inspect = lkc_sem_inspect,
	.force_release = lkc_sem_force_release,
	.abandon = lkc_sem_abandon,
	.destroy = lkc_sem_destroy,
	.wait_free = lkc_sem_wait_free,
	.stats = &lkc_stats_of[LKC_KIND_SEM],
};
