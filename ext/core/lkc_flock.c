/*
 * The flock store: one lock file per resource in one directory, held with
 * flock(2). The kernel drops a hold when the last descriptor of its open file
 * description closes, so a killed process never leaves a lock behind.
 *
 * Every process that has a lock file open maps its first page, whose header
 * (lkc_flock_hdr) the processes share: the count of exclusive grants (the
 * fencing token), a flag that says the file was removed or replaced (whoever
 * locks it then moves to the file at the path), and a hint of how many wait.
 * With it, an uncontended cycle is the two system calls the kernel needs:
 * flock(LOCK_EX | LOCK_NB) and flock(LOCK_UN). A released file goes to a small
 * per-store cache of open idle files (the cache option); a file that leaves the
 * cache is removed when nobody holds it or waits for it, so the directory keeps
 * no file per name it ever saw.
 *
 * Waiters count themselves in the header and sleep on its futex word, which
 * a releaser that sees a count changes and wakes: the kernel runs the waiter
 * at once, as it would one blocked in flock(), and the wait still has a
 * deadline and yields to signals. A waiter also looks again every
 * LKC_FLOCK_SLICE_MS, for what wakes nobody: a holder killed (the kernel drops
 * its lock without a word). Waiters mark themselves with OFD read locks on the
 * file's first bytes (independent of flock locks on local file systems), which
 * keep their file from being removed: byte 2 while asleep on the futex word,
 * byte 0 while asleep on inotify (waitUntilFree()), for whom a releaser that
 * finds such a mark touches the file to post an event.
 *
 * Writers are preferred: a writer that has to wait also marks byte 1, and a new
 * reader that finds such a mark holds back and waits as well, so a stream of
 * overlapping readers cannot starve a writer. That costs a shared acquire one
 * fcntl() more, except right after a release of the same hold that found
 * nobody waiting: the reader then takes the lock without looking, so a writer
 * that began to wait since sees each reader take at most one more hold (its
 * release finds the writer's mark, and its next acquire looks). As on the
 * semaphore store, a process that holds a shared hold and asks for another one
 * while a writer waits waits on itself, until its timeout; and a steady stream
 * of writers can keep readers waiting. On network file systems nobody marks
 * anything (see lkc_flock_mark_waiting), and there readers and writers are
 * served in no particular order.
 *
 * This file: opening the store, its operations table, taking, converting,
 * releasing and breaking holds, and their fencing tokens. The lock files are
 * lkc_flock_file.c's, waiting is lkc_flock_wait.c's (see lkc_flock_int.h).
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_flock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

/* How far a replaced file's counter jumps ahead, past tokens a broken holder may still take from the old file. */
#define LKC_FLOCK_FENCE_MARGIN 1024

static const lkc_store_ops lkc_flock_ops;

static pthread_once_t lkc_flock_fork_once = PTHREAD_ONCE_INIT;

/* Creates directory and its missing parents with dirmode, like mkdir -p. */
static lkc_rc lkc_flock_mkdirs(const char *directory, mode_t dirmode, lkc_err *err)
{
	size_t len = strlen(directory);
	char *path = malloc(len + 1);

	if (path == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	memcpy(path, directory, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0') {
			continue;
		}
		if (path[i - 1] == '/') {
			continue;
		}
		path[i] = '\0';
		if (mkdir(path, dirmode) == 0) {
			/* The umask must not take away what the mode option asked for. */
			chmod(path, dirmode);
		} else if (errno != EEXIST) {
			int e = errno;
			lkc_err_errno(err, lkc_flock_rc(e), e, "flock: cannot create directory %s", path);
			free(path);
			return err->code;
		}
		path[i] = directory[i];
	}
	free(path);
	return LKC_OK;
}

/*
 * Whether the file system of the directory dirfd emulates flock() with byte-range
 * locks (network file systems). Its lock files are regular files right in it, so
 * they live on the same file system.
 */
static int lkc_flock_dir_emulated(int dirfd)
{
	struct statfs sfs;

	/* A file system we cannot ask about is taken for a local one, where marks work. */
	if (fstatfs(dirfd, &sfs) != 0) {
		return 0;
	}
	switch ((uint32_t) sfs.f_type) {
		case NFS_SUPER_MAGIC:
		case SMB_SUPER_MAGIC:
		case CIFS_SUPER_MAGIC:
		case SMB2_SUPER_MAGIC:
		case V9FS_MAGIC:
		case AFS_FS_MAGIC:
		case AFS_SUPER_MAGIC:
			return 1;
		default:
			return 0;
	}
}

/* Opens the store on directory, creating it (and its parents) when missing. */
lkc_rc lkc_flock_open(lkc_store **out, const char *directory, int mode, lkc_err *err)
{
	lkc_flock_store *s;
	mode_t dirmode;
	int fd;

	*out = NULL;
	if (directory == NULL || directory[0] == '\0') {
		return lkc_err_set(err, LKC_ERR_INVALID, "flock: the directory must not be empty");
	}
	if (mode < 0 || mode > 0777) {
		return lkc_err_set(err, LKC_ERR_INVALID, "flock: mode must be between 0 and 0777, %#o given", (unsigned) mode);
	}
	/* A directory needs search permission wherever it grants read, and its owner must be able to create files in it. */
	dirmode = (mode_t) mode | (((mode_t) mode & 0444) >> 2) | S_IRWXU;
	fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (lkc_flock_mkdirs(directory, dirmode, err) != LKC_OK) {
			return err->code;
		}
		fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;
		struct stat st;

		if (e == ENOTDIR && stat(directory, &st) == 0) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: %s is not a directory", directory);
		}
		return lkc_err_errno(err, lkc_flock_rc(e), e, "flock: cannot open directory %s", directory);
	}
	s = calloc(1, sizeof(*s));
	if (s != NULL) {
		s->dir = strdup(directory);
	}
	if (s == NULL || s->dir == NULL) {
		free(s);
		close(fd);
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	pthread_once(&lkc_flock_fork_once, lkc_flock_fork_init);
	s->base.ops = &lkc_flock_ops;
	s->dirfd = fd;
	s->mode = mode;
	s->emulated = lkc_flock_dir_emulated(fd);
	s->inotify_fd = -1;
	s->cache_max = LKC_FLOCK_CACHE_DEFAULT;
	s->lru_first = s->lru_last = -1;
	lkc_store_opened(&s->base);
	*out = &s->base;
	return LKC_OK;
}

/* The count of exclusive grants of the lock file fd. */
static inline int64_t lkc_flock_gen(int fd)
{
	return __atomic_load_n(&lkc_flock_slot(fd)->hdr->gen, __ATOMIC_ACQUIRE);
}

/*
 * Counts the exclusive grant that hold just got on fd and gives it its fencing
 * token. The first exclusive holder of a new file starts the count at the wall
 * clock in nanoseconds (or at the decimal counter that earlier versions kept at
 * byte 0, if higher), as Redis does when its counter is lost: a removed file
 * counted one per grant from an earlier clock reading, and no grant takes a
 * nanosecond, so the new file starts above every token the old one gave.
 */
static lkc_rc lkc_flock_grant(lkc_flock_store *s, lkc_hold *hold, int fd, lkc_err *err)
{
	lkc_flock_file *f = lkc_flock_slot(fd);
	lkc_flock_hdr *hdr = f->hdr;
	int64_t gen;

	if (__atomic_load_n(&hdr->magic, __ATOMIC_ACQUIRE) != LKC_FLOCK_MAGIC) {
		const char *old = (const char *) hdr - LKC_FLOCK_HDR_OFF;
		int64_t clock, start = 0;
		struct timespec ts;

		for (int i = 0; i < LKC_FLOCK_HDR_OFF && old[i] >= '0' && old[i] <= '9' && start <= (INT64_MAX - 9) / 10; i++) {
			start = start * 10 + (old[i] - '0');
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		clock = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
		__atomic_store_n(&hdr->gen, clock > start ? clock : start, __ATOMIC_RELEASE);
		__atomic_store_n(&hdr->magic, LKC_FLOCK_MAGIC, __ATOMIC_RELEASE);
	}
	gen = __atomic_load_n(&hdr->gen, __ATOMIC_ACQUIRE);
	if (gen == INT64_MAX) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: the fencing counter of %s/%s is exhausted", s->dir, f->name);
	}
	/* Only the exclusive holder writes it: a plain increment, published for force_release and promotions. */
	__atomic_store_n(&hdr->gen, gen + 1, __ATOMIC_RELEASE);
	hold->fence = gen + 1;
	return LKC_OK;
}

/* Unlocks hold's file, wakes whoever waits for it, and puts it into the cache; whether somebody waited. */
static int lkc_flock_let_go(lkc_flock_store *s, lkc_hold *hold)
{
	int fd = hold->fd;
	int woke = 0;

	/* The lock belongs to the open file description: this frees it even if a forked child shares the descriptor. */
	flock(fd, LOCK_UN);
	__atomic_add_fetch(&lkc_flock_slot(fd)->hdr->releases, 1, __ATOMIC_RELEASE);
	/*
	 * A waiter counts itself, then marks, then tries; we unlock, then read the count.
	 * Either its try came after our unlock and found the lock free, or its count came
	 * before our read (the fence orders our read after the unlock) and we look for
	 * its mark as lkc_flock_wake says. No count, no system call.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (s->emulated || __atomic_load_n(&lkc_flock_slot(fd)->hdr->waiters, __ATOMIC_SEQ_CST) > 0) {
		woke = lkc_flock_wake(s, hold->path, fd);
	}
	hold->fd = -1;
	lkc_flock_put(s, fd);
	return woke;
}

/* Lets go of a hold that turned out to be lost: the lock layer then counts it as not held. */
static lkc_rc lkc_flock_lost(lkc_flock_store *s, lkc_hold *hold)
{
	lkc_flock_let_go(s, hold);
	hold->mode = LKC_MODE_NONE;
	hold->fence = -1;
	return LKC_LOST;
}

/*
 * Changes the mode of a hold we have: LKC_OK, LKC_BUSY, LKC_INTERRUPTED, an error,
 * LKC_LOST when a writer got in while a promotion held nothing (the hold is then
 * gone), or LKC_EXPIRED when the hold turned out to be broken (the caller then
 * acquires anew).
 */
static lkc_rc lkc_flock_convert(lkc_flock_store *s, lkc_hold *hold, lkc_mode mode,
	int64_t wait_ms, uint64_t deadline_ns, lkc_err *err)
{
	int old_op = hold->mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX;
	int promote = hold->mode == LKC_MODE_SHARED && mode == LKC_MODE_EXCLUSIVE;
	int64_t gen;
	lkc_flock_step step;

	if (lkc_flock_dead(hold->fd)) {
		lkc_flock_drop(hold);
		return LKC_EXPIRED;
	}
	if (mode == hold->mode) {
		return LKC_OK;
	}
	/* No writer changes the count while we read: every grant since is somebody's write hold. */
	gen = lkc_flock_gen(hold->fd);
	/*
	 * flock() converts by dropping the old lock and then taking the new one, and it
	 * is not atomic: a promotion holds nothing while it waits (which is also why two
	 * promoting readers cannot deadlock). A writer that got in meanwhile counted its
	 * grant, and then what the reader read may have changed: the hold is lost. When
	 * the promotion fails we take the old mode back, unless a writer got in; if even
	 * that fails the hold is gone, and check() and release() will say so. A waiting
	 * promotion marks itself as a waiting writer like any other; a demotion does not
	 * yield to waiting writers, as it holds the lock they wait for.
	 */
	step = lkc_flock_wait(s, hold->path, hold->fd, mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX, LKC_FLOCK_TAKE, 0,
		wait_ms, deadline_ns, err);
	switch (step) {
		case LKC_FLOCK_GOT:
			if (!promote) {
				/* A writer turned reader lets the waiting readers in. */
				lkc_flock_wake(s, hold->path, hold->fd);
				return LKC_OK;
			}
			if (lkc_flock_gen(hold->fd) != gen) {
				return lkc_flock_lost(s, hold);
			}
			if (lkc_flock_grant(s, hold, hold->fd, err) != LKC_OK) {
				/* Back to what the hold was, so that it still means what it meant. */
				flock(hold->fd, LOCK_SH);
				return err->code;
			}
			return LKC_OK;
		case LKC_FLOCK_STALE:
			lkc_flock_drop(hold);
			return LKC_EXPIRED;
		default:
			if (flock(hold->fd, old_op | LOCK_NB) != 0) {
				lkc_flock_drop(hold);
			} else if (promote && lkc_flock_gen(hold->fd) != gen) {
				return lkc_flock_lost(s, hold);
			}
			return step == LKC_FLOCK_BUSY ? LKC_BUSY : step == LKC_FLOCK_INTR ? LKC_INTERRUPTED : err->code;
	}
}

/*
 * Takes or converts the hold, waiting as wait_ms allows; on failure the hold keeps
 * what it had, if anything. The lock file comes from the store's cache when it
 * has one open and idle, and goes back there when the hold ends.
 */
static lkc_rc lkc_flock_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	int op = mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX;
	uint64_t deadline_ns;
	/* What the last release of this hold saw holds for this acquire alone. */
	int quiet = hold->quiet;

	hold->quiet = 0;
	(void) ttl_ms; /* A flock hold lasts until released or until its process ends. */
	wait_ms = lkc_flock_clamp_wait(wait_ms);
	deadline_ns = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	if (hold->fd >= 0 && hold->mode != LKC_MODE_NONE) {
		lkc_rc rc = lkc_flock_convert(s, hold, mode, wait_ms, deadline_ns, err);
		if (rc != LKC_EXPIRED) {
			return rc;
		}
	}
	if (hold->fd >= 0) {
		/* A descriptor left without a hold (a restored hold's): it locks nothing of ours. */
		lkc_flock_drop(hold);
	}
	if (hold->path == NULL) {
		hold->path = lkc_flock_file_name(hold->resource, hold->resource_len);
		if (hold->path == NULL) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
		}
	}
	for (;;) {
		lkc_flock_yield yield = op != LOCK_SH ? LKC_FLOCK_TAKE : quiet ? LKC_FLOCK_YIELD_LATER : LKC_FLOCK_YIELD;
		lkc_flock_step step;
		int fd = lkc_flock_cache_take(s, hold->path);

		if (fd < 0) {
			fd = lkc_flock_open_file(s, hold->path, err);
			if (fd < 0) {
				return err->code;
			}
		}
		step = LKC_FLOCK_FAIL;
		if (yield == LKC_FLOCK_TAKE && (wait_ms == 0 || __atomic_load_n(&lkc_flock_slot(fd)->hdr->waiters, __ATOMIC_ACQUIRE) <= 0)) {
			/* The uncontended case in one system call, without the wait's set-up; a wait queues behind waiters. */
			int r = flock(fd, op | LOCK_NB);

			if (r == 0 || errno == EWOULDBLOCK) {
				step = lkc_flock_dead(fd) ? LKC_FLOCK_STALE : r == 0 ? LKC_FLOCK_GOT : wait_ms == 0 ? LKC_FLOCK_BUSY : LKC_FLOCK_FAIL;
			}
		}
		if (step == LKC_FLOCK_FAIL) {
			step = lkc_flock_wait(s, hold->path, fd, op, yield, 1, wait_ms, deadline_ns, err);
		}
		switch (step) {
			case LKC_FLOCK_GOT:
				hold->fd = fd;
				if (op == LOCK_EX && lkc_flock_grant(s, hold, fd, err) != LKC_OK) {
					lkc_flock_let_go(s, hold);
					return err->code;
				}
				return LKC_OK;
			case LKC_FLOCK_STALE:
				/* Removed or replaced: the file at the path is the one to lock. */
				lkc_flock_unlock_close(fd);
				quiet = 0;
				continue;
			case LKC_FLOCK_FAIL:
				lkc_flock_close(fd);
				return err->code;
			default:
				lkc_flock_put(s, fd);
				return step == LKC_FLOCK_BUSY ? LKC_BUSY : LKC_INTERRUPTED;
		}
	}
}

/*
 * Unlocks and puts the lock file into the cache. A hold that force_release broke
 * lets go of the orphaned file and answers LKC_EXPIRED or LKC_LOST, as the other
 * stores do.
 */
static lkc_rc lkc_flock_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;

	(void) delay_ms; /* The lock layer refuses delays for stores without expiry. */
	(void) err;
	if (hold->fd < 0) {
		/* A failed conversion lost the hold. */
		return lkc_flock_gone(s, hold->path);
	}
	if (lkc_flock_dead(hold->fd)) {
		lkc_flock_drop(hold);
		return lkc_flock_gone(s, hold->path);
	}
	hold->quiet = !lkc_flock_let_go(s, hold);
	return LKC_OK;
}

/* LKC_OK while our file is the live one; unlike an acquire, this also sees a file removed by hand. */
static lkc_rc lkc_flock_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	struct stat st;

	if (hold->fd < 0 || lkc_flock_dead(hold->fd)) {
		return lkc_flock_gone(s, hold->path);
	}
	if (fstat(hold->fd, &st) != 0) {
		return lkc_flock_file_error(s, "inspect", hold->path, errno, err);
	}
	return st.st_nlink == 0 ? lkc_flock_gone(s, hold->path) : LKC_OK;
}

/* As check, and lets go of a broken hold's file. */
static lkc_rc lkc_flock_refresh(lkc_store *store, lkc_hold *hold, int64_t ttl_ms, lkc_err *err)
{
	lkc_rc rc = lkc_flock_check(store, hold, err);

	(void) ttl_ms; /* Nothing expires; refreshing only confirms the hold. */
	if ((rc == LKC_EXPIRED || rc == LKC_LOST) && hold->fd >= 0) {
		/* The lock layer forgets the hold now: let go of the replaced file too. */
		lkc_flock_drop(hold);
	}
	return rc;
}

/* Whether anybody, this process included, holds the resource's lock file; creates nothing. */
static lkc_rc lkc_flock_is_locked(lkc_store *store, const char *resource, size_t len, int *locked, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	char *name = lkc_flock_file_name(resource, len);
	int r;

	if (name == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	r = lkc_flock_probe(s, name, err);
	free(name);
	if (r < 0) {
		return err->code;
	}
	*locked = r;
	return LKC_OK;
}

/* The token the exclusive hold got with its grant (the lock layer keeps it; this serves a hold that lacks one). */
static lkc_rc lkc_flock_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	(void) store;
	if (hold->fd < 0 || lkc_flock_dead(hold->fd)) {
		return lkc_err_set(err, LKC_ERR_STATE, "flock: the lock is not held");
	}
	*fence = lkc_flock_gen(hold->fd);
	return LKC_OK;
}

/* Wakes the waiters asleep on the lock file open as fd (-1: none), then closes it. */
static void lkc_flock_close_woken(int fd)
{
	struct stat st;

	if (fd < 0) {
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= LKC_FLOCK_FILE_SIZE) {
		void *map = mmap(NULL, LKC_FLOCK_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (map != MAP_FAILED) {
			lkc_flock_wake_sleepers((lkc_flock_hdr *) ((char *) map + LKC_FLOCK_HDR_OFF));
			munmap(map, LKC_FLOCK_FILE_SIZE);
		}
	}
	close(fd);
}

/*
 * Breaks every holder of the resource: marks the file dead in its header, then
 * puts a fresh file at its name, atomically, carrying the counter ahead. Holders
 * keep their lock on the old inode, which their check() and release() see dead;
 * waiters are woken on it (the futex word; inotify's IN_ATTRIB, the link count,
 * for waitUntilFree()) and move over.
 */
static lkc_rc lkc_flock_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	char token[LKC_TOKEN_LEN + 1];
	char tmp[LKC_TOKEN_LEN + 16];
	char *name = lkc_flock_file_name(resource, len);
	lkc_flock_hdr hdr;
	char old[LKC_FLOCK_HDR_OFF];
	uint32_t dead = 1;
	struct stat st;
	int64_t gen = 0;
	ssize_t n;
	int fd, ofd;

	if (name == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	do {
		ofd = openat(s->dirfd, name, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	} while (ofd < 0 && errno == EINTR);
	if (ofd < 0 && errno == ENOENT) {
		free(name);
		return LKC_OK;
	}
	if (ofd < 0 && errno != ELOOP) {
		lkc_flock_file_error(s, "open", name, errno, err);
		free(name);
		return err->code;
	}
	/* Something planted at the name (a link, a FIFO) is no lock file: it is only replaced. */
	if (ofd >= 0 && fstat(ofd, &st) == 0 && S_ISREG(st.st_mode)) {
		/* Dead first: whoever locks the old file from now on moves to the path, where the new one is about to be. */
		n = pwrite(ofd, &dead, sizeof(dead), LKC_FLOCK_HDR_OFF + offsetof(lkc_flock_hdr, dead));
		if (n != (ssize_t) sizeof(dead)) {
			lkc_flock_file_error(s, "mark", name, n < 0 ? errno : EIO, err);
			close(ofd);
			free(name);
			return err->code;
		}
		memset(&hdr, 0, sizeof(hdr));
		memset(old, 0, sizeof(old));
		if (pread(ofd, &hdr, sizeof(hdr), LKC_FLOCK_HDR_OFF) == (ssize_t) sizeof(hdr) && hdr.magic == LKC_FLOCK_MAGIC) {
			gen = hdr.gen;
		} else if (pread(ofd, old, sizeof(old), 0) > 0) {
			for (size_t i = 0; i < sizeof(old) && old[i] >= '0' && old[i] <= '9' && gen <= (INT64_MAX - 9) / 10; i++) {
				gen = gen * 10 + (old[i] - '0');
			}
		}
	}
	if (lkc_token_new(token, err) != LKC_OK) {
		lkc_flock_close_woken(ofd);
		free(name);
		return err->code;
	}
	/* The temporary name starts with '.', which no lock file name does. */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", token);
	fd = openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t) s->mode);
	if (fd < 0) {
		lkc_flock_file_error(s, "create", tmp, errno, err);
		lkc_flock_close_woken(ofd);
		free(name);
		return err->code;
	}
	fchmod(fd, (mode_t) s->mode);
	memset(&hdr, 0, sizeof(hdr));
	if (gen > 0) {
		/* A broken holder may still be granted the old file once more, before it sees the flag. */
		hdr.magic = LKC_FLOCK_MAGIC;
		hdr.gen = gen > INT64_MAX - LKC_FLOCK_FENCE_MARGIN ? INT64_MAX : gen + LKC_FLOCK_FENCE_MARGIN;
	}
	if (ftruncate(fd, LKC_FLOCK_FILE_SIZE) != 0
		|| pwrite(fd, &hdr, sizeof(hdr), LKC_FLOCK_HDR_OFF) != (ssize_t) sizeof(hdr)) {
		lkc_flock_file_error(s, "write", tmp, errno, err);
		close(fd);
		unlinkat(s->dirfd, tmp, 0);
		lkc_flock_close_woken(ofd);
		free(name);
		return err->code;
	}
	close(fd);
	if (renameat(s->dirfd, tmp, s->dirfd, name) != 0) {
		lkc_flock_file_error(s, "replace", name, errno, err);
		unlinkat(s->dirfd, tmp, 0);
		lkc_flock_close_woken(ofd);
		free(name);
		return err->code;
	}
	/* The waiters of the old file wake, see it dead and move to the new one. */
	lkc_flock_close_woken(ofd);
	free(name);
	return LKC_OK;
}

/* Closes the descriptor, leaving any lock on it in place: it may be the parent's. */
static void lkc_flock_abandon(lkc_store *store, lkc_hold *hold)
{
	(void) store;
	if (hold->fd >= 0) {
		/* No LOCK_UN: the lock belongs to the open file description, which the parent still uses. */
		lkc_flock_close(hold->fd);
		hold->fd = -1;
	}
}

/* Retires the cached files (removing the idle ones), closes the directory and the inotify instance and frees the store. */
static void lkc_flock_destroy(lkc_store *store)
{
	lkc_flock_store *s = (lkc_flock_store *) store;

	while (s->lru_last >= 0) {
		lkc_flock_retire(s, s->lru_last);
	}
	/* Slots of descriptors the lock layer closed while held: the numbers are not ours to close. */
	for (int fd = 0; fd < lkc_flock_files_cap; fd++) {
		if (lkc_flock_slot(fd)->store == s) {
			lkc_flock_forget(fd);
		}
	}
	close(s->dirfd);
	if (s->inotify_fd >= 0 && s->inotify_pid == lkc_pid()) {
		close(s->inotify_fd);
	}
	free(s->watches);
	free(s->buckets);
	free(s->dir);
	free(s);
}

lkc_rc lkc_flock_set_cache(lkc_store *store, long cache, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;

	if (store->ops != &lkc_flock_ops) {
		return lkc_err_set(err, LKC_ERR_INVALID, "flock: not a flock store");
	}
	if (cache < 0 || cache > LKC_FLOCK_CACHE_MAX) {
		return lkc_err_set(err, LKC_ERR_INVALID, "flock: cache must be between 0 and %d, %ld given", LKC_FLOCK_CACHE_MAX, cache);
	}
	s->cache_max = (unsigned) cache;
	while (s->idle > s->cache_max) {
		lkc_flock_retire(s, s->lru_last);
	}
	if (s->idle == 0 && s->nbuckets > 0) {
		/* Sized again for the new bound on the next release. */
		free(s->buckets);
		s->buckets = NULL;
		s->nbuckets = 0;
	}
	return LKC_OK;
}

static const lkc_store_ops lkc_flock_ops = {
	.name = "flock",
	.caps = LKC_CAP_SHARED | LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND,
	.fence = lkc_flock_fence,
	.acquire = lkc_flock_acquire,
	.release = lkc_flock_release,
	.refresh = lkc_flock_refresh,
	.check = lkc_flock_check,
	.is_locked = lkc_flock_is_locked,
	.inspect = lkc_flock_inspect,
	.wait_free = lkc_flock_wait_free,
	.force_release = lkc_flock_force_release,
	.abandon = lkc_flock_abandon,
	.destroy = lkc_flock_destroy,
	.stats = &lkc_stats_of[LKC_KIND_FLOCK],
};
