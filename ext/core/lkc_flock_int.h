/*
 * What the pieces of the flock store share; internal to ext/core.
 *
 *   lkc_flock.c       the store: how it works (the comment at its top),
 *                     opening it, its operations table, taking, converting,
 *                     releasing and breaking holds, fencing tokens
 *   lkc_flock_file.c  the lock files: their names, opening and mapping them,
 *                     the process's table of them (and what a forked child
 *                     does with it), the store's cache of idle ones
 *   lkc_flock_wait.c  waiting: the marks, the inotify watches, the queue in
 *                     the shared header, the wait loop, and waitUntilFree()
 */
#ifndef LKC_FLOCK_INT_H
#define LKC_FLOCK_INT_H

#include "lkc.h"

#include <stdint.h>
#include <sys/types.h>

/* How many bytes of the resource show in a lock file name, for people listing the directory. */
#define LKC_FLOCK_READABLE_MAX 48

/* The longest lock file name, with its NUL: readable part, '.', SHA-256 in hex, ".lock". */
#define LKC_FLOCK_NAME_MAX (LKC_FLOCK_READABLE_MAX + 1 + 64 + sizeof(".lock"))

/* The bytes of the lock file that carry marks: OFD read locks, which conflict with no flock() hold. */
#define LKC_FLOCK_WAITER_BYTE 0  /* waiters asleep on inotify (waitUntilFree()), for whom a release touches the file */
#define LKC_FLOCK_WRITER_BYTE 1  /* waiting writers, before whom new readers hold back */
#define LKC_FLOCK_SLEEPER_BYTE 2 /* waiters asleep on the header's futex word, whom a release wakes there */
/* The bytes that say somebody waits, in any way: the marks above and the queue's (see below). */
#define LKC_FLOCK_MARKS_LEN (LKC_FLOCK_QUEUE_BYTE + LKC_FLOCK_QUEUE_SLOTS)

/* Idle lock files a store keeps open unless its cache option says otherwise. */
#define LKC_FLOCK_CACHE_DEFAULT 64
#define LKC_FLOCK_CACHE_MAX 65536

/* A lock file's size: the page its header lives in, so that every process can map it. */
#define LKC_FLOCK_FILE_SIZE 4096
/* Where the header starts: after the decimal counter that earlier versions kept at byte 0. */
#define LKC_FLOCK_HDR_OFF 64
#define LKC_FLOCK_MAGIC 0x316b636cu /* "lck1" */

/*
 * Waiters queue in arrival order in the header's slots, each also marking byte
 * LKC_FLOCK_QUEUE_BYTE + its slot with an OFD read lock, which the kernel drops
 * when a killed waiter's file closes: a woken waiter lets older ones go first.
 */
#define LKC_FLOCK_QUEUE_SLOTS 32
#define LKC_FLOCK_QUEUE_BYTE 16

/*
 * A waiter sleeps on the header's futex word, which every release changes; it
 * also looks again this often, for what changes nothing there: a holder killed
 * (the kernel frees its lock without a word), a release by an older version.
 */
#define LKC_FLOCK_SLICE_MS 20

typedef struct {
	uint64_t since_ns;  /* when its waiter began to wait (CLOCK_MONOTONIC is machine-wide), 0 when free */
	uint32_t writer;    /* it waits for an exclusive hold */
	uint32_t reserved;
} lkc_flock_queue_slot;

/* What every process that has a lock file open shares through its mapping. */
typedef struct {
	uint32_t magic;     /* LKC_FLOCK_MAGIC once the first exclusive holder set gen up */
	uint32_t dead;      /* removed or replaced: a hold on this inode holds nothing */
	int32_t waiters;    /* waiters that marked themselves; a killed one leaves it too high (costs a look) */
	uint32_t releases;  /* releases so far (wraps): with gen, tells a queued waiter that the lock moves */
	int64_t gen;        /* exclusive grants so far: the last fencing token handed out */
	lkc_flock_queue_slot queue[LKC_FLOCK_QUEUE_SLOTS];
	uint32_t wake;      /* the futex word waiters sleep on: every wake-up changes it (wraps) */
	uint32_t reserved;
} lkc_flock_hdr;

typedef struct lkc_flock_store {
	lkc_store base;
	int dirfd;          /* the lock directory, O_DIRECTORY */
	char *dir;          /* the directory as given, for messages */
	int mode;           /* permissions of new lock files */
	int emulated;       /* the directory is on a network file system: no marks, waits poll */
	int inotify_fd;     /* one instance for every wait of this store, -1 until needed */
	pid_t inotify_pid;  /* the process that created inotify_fd */
	int *watches;       /* watch descriptor and wait count pairs: nested waits on one inode share a watch */
	int nwatches;       /* pairs in use */
	int cap_watches;    /* pairs allocated */
	unsigned cache_max; /* idle lock files kept open at most */
	unsigned idle;      /* idle lock files kept open now */
	int lru_first;      /* the most recently released idle file's descriptor, -1 when none */
	int lru_last;       /* the least recently released one, the next to go */
	int *buckets;       /* idle files by name hash: the first descriptor of each chain, -1 when none */
	unsigned nbuckets;  /* a power of two, 0 until the first file is kept */
} lkc_flock_store;

/* What one locking step came to; lkc_flock_wait's result. */
typedef enum {
	LKC_FLOCK_GOT,      /* the lock is taken on the file that is at the path */
	LKC_FLOCK_BUSY,     /* somebody else holds it, after the allowed wait */
	LKC_FLOCK_STALE,    /* the file was removed or replaced: open the one at the path */
	LKC_FLOCK_INTR,     /* the host ended the wait */
	LKC_FLOCK_FAIL      /* a system call failed; err is filled */
} lkc_flock_step;

/* Whether a shared attempt of lkc_flock_wait first looks for a waiting writer's mark. */
typedef enum {
	LKC_FLOCK_TAKE,       /* never (exclusive, or the mark does not matter) */
	LKC_FLOCK_YIELD,      /* before every attempt */
	LKC_FLOCK_YIELD_LATER /* from the second attempt on (see the top of lkc_flock.c) */
} lkc_flock_yield;

/*
 * The lock files this process has open, by descriptor: held, waited for, or
 * idle in a store's cache. A child forked while a lock file is open shares its
 * open file description, and with it any flock() hold on it: the hold would
 * outlive its holder for as long as the child lives. So the child lets go of
 * every one of them right after the fork, without unlocking, as the description
 * is its parent's too. A slot whose descriptor the lock layer closed (a hold
 * disposed of while held) stays until the number is reused or the store goes;
 * its inode keeps the child from touching whatever reused the number.
 */
typedef struct {
	lkc_flock_store *store; /* NULL: the slot is free */
	lkc_flock_hdr *hdr;     /* the mapped header */
	dev_t dev;
	ino_t ino;
	uint32_t hash;          /* of name */
	int idle;               /* in the store's cache */
	int prev, next;         /* the cache's order of release, -1 at the ends */
	int hnext;              /* the cache's hash chain, -1 at its end */
	char name[LKC_FLOCK_NAME_MAX];
} lkc_flock_file;

/* The table of lkc_flock_file by descriptor, and its size (lkc_flock_file.c). */
extern lkc_flock_file *lkc_flock_files;
extern int lkc_flock_files_cap;

/* The slot of descriptor fd, which must be one of ours. */
static inline lkc_flock_file *lkc_flock_slot(int fd)
{
	return &lkc_flock_files[fd];
}

/* Whether the lock file fd was removed or replaced (by force_release, or by a retire); a descriptor we no longer know is. */
static inline int lkc_flock_dead(int fd)
{
	if (fd < 0 || fd >= lkc_flock_files_cap || lkc_flock_slot(fd)->store == NULL) {
		return 1;
	}
	return (int) __atomic_load_n(&lkc_flock_slot(fd)->hdr->dead, __ATOMIC_ACQUIRE);
}

/* lkc_flock_file.c */
/* Lets a forked child go of every lock file it inherits (pthread_atfork, once per process). */
void lkc_flock_fork_init(void);
/* Frees fd's slot (the descriptor stays open). */
void lkc_flock_forget(int fd);
/* Closes fd, one of our lock files, without unlocking. */
void lkc_flock_close(int fd);
/* Unlocks and closes fd. */
void lkc_flock_unlock_close(int fd);
/* The result code of a failed system call: LKC_ERR_PERM for a refusal, else LKC_ERR_SYSTEM. */
lkc_rc lkc_flock_rc(int errnum);
/* Fills err for a failed operation on the file name in the store's directory. */
lkc_rc lkc_flock_file_error(const lkc_flock_store *s, const char *what, const char *name, int errnum, lkc_err *err);
/* Opens (creating it) the lock file name, sizes, maps and records it; the descriptor, or -1. */
int lkc_flock_open_file(lkc_flock_store *s, const char *name, lkc_err *err);
/* An idle descriptor of the lock file name from the cache, or -1. */
int lkc_flock_cache_take(lkc_flock_store *s, const char *name);
/* Lets go of the idle lock file fd for good, removing it when nobody holds it or waits for it. */
void lkc_flock_retire(lkc_flock_store *s, int fd);
/* Puts the lock file fd, which we no longer lock, into the store's cache. */
void lkc_flock_put(lkc_flock_store *s, int fd);
/* Whether anybody holds the lock file name in any mode: 1, 0 (also when missing), -1 with err filled. */
int lkc_flock_probe(const lkc_flock_store *s, const char *name, lkc_err *err);
/* Our hold on name is gone: LKC_LOST if somebody holds the file now, else LKC_EXPIRED. */
lkc_rc lkc_flock_gone(const lkc_flock_store *s, const char *name);
/* Unlocks and closes hold's descriptor. */
void lkc_flock_drop(lkc_hold *hold);

/* lkc_flock_wait.c */
/* Whether another open file description marks any of the len bytes from start of fd's inode; 0 also when we cannot tell. */
int lkc_flock_marked(int fd, off_t start, off_t len);
/*
 * Who holds the inode of fd by /proc/locks, taking nothing: 2 a writer, 1 readers, 0 nobody, -1 the table cannot be
 * read; with seen, the holders' pids too.
 */
int lkc_flock_held_proc(int fd, lkc_inspect *seen);
/* Store::inspect() of the flock store. */
lkc_rc lkc_flock_inspect(lkc_store *store, const char *resource, size_t len, lkc_inspect *out, lkc_err *err);
/* Wakes whoever waits for fd's inode (the futex word, and an inotify event for waitUntilFree()); whether somebody did. */
int lkc_flock_wake(const lkc_flock_store *s, const char *name, int fd);
/* Changes the futex word of hdr and wakes every waiter asleep on it. */
void lkc_flock_wake_sleepers(lkc_flock_hdr *hdr);
/* Takes op on fd, waiting as wait_ms allows (deadline_ns is its end), woken through the header's futex word. */
lkc_flock_step lkc_flock_wait(lkc_flock_store *s, const char *name, int fd,
	int op, lkc_flock_yield yield, int queue, int64_t wait_ms, uint64_t deadline_ns, lkc_err *err);
/* Waits longer than LKC_FLOCK_WAIT_MAX count as waits without bound. */
int64_t lkc_flock_clamp_wait(int64_t wait_ms);
/* Waits until nobody holds the resource's lock file and nobody queues for it, taking nothing. */
lkc_rc lkc_flock_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err);

#endif
