/*
 * The flock store's lock files (see lkc_flock_int.h): a resource's file name,
 * opening a file and mapping its shared header, the table of the lock files
 * this process has open (and what a forked child does with them), the store's
 * cache of idle files and the removal of those it lets go, and a look at
 * whether anybody holds a file.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_flock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

lkc_flock_file *lkc_flock_files;
int lkc_flock_files_cap;

/* A hash of a lock file name: its last 16 hex digits of SHA-256 are already uniform, so mixing them is enough. */
static uint32_t lkc_flock_hash(const char *name)
{
	size_t len = strlen(name);
	uint64_t v = 0;

	if (len >= 8 + sizeof(".lock") - 1) {
		memcpy(&v, name + len - (sizeof(".lock") - 1) - 8, 8);
	}
	return (uint32_t) ((v * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static void lkc_flock_unmap(lkc_flock_hdr *hdr)
{
	if (hdr != NULL) {
		munmap((char *) hdr - LKC_FLOCK_HDR_OFF, LKC_FLOCK_FILE_SIZE);
	}
}

/* Takes the idle file fd out of its store's cache. */
static void lkc_flock_cache_unlink(int fd)
{
	lkc_flock_file *f = lkc_flock_slot(fd);
	lkc_flock_store *s = f->store;
	int *link = &s->buckets[f->hash & (s->nbuckets - 1)];

	while (*link != fd) {
		link = &lkc_flock_slot(*link)->hnext;
	}
	*link = f->hnext;
	if (f->prev >= 0) {
		lkc_flock_slot(f->prev)->next = f->next;
	} else {
		s->lru_first = f->next;
	}
	if (f->next >= 0) {
		lkc_flock_slot(f->next)->prev = f->prev;
	} else {
		s->lru_last = f->prev;
	}
	f->idle = 0;
	f->prev = f->next = f->hnext = -1;
	s->idle--;
}

/* Frees fd's slot (the descriptor stays open). */
void lkc_flock_forget(int fd)
{
	lkc_flock_file *f;

	if (fd < 0 || fd >= lkc_flock_files_cap || lkc_flock_slot(fd)->store == NULL) {
		return;
	}
	f = lkc_flock_slot(fd);
	if (f->idle) {
		lkc_flock_cache_unlink(fd);
	}
	lkc_flock_unmap(f->hdr);
	memset(f, 0, sizeof(*f));
}

/* Closes fd, one of our lock files, without unlocking: a lock on it ends if nobody else shares its description. */
void lkc_flock_close(int fd)
{
	lkc_flock_forget(fd);
	close(fd);
}

/* Unlocks and closes fd. */
void lkc_flock_unlock_close(int fd)
{
	/*
	 * Unlock before closing: a descriptor that another process shares (one that
	 * forked without our fork handler) keeps the lock alive past our close().
	 */
	flock(fd, LOCK_UN);
	lkc_flock_close(fd);
}

/* In a forked child: lets go of every lock file inherited, pointing held ones at /dev/null. */
static void lkc_flock_after_fork_child(void)
{
	int null = -1;

	for (int fd = 0; fd < lkc_flock_files_cap; fd++) {
		lkc_flock_file *f = lkc_flock_slot(fd);
		struct stat st;
		dev_t dev;
		ino_t ino;

		if (f->store == NULL) {
			continue;
		}
		if (f->idle) {
			lkc_flock_close(fd);
			continue;
		}
		dev = f->dev;
		ino = f->ino;
		/*
		 * A shared mapping keeps the open file description, and with it the lock,
		 * alive as a descriptor does: it goes too. Anonymous memory takes its place
		 * rather than a hole, as a wait that a signal handler forked from goes on in
		 * the child with the header at hand (its descriptor no longer ours, it then
		 * reopens).
		 */
		mmap((char *) f->hdr - LKC_FLOCK_HDR_OFF, LKC_FLOCK_FILE_SIZE, PROT_READ | PROT_WRITE,
			MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(f, 0, sizeof(*f));
		if (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
			/* The slot was stale: the number is somebody else's now. */
			continue;
		}
		if (null < 0) {
			null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		}
		/*
		 * A hold of the parent keeps the number (now /dev/null) until the child
		 * abandons it: closing it here would let another file reuse the number
		 * under the hold's feet.
		 */
		if (null < 0 || dup3(null, fd, O_CLOEXEC) < 0) {
			close(fd);
		}
	}
	if (null >= 0) {
		close(null);
	}
}

void lkc_flock_fork_init(void)
{
	pthread_atfork(NULL, NULL, lkc_flock_after_fork_child);
}

lkc_rc lkc_flock_rc(int errnum)
{
	switch (errnum) {
		case EACCES:
		case EPERM:
		case EROFS:
		case ELOOP:
			return LKC_ERR_PERM;
		default:
			return LKC_ERR_SYSTEM;
	}
}

/* Fills err for a failed operation on the file name in the store's directory. */
lkc_rc lkc_flock_file_error(const lkc_flock_store *s, const char *what, const char *name, int errnum, lkc_err *err)
{
	if (errnum == ELOOP) {
		return lkc_err_set(err, LKC_ERR_PERM,
			"flock: lock file %s/%s is a symbolic link; refusing to follow it", s->dir, name);
	}
	return lkc_err_errno(err, lkc_flock_rc(errnum), errnum, "flock: cannot %s lock file %s/%s", what, s->dir, name);
}

/* The lock file name of a resource: only [A-Za-z0-9._-], never starting with '.', unique by its SHA-256. */
char *lkc_flock_file_name(const char *resource, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[32];
	size_t readable = len < LKC_FLOCK_READABLE_MAX ? len : LKC_FLOCK_READABLE_MAX;
	char *name = malloc(readable + 1 + 2 * sizeof(digest) + sizeof(".lock"));
	char *p = name;

	if (name == NULL) {
		return NULL;
	}
	/* Only these bytes survive, so no name can hold a '/', a NUL or a control character. */
	for (size_t i = 0; i < readable; i++) {
		unsigned char c = (unsigned char) resource[i];
		int keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
			|| c == '.' || c == '_' || c == '-';
		/* A leading '.' would make "." or ".." or a hidden file; the temporary files of force_release start with '.'. */
		*p++ = keep && !(i == 0 && c == '.') ? (char) c : '-';
	}
	if (readable > 0) {
		*p++ = '.';
	}
	/* The digest makes the name unique: the readable part alone is lossy. */
	lkc_sha256(resource, len, digest);
	for (size_t i = 0; i < sizeof(digest); i++) {
		*p++ = hex[digest[i] >> 4];
		*p++ = hex[digest[i] & 15];
	}
	memcpy(p, ".lock", sizeof(".lock"));
	return name;
}

/*
 * Gives a lock file we just created the store's mode exactly, whatever the
 * umask took away: a group asked for with 0660 must be able to open it
 * read-write. Only our own files that carry nothing yet (no fencing counter)
 * are touched, so another store's choice on a used file stands.
 */
static void lkc_flock_fix_mode(const lkc_flock_store *s, int fd, struct stat *st)
{
	if (st->st_size == 0 && st->st_uid == geteuid() && (st->st_mode & 07777) != (mode_t) s->mode
		&& fchmod(fd, (mode_t) s->mode) == 0) {
		st->st_mode = (st->st_mode & ~(mode_t) 07777) | (mode_t) s->mode;
	}
}

static int lkc_flock_open_existing(const lkc_flock_store *s, const char *name, int *missing, lkc_err *err)
{
	struct stat st;
	int fd;

	*missing = 0;
	/* O_NONBLOCK: a FIFO planted at the name must not hang us; flock ignores it. */
	do {
		fd = openat(s->dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno == ENOENT) {
			*missing = 1;
		} else {
			lkc_flock_file_error(s, "open", name, errno, err);
		}
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		lkc_err_set(err, LKC_ERR_SYSTEM, "flock: lock file %s/%s is not a regular file", s->dir, name);
		return -1;
	}
	return fd;
}

/*
 * Opens (creating it when missing) the lock file name, sizes and maps it and
 * records it; the descriptor, or -1 with err filled.
 */
int lkc_flock_open_file(lkc_flock_store *s, const char *name, lkc_err *err)
{
	struct stat st;
	lkc_flock_file *f;
	void *map;
	int fd;

	/* Read-write, so that the file can carry the header its users share. */
	do {
		fd = openat(s->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, (mode_t) s->mode);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		lkc_flock_file_error(s, "open", name, errno, err);
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		lkc_err_set(err, LKC_ERR_SYSTEM, "flock: lock file %s/%s is not a regular file", s->dir, name);
		return -1;
	}
	lkc_flock_fix_mode(s, fd, &st);
	/* Every user grows the file before mapping it, and nobody shrinks it: no access past its end. */
	if (st.st_size < LKC_FLOCK_FILE_SIZE && ftruncate(fd, LKC_FLOCK_FILE_SIZE) != 0) {
		lkc_flock_file_error(s, "size", name, errno, err);
		close(fd);
		return -1;
	}
	map = mmap(NULL, LKC_FLOCK_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		lkc_flock_file_error(s, "map", name, errno, err);
		close(fd);
		return -1;
	}
	if (fd >= lkc_flock_files_cap) {
		int cap = fd < 32 ? 64 : fd * 2;
		lkc_flock_file *files = realloc(lkc_flock_files, (size_t) cap * sizeof(*files));

		if (files == NULL) {
			munmap(map, LKC_FLOCK_FILE_SIZE);
			close(fd);
			lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
			return -1;
		}
		memset(files + lkc_flock_files_cap, 0, (size_t) (cap - lkc_flock_files_cap) * sizeof(*files));
		lkc_flock_files = files;
		lkc_flock_files_cap = cap;
	}
	/* A stale slot (its descriptor closed by the lock layer) gives way. */
	lkc_flock_forget(fd);
	f = lkc_flock_slot(fd);
	f->store = s;
	f->hdr = (lkc_flock_hdr *) ((char *) map + LKC_FLOCK_HDR_OFF);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->hash = lkc_flock_hash(name);
	f->prev = f->next = f->hnext = -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	return fd;
}

/* An idle descriptor of the lock file name from the cache, or -1. */
int lkc_flock_cache_take(lkc_flock_store *s, const char *name)
{
	int fd;

	if (s->idle == 0) {
		return -1;
	}
	for (fd = s->buckets[lkc_flock_hash(name) & (s->nbuckets - 1)]; fd >= 0; fd = lkc_flock_slot(fd)->hnext) {
		if (strcmp(lkc_flock_slot(fd)->name, name) == 0) {
			lkc_flock_cache_unlink(fd);
			return fd;
		}
	}
	return -1;
}

/*
 * Lets go of the idle lock file fd for good, removing it when nobody holds it or
 * waits for it. The removal is safe for everyone who has it open: we hold it
 * exclusively, mark it dead in the shared header (whoever locks it next sees
 * that and opens the file at the path instead), and only then unlink it. A
 * waiter that marks itself after our look fails its next attempt while we hold
 * the file, and is woken to see the flag. The counter goes with the file: the next
 * file starts from the clock (see lkc_flock_grant).
 */
void lkc_flock_retire(lkc_flock_store *s, int fd)
{
	lkc_flock_file *f = lkc_flock_slot(fd);
	lkc_flock_hdr *hdr = f->hdr;
	struct stat at;

	if (f->idle) {
		lkc_flock_cache_unlink(fd);
	}
	if (s->emulated || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		/* Somebody uses it (or a network file system, whose holds we cannot see): its last user removes it. */
		lkc_flock_close(fd);
		return;
	}
	if (__atomic_load_n(&hdr->dead, __ATOMIC_ACQUIRE) || lkc_flock_marked(fd, 0, LKC_FLOCK_MARKS_LEN)
		|| fstatat(s->dirfd, f->name, &at, AT_SYMLINK_NOFOLLOW) != 0 || at.st_dev != f->dev || at.st_ino != f->ino) {
		/* Gone already, replaced, or waited for. */
		lkc_flock_unlock_close(fd);
		return;
	}
	__atomic_store_n(&hdr->dead, 1, __ATOMIC_RELEASE);
	unlinkat(s->dirfd, f->name, 0);
	/* A waiter that counted itself after our look sees the flag at its next attempt. */
	if (__atomic_load_n(&hdr->waiters, __ATOMIC_SEQ_CST) > 0) {
		lkc_flock_wake_sleepers(hdr);
	}
	lkc_flock_unlock_close(fd);
}

/* Puts the lock file fd, which we no longer lock, into the store's cache, retiring the oldest file when it is full. */
void lkc_flock_put(lkc_flock_store *s, int fd)
{
	lkc_flock_file *f = lkc_flock_slot(fd);
	int *bucket;

	if (__atomic_load_n(&f->hdr->dead, __ATOMIC_ACQUIRE)) {
		lkc_flock_close(fd);
		return;
	}
	if (s->cache_max == 0) {
		lkc_flock_retire(s, fd);
		return;
	}
	if (s->nbuckets == 0) {
		unsigned n = 16;

		while (n < 2 * s->cache_max && n < 2 * LKC_FLOCK_CACHE_MAX) {
			n *= 2;
		}
		s->buckets = malloc(n * sizeof(*s->buckets));
		if (s->buckets == NULL) {
			lkc_flock_retire(s, fd);
			return;
		}
		memset(s->buckets, 0xff, n * sizeof(*s->buckets));
		s->nbuckets = n;
	}
	bucket = &s->buckets[f->hash & (s->nbuckets - 1)];
	f->hnext = *bucket;
	*bucket = fd;
	f->prev = -1;
	f->next = s->lru_first;
	if (s->lru_first >= 0) {
		lkc_flock_slot(s->lru_first)->prev = fd;
	} else {
		s->lru_last = fd;
	}
	s->lru_first = fd;
	f->idle = 1;
	s->idle++;
	while (s->idle > s->cache_max) {
		lkc_flock_retire(s, s->lru_last);
	}
}

/* Whether anybody holds the lock file name in any mode: 1, 0 (also when missing), -1 with err filled. */
int lkc_flock_probe(const lkc_flock_store *s, const char *name, lkc_err *err)
{
	/* A dead file is about to leave the path (or just left it): look again at what is there then. */
	for (int attempt = 0;; attempt++) {
		lkc_flock_hdr hdr;
		int missing;
		int fd = lkc_flock_open_existing(s, name, &missing, err);
		int rc;
		ssize_t n;

		if (fd < 0) {
			return missing ? 0 : -1;
		}
		/*
		 * A fresh descriptor is an open file description of its own, so it conflicts with
		 * every holder, this process's included. Succeeding holds the lock for an instant,
		 * in which a one-shot acquire elsewhere may find it busy: flock has no way to look
		 * without taking.
		 */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
			rc = 0;
		} else if (errno == EWOULDBLOCK) {
			rc = 1;
		} else {
			lkc_flock_file_error(s, "lock", name, errno, err);
			close(fd);
			return -1;
		}
		memset(&hdr, 0, sizeof(hdr));
		do {
			n = pread(fd, &hdr, sizeof(hdr), LKC_FLOCK_HDR_OFF);
		} while (n < 0 && errno == EINTR);
		close(fd);
		if (n != (ssize_t) sizeof(hdr) || !hdr.dead || attempt >= 100) {
			return rc;
		}
		sched_yield();
	}
}

/*
 * What the lock file of the resource says, creating nothing: the mode its holders
 * hold in and their pids (/proc/locks, which takes nothing; where it cannot tell, or
 * on a network file system, an attempt given back at once, as isLocked() makes,
 * and no pids), the last
 * fencing token (the header's count of exclusive grants) and the waiters queued
 * in the header whose mark stands (the queue's slots: at most
 * LKC_FLOCK_QUEUE_SLOTS). Owner tokens stay in their processes.
 */
lkc_rc lkc_flock_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	char *name = lkc_flock_file_name(resource, len);
	lkc_flock_hdr hdr;
	int missing, fd, held;
	ssize_t n;

	out->mode = LKC_SEEN_FREE;
	out->ttl_ms = LKC_TTL_NONE;
	out->waiters = 0;
	out->holders_known = 1;
	if (name == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	fd = lkc_flock_open_existing(s, name, &missing, err);
	if (fd < 0) {
		free(name);
		return missing ? LKC_OK : err->code;
	}
	held = s->emulated ? -1 : lkc_flock_held_proc(fd, out);
	if (held < 0) {
		/* The kernel's table could not tell: the holders are unknown, the mode is probed. */
		free(out->holders);
		out->holders = NULL;
		out->nholders = 0;
		out->holders_known = 0;
		held = 0;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
		} else if (errno != EWOULDBLOCK) {
			lkc_flock_file_error(s, "lock", name, errno, err);
			close(fd);
			free(name);
			return err->code;
		} else if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
			held = 1;
		} else {
			held = 2;
		}
	}
	free(name);
	out->mode = held == 2 ? LKC_SEEN_WRITE : held == 1 ? LKC_SEEN_READ : LKC_SEEN_FREE;
	memset(&hdr, 0, sizeof(hdr));
	do {
		n = pread(fd, &hdr, sizeof(hdr), LKC_FLOCK_HDR_OFF);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t) sizeof(hdr) && hdr.magic == LKC_FLOCK_MAGIC && hdr.gen > 0) {
		out->fence = hdr.gen;
	}
	if (n == (ssize_t) sizeof(hdr) && !s->emulated) {
		for (int i = 0; i < LKC_FLOCK_QUEUE_SLOTS; i++) {
			out->waiters += hdr.queue[i].since_ns != 0 && lkc_flock_marked(fd, LKC_FLOCK_QUEUE_BYTE + i, 1);
		}
	}
	close(fd);
	return LKC_OK;
}

/* Our hold on name is gone: LKC_LOST if somebody holds the file now, else LKC_EXPIRED. */
lkc_rc lkc_flock_gone(const lkc_flock_store *s, const char *name)
{
	lkc_err ignored;

	/* The hold is gone either way; a failing probe only loses the detail of who has it. */
	if (name != NULL && lkc_flock_probe(s, name, &ignored) == 1) {
		return LKC_LOST;
	}
	return LKC_EXPIRED;
}

/* Unlocks and closes hold's descriptor (a broken hold's file, or one a failed conversion lost). */
void lkc_flock_drop(lkc_hold *hold)
{
	lkc_flock_unlock_close(hold->fd);
	hold->fd = -1;
}
