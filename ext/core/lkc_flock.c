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
 * Waiters sleep on inotify and mark themselves with an OFD read lock on byte 0
 * (independent of flock locks on local file systems), so that a releaser posts
 * an event only when somebody waits.
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
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

/* How many bytes of the resource show in a lock file name, for people listing the directory. */
#define LKC_FLOCK_READABLE_MAX 48

/* The longest lock file name, with its NUL: readable part, '.', SHA-256 in hex, ".lock". */
#define LKC_FLOCK_NAME_MAX (LKC_FLOCK_READABLE_MAX + 1 + 64 + sizeof(".lock"))

/* Waits longer than this (about 34 years) are waits without bound, so deadlines never overflow. */
#define LKC_FLOCK_WAIT_MAX (INT64_C(1) << 40)

/* The bytes of the lock file that carry marks: OFD read locks, which conflict with no flock() hold. */
#define LKC_FLOCK_WAITER_BYTE 0 /* every waiter, so that a release knows whether to wake anybody */
#define LKC_FLOCK_WRITER_BYTE 1 /* waiting writers, before whom new readers hold back */

/* Idle lock files a store keeps open unless its cache option says otherwise. */
#define LKC_FLOCK_CACHE_DEFAULT 64
#define LKC_FLOCK_CACHE_MAX 65536

/* A lock file's size: the page its header lives in, so that every process can map it. */
#define LKC_FLOCK_FILE_SIZE 4096
/* Where the header starts: after the decimal counter that earlier versions kept at byte 0. */
#define LKC_FLOCK_HDR_OFF 64
#define LKC_FLOCK_MAGIC 0x316b636cu /* "lck1" */
/* How far a replaced file's counter jumps ahead, past tokens a broken holder may still take from the old file. */
#define LKC_FLOCK_FENCE_MARGIN 1024

/*
 * Waiters queue in arrival order in the header's slots, each also marking byte
 * LKC_FLOCK_QUEUE_BYTE + its slot with an OFD read lock, which the kernel drops
 * when a killed waiter's file closes: a woken waiter lets older ones go first.
 */
#define LKC_FLOCK_QUEUE_SLOTS 32
#define LKC_FLOCK_QUEUE_BYTE 16
/* How long after the lock last moved a waiter lets older waiters go first: a stopped one then holds nobody back for long. */
#define LKC_FLOCK_DEFER_MAX_NS (UINT64_C(100) * 1000000u)
/* A slot this old is looked at: one whose waiter died (its mark gone) is freed. */
#define LKC_FLOCK_SLOT_CHECK_NS (UINT64_C(10) * 1000000u)

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

static const lkc_store_ops lkc_flock_ops;

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

static lkc_flock_file *lkc_flock_files;
static int lkc_flock_files_cap;
static pthread_once_t lkc_flock_fork_once = PTHREAD_ONCE_INIT;

/* The slot of descriptor fd, which must be one of ours. */
static inline lkc_flock_file *lkc_flock_slot(int fd)
{
	return &lkc_flock_files[fd];
}

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
static void lkc_flock_forget(int fd)
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
static void lkc_flock_close(int fd)
{
	lkc_flock_forget(fd);
	close(fd);
}

/* Unlocks and closes fd. */
static void lkc_flock_unlock_close(int fd)
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

static void lkc_flock_fork_init(void)
{
	pthread_atfork(NULL, NULL, lkc_flock_after_fork_child);
}

static lkc_rc lkc_flock_rc(int errnum)
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
static lkc_rc lkc_flock_file_error(const lkc_flock_store *s, const char *what, const char *name, int errnum, lkc_err *err)
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
	*out = &s->base;
	return LKC_OK;
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

/* Whether anybody holds the lock file name in any mode: 1, 0 (also when missing), -1 with err filled. */

/* The store's inotify instance (created on first use), or -1 when the system has none to give. */
static int lkc_flock_inotify(lkc_flock_store *s)
{
	pid_t pid = lkc_pid();

	if (s->inotify_fd >= 0 && s->inotify_pid != pid) {
		/* A forked child shares its parent's instance and would steal the parent's events. */
		close(s->inotify_fd);
		s->inotify_fd = -1;
		s->nwatches = 0;
	}
	if (s->inotify_fd < 0) {
		s->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		s->inotify_pid = pid;
	}
	return s->inotify_fd;
}

/* Reads every queued event; returns whether there was one. */
static int lkc_flock_drain(int ino)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int any = 0;

	for (;;) {
		ssize_t n = read(ino, buf, sizeof(buf));
		if (n > 0) {
			any = 1;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			return any;
		}
	}
}

/* Watches the inode open as fd for the events that can mean its lock was dropped; the watch descriptor or -1. */
static int lkc_flock_watch(int ino, int fd)
{
	char path[64];

	/*
	 * Through /proc/self/fd the watch lands on exactly the inode our flock() competes
	 * on, even if the name was replaced meanwhile. The magic link must be followed
	 * (so no IN_DONT_FOLLOW); it cannot lead elsewhere, as fd was opened O_NOFOLLOW.
	 * A release posts IN_ATTRIB for the waiters it sees (lkc_flock_wake), the kernel
	 * posts IN_CLOSE_* when it closes a killed holder's files, and force_release
	 * posts IN_ATTRIB (the link count) and the *_SELF events.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return inotify_add_watch(ino, path,
		IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
}

/* Sets (F_RDLCK) or clears (F_UNLCK) the marks on the len bytes from start of fd; whether the call succeeded. */
static int lkc_flock_mark(int fd, short type, off_t start, off_t len)
{
	struct flock fl;

	/* OFD commands want l_pid zero. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

/* Whether another open file description marks byte of fd's inode; 0 also when we cannot tell. */
static int lkc_flock_marked(int fd, off_t byte)
{
	struct flock fl;

	/* A write lock conflicts with every mark of another open file description, this process's included. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = byte;
	fl.l_len = 1;
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/*
 * Marks fd's open file description as waiting for its inode, and as a waiting
 * writer too with writer set (one call: the two bytes are adjacent); whether it did.
 */
static int lkc_flock_mark_waiting(const lkc_flock_store *s, int fd, int writer)
{
	/*
	 * NFS, SMB and the like emulate flock() with byte-range locks on the server, where
	 * the marks would conflict with the holds themselves: waiters there poll instead.
	 */
	if (s->emulated) {
		return 0;
	}
	return lkc_flock_mark(fd, F_RDLCK, LKC_FLOCK_WAITER_BYTE, writer ? 2 : 1);
}

/*
 * Posts an inotify event on fd's inode when somebody waits for it, and says
 * whether it did (or could not tell); the caller has just unlocked (or downgraded) fd. A waiter marks, then arms its watch, then tries
 * flock(); we unlock, then look for marks. flock and OFD locks of an inode sit under
 * one lock in the kernel, so either the waiter's try came after our unlock and found
 * the lock free, or its mark came before our look and we post an event, which its
 * already armed watch catches. The unlock and this look do not depend on a close(),
 * so a forked child that keeps the descriptor open changes nothing.
 */
static int lkc_flock_wake(const lkc_flock_store *s, const char *name, int fd)
{
	struct flock fl;
	int nudge;

	/* As lkc_flock_marked, except that a look that fails wakes: a lost wake-up costs more than a spurious one. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = LKC_FLOCK_WAITER_BYTE;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_UNLCK) {
		return 0;
	}
	/*
	 * Touching the times posts IN_ATTRIB on exactly this inode in one system call;
	 * where we may not (another owner, odd permissions), opening and closing the file
	 * posts IN_CLOSE_NOWRITE.
	 */
	if (futimens(fd, NULL) != 0) {
		nudge = openat(s->dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (nudge >= 0) {
			close(nudge);
		}
	}
	return 1;
}


/*
 * Opens (creating it when missing) the lock file name, sizes and maps it and
 * records it; the descriptor, or -1 with err filled.
 */
static int lkc_flock_open_file(lkc_flock_store *s, const char *name, lkc_err *err)
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
static int lkc_flock_cache_take(lkc_flock_store *s, const char *name)
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
 * the file and wakes when we close it. The counter goes with the file: the next
 * file starts from the clock (see lkc_flock_grant).
 */
static void lkc_flock_retire(lkc_flock_store *s, int fd)
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
	if (__atomic_load_n(&hdr->dead, __ATOMIC_ACQUIRE) || lkc_flock_marked(fd, LKC_FLOCK_WAITER_BYTE)
		|| fstatat(s->dirfd, f->name, &at, AT_SYMLINK_NOFOLLOW) != 0 || at.st_dev != f->dev || at.st_ino != f->ino) {
		/* Gone already, replaced, or waited for. */
		lkc_flock_unlock_close(fd);
		return;
	}
	__atomic_store_n(&hdr->dead, 1, __ATOMIC_RELEASE);
	unlinkat(s->dirfd, f->name, 0);
	lkc_flock_unlock_close(fd);
}

/* Puts the lock file fd, which we no longer lock, into the store's cache, retiring the oldest file when it is full. */
static void lkc_flock_put(lkc_flock_store *s, int fd)
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

/* Whether the lock file fd was removed or replaced (by force_release, or by a retire); a descriptor we no longer know is. */
static inline int lkc_flock_dead(int fd)
{
	if (fd < 0 || fd >= lkc_flock_files_cap || lkc_flock_slot(fd)->store == NULL) {
		return 1;
	}
	return (int) __atomic_load_n(&lkc_flock_slot(fd)->hdr->dead, __ATOMIC_ACQUIRE);
}

/* Whether anybody holds the lock file name in any mode: 1, 0 (also when missing), -1 with err filled. */
static int lkc_flock_probe(const lkc_flock_store *s, const char *name, lkc_err *err)
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

/* Our hold on name is gone: LKC_LOST if somebody holds the file now, else LKC_EXPIRED. */
static lkc_rc lkc_flock_gone(const lkc_flock_store *s, const char *name)
{
	lkc_err ignored;

	/* The hold is gone either way; a failing probe only loses the detail of who has it. */
	if (name != NULL && lkc_flock_probe(s, name, &ignored) == 1) {
		return LKC_LOST;
	}
	return LKC_EXPIRED;
}

/* Unlocks and closes hold's descriptor (a broken hold's file, or one a failed conversion lost). */
static void lkc_flock_drop(lkc_hold *hold)
{
	lkc_flock_unlock_close(hold->fd);
	hold->fd = -1;
}
/* Takes a queue slot for a waiter that began at since; the slot, or -1 when all are taken (it then queues nowhere). */
static int lkc_flock_queue_join(lkc_flock_hdr *hdr, int fd, uint64_t since, int writer)
{
	for (int i = 0; i < LKC_FLOCK_QUEUE_SLOTS; i++) {
		uint64_t expected = 0;

		if (__atomic_compare_exchange_n(&hdr->queue[i].since_ns, &expected, since, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			__atomic_store_n(&hdr->queue[i].writer, (uint32_t) writer, __ATOMIC_RELEASE);
			lkc_flock_mark(fd, F_RDLCK, LKC_FLOCK_QUEUE_BYTE + i, 1);
			return i;
		}
	}
	return -1;
}

static void lkc_flock_queue_leave(lkc_flock_hdr *hdr, int fd, int slot)
{
	lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_QUEUE_BYTE + slot, 1);
	__atomic_store_n(&hdr->queue[slot].since_ns, 0, __ATOMIC_RELEASE);
}

/* Whether an older waiter (for a reader: an older writer) still queues, so that we let it go first. */
static int lkc_flock_queue_behind(lkc_flock_hdr *hdr, int fd, int mine, uint64_t since, int writer, uint64_t now)
{
	for (int i = 0; i < LKC_FLOCK_QUEUE_SLOTS; i++) {
		uint64_t t = __atomic_load_n(&hdr->queue[i].since_ns, __ATOMIC_ACQUIRE);

		if (i == mine || t == 0 || t >= since || (!writer && !__atomic_load_n(&hdr->queue[i].writer, __ATOMIC_ACQUIRE))) {
			continue;
		}
		if (now - t > LKC_FLOCK_SLOT_CHECK_NS && !lkc_flock_marked(fd, LKC_FLOCK_QUEUE_BYTE + i)) {
			/* Its waiter died without leaving: free the slot for the living. */
			__atomic_compare_exchange_n(&hdr->queue[i].since_ns, &t, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
			continue;
		}
		return 1;
	}
	return 0;
}

/* Whether a shared attempt of lkc_flock_wait first looks for a waiting writer's mark. */
typedef enum {
	LKC_FLOCK_TAKE,       /* never (exclusive, or the mark does not matter) */
	LKC_FLOCK_YIELD,      /* before every attempt */
	LKC_FLOCK_YIELD_LATER /* from the second attempt on (see the top of this file) */
} lkc_flock_yield;

/* Milliseconds a wait may still last: -1 without bound, else 0 to INT_MAX. */
static int lkc_flock_left(int64_t wait_ms, uint64_t deadline_ns)
{
	int64_t left;

	if (wait_ms < 0) {
		return -1;
	}
	if (wait_ms == 0) {
		return 0;
	}
	left = lkc_ms_left(deadline_ns);
	return left > INT_MAX ? INT_MAX : (int) left;
}


/*
 * Counts one more wait on the watch wd of the store's instance: inotify gives
 * every watch of one inode the same descriptor, so a wait nested in another on
 * the same inode (a signal handler's) shares the outer wait's watch, and only
 * the last of them may remove it. Whether it could count (else the wait polls).
 */
static int lkc_flock_watch_ref(lkc_flock_store *s, int wd)
{
	for (int i = 0; i < s->nwatches; i++) {
		if (s->watches[2 * i] == wd) {
			s->watches[2 * i + 1]++;
			return 1;
		}
	}
	if (s->nwatches == s->cap_watches) {
		int cap = s->cap_watches ? s->cap_watches * 2 : 4;
		int *w = realloc(s->watches, (size_t) cap * 2 * sizeof(*w));

		if (w == NULL) {
			return 0;
		}
		s->watches = w;
		s->cap_watches = cap;
	}
	s->watches[2 * s->nwatches] = wd;
	s->watches[2 * s->nwatches + 1] = 1;
	s->nwatches++;
	return 1;
}

/*
 * Starts watching the lock file fd for a wait, its stale events drained: the
 * counted watch descriptor (*ino the store's instance), or -1 when the wait
 * must poll (no instance, no watch, or none that could be counted).
 */
static int lkc_flock_watch_begin(lkc_flock_store *s, int fd, int *ino)
{
	int wd;

	*ino = lkc_flock_inotify(s);
	wd = *ino >= 0 ? lkc_flock_watch(*ino, fd) : -1;
	if (wd >= 0 && !lkc_flock_watch_ref(s, wd)) {
		/* Not counted: a nested wait could not tell that the watch is shared. */
		inotify_rm_watch(*ino, wd);
		wd = -1;
	}
	if (wd >= 0) {
		lkc_flock_drain(*ino);
	}
	return wd;
}

/* Ends one wait on the watch wd; the last one removes the watch. */
static void lkc_flock_watch_unref(lkc_flock_store *s, int ino, int wd)
{
	for (int i = 0; i < s->nwatches; i++) {
		if (s->watches[2 * i] != wd) {
			continue;
		}
		if (--s->watches[2 * i + 1] > 0) {
			return;
		}
		s->nwatches--;
		s->watches[2 * i] = s->watches[2 * s->nwatches];
		s->watches[2 * i + 1] = s->watches[2 * s->nwatches + 1];
		break;
	}
	inotify_rm_watch(ino, wd);
}

/*
 * One non-blocking attempt at op on fd; with yield, a waiting writer makes it
 * busy without an attempt. A file that was removed or replaced is stale, held
 * or not: a holder of a dead file blocks nobody who matters, and a lock on it
 * excludes nobody. The shared header says so without a system call; a file
 * removed or moved by hand, bypassing the store, is not noticed.
 */
static lkc_flock_step lkc_flock_try(const lkc_flock_store *s, const char *name, int fd, int op, int yield, lkc_err *err)
{
	int r;

	/*
	 * Looking before taking, rather than taking and then letting go, never holds the
	 * lock for an instant in which a woken writer fails and goes back to sleep. A
	 * writer that marks itself just after our look may see us take the lock once:
	 * our next hold looks again.
	 */
	if (yield && lkc_flock_marked(fd, LKC_FLOCK_WRITER_BYTE)) {
		r = -1;
	} else {
		while ((r = flock(fd, op | LOCK_NB)) != 0 && errno == EINTR) {
			continue;
		}
		if (r != 0 && errno != EWOULDBLOCK) {
			lkc_flock_file_error(s, "lock", name, errno, err);
			return LKC_FLOCK_FAIL;
		}
	}
	if (lkc_flock_dead(fd)) {
		return LKC_FLOCK_STALE;
	}
	return r == 0 ? LKC_FLOCK_GOT : LKC_FLOCK_BUSY;
}

/*
 * Takes op on fd, waiting as wait_ms allows (deadline_ns is its end), woken by the
 * kernel through inotify rather than by polling the lock. With yield
 * (a new shared hold, never an exclusive one), waiting writers go first. With
 * queue, older waiters go first (see lkc_flock_queue_behind). An
 * exclusive wait marks itself as a waiting writer for as long as it lasts.
 */
static lkc_flock_step lkc_flock_wait(lkc_flock_store *s, const char *name, int fd,
	int op, lkc_flock_yield yield, int queue, int64_t wait_ms, uint64_t deadline_ns, lkc_err *err)
{
	lkc_flock_hdr *hdr = lkc_flock_slot(fd)->hdr;
	lkc_flock_step step;
	int writer = op == LOCK_EX;
	int counted = 0;
	int ino = -1, wd = -1, marked = 0, writer_marked = 0, fallback = 0;
	int settle_ms = 0, slice_ms = 1;
	/*
	 * New holds are served in arrival order (one attempt passes nobody; network file
	 * systems have no marks). A conversion does not queue: it holds what older
	 * waiters may wait for.
	 */
	int fair = queue && !s->emulated && wait_ms != 0;
	uint64_t since = fair ? lkc_now_ns() : 0;
	uint64_t moved_ns = since;
	uint32_t releases = __atomic_load_n(&hdr->releases, __ATOMIC_ACQUIRE);
	int64_t gen = __atomic_load_n(&hdr->gen, __ATOMIC_ACQUIRE);
	int slot = -1;

	/* Network file systems have no marks to look for (and a look would see the emulated flock holds). */
	if (s->emulated) {
		yield = LKC_FLOCK_TAKE;
	}
	for (;;) {
		struct pollfd pfd;
		int timeout, n, defer = 0;

		if (fair) {
			uint64_t now = lkc_now_ns();
			uint32_t r = __atomic_load_n(&hdr->releases, __ATOMIC_ACQUIRE);
			int64_t g = __atomic_load_n(&hdr->gen, __ATOMIC_ACQUIRE);

			if (r != releases || g != gen) {
				releases = r;
				gen = g;
				moved_ns = now;
			}
			defer = now - moved_ns < LKC_FLOCK_DEFER_MAX_NS && lkc_flock_queue_behind(hdr, fd, slot, since, writer, now);
		}
		step = defer ? LKC_FLOCK_BUSY : lkc_flock_try(s, name, fd, op, yield == LKC_FLOCK_YIELD, err);
		if (yield == LKC_FLOCK_YIELD_LATER) {
			yield = LKC_FLOCK_YIELD;
		}
		if (step != LKC_FLOCK_BUSY) {
			break;
		}
		timeout = lkc_flock_left(wait_ms, deadline_ns);
		if (timeout == 0) {
			break;
		}
		if (wd < 0 && !fallback) {
			/*
			 * Mark, watch, then try again: the order lkc_flock_wake relies on. A reader
			 * held back by a writer's mark is woken in the same way: its look at the
			 * writer's mark comes after its own mark, and the writer drops its mark
			 * before it looks for waiters (see the end of this function).
			 */
			if (!s->emulated) {
				/* Counted before the mark: a releaser that sees no count looked before our mark (see lkc_flock_release). */
				__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
				counted = 1;
			}
			if (fair) {
				slot = lkc_flock_queue_join(hdr, fd, since, writer);
			}
			marked = lkc_flock_mark_waiting(s, fd, writer);
			writer_marked = marked && writer;
			wd = marked ? lkc_flock_watch_begin(s, fd, &ino) : -1;
			if (wd >= 0) {
				continue;
			}
			if (marked) {
				/* Releasers need not wake a waiter that polls; a writer's mark stays, to hold readers back. */
				lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WAITER_BYTE, 1);
				marked = 0;
			}
			fallback = 1;
		}
		if (defer && (timeout < 0 || timeout > 10)) {
			/* The older waiter we let go first may give up without a word: look again soon. */
			timeout = 10;
		}
		if (fallback) {
			/*
			 * Without inotify or the mark (instances or watches exhausted, no /proc, a
			 * network file system) nothing tells us of a release short of blocking in
			 * flock() with no way to time out, so we look again after short sleeps
			 * that grow to 50 ms.
			 */
			if (timeout < 0 || timeout > slice_ms) {
				timeout = slice_ms;
			}
			slice_ms = slice_ms >= 25 ? 50 : slice_ms * 2;
		} else if (settle_ms > 0) {
			/*
			 * The kernel posts IN_CLOSE of a dying file just before it drops that file's
			 * flock (__fput calls fsnotify_close before locks_remove_file), so an attempt
			 * right after the event can still fail: look again a few times, briefly.
			 */
			if (timeout < 0 || timeout > settle_ms) {
				timeout = settle_ms;
			}
			settle_ms = settle_ms >= 32 ? 0 : settle_ms * 2;
		}
		pfd.fd = fallback ? -1 : ino;
		pfd.events = POLLIN;
		pfd.revents = 0;
		n = poll(&pfd, 1, timeout);
		if (n < 0) {
			if (errno != EINTR) {
				lkc_err_errno(err, LKC_ERR_SYSTEM, errno, "flock: cannot wait for lock file %s/%s", s->dir, name);
				step = LKC_FLOCK_FAIL;
				break;
			}
			if (lkc_interrupted()) {
				step = LKC_FLOCK_INTR;
				break;
			}
		} else if (n > 0 && lkc_flock_drain(ino)) {
			settle_ms = 1;
		}
	}
	if (wd >= 0) {
		/* The watch ends with the last wait on it; leftover events are drained by the next wait. */
		lkc_flock_watch_unref(s, ino, wd);
	}
	if (counted) {
		__atomic_sub_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	}
	if (slot >= 0) {
		lkc_flock_queue_leave(hdr, fd, slot);
	}
	if (marked || writer_marked) {
		/* However the wait ended, we wait no more: releasers can stop posting events for us. */
		lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WAITER_BYTE, writer_marked ? 2 : 1);
	}
	if ((writer_marked || slot >= 0) && step != LKC_FLOCK_GOT) {
		/*
		 * Readers that held back for us, and waiters that queued behind us, may find
		 * the lock free now, and nothing else would wake them. A waiter that got the
		 * lock wakes them with its release: readers that looked before our mark went
		 * find our flock() hold instead.
		 */
		lkc_flock_wake(s, name, fd);
	}
	return step;
}


/* Waits longer than LKC_FLOCK_WAIT_MAX count as waits without bound. */
static int64_t lkc_flock_clamp_wait(int64_t wait_ms)
{
	return wait_ms < 0 || wait_ms > LKC_FLOCK_WAIT_MAX ? LKC_WAIT_FOREVER : wait_ms;
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

/*
 * Whether a flock() hold exists on the inode of fd, looked up in /proc/locks
 * without taking anything: 1, 0, or -1 when the table cannot be read. Waiters
 * blocked in flock() ("->" lines) hold nothing; our waiters never block there.
 * The table is read in one read(): the kernel writes it under its lock within one
 * call, while across calls (stdio's 4 kB reads) a hold taken or given up
 * meanwhile shifts the lines, and one could be skipped.
 */
static int lkc_flock_held_proc(int fd)
{
	char want[64];
	struct stat st;
	size_t cap = 65536;
	char *buf = NULL;
	ssize_t n = -1;
	int held = 0;

	if (fstat(fd, &st) != 0) {
		return -1;
	}
	for (;;) {
		int locks = open("/proc/locks", O_RDONLY | O_CLOEXEC);
		char *grown = locks >= 0 ? realloc(buf, cap + 1) : NULL;

		if (grown == NULL) {
			if (locks >= 0) {
				close(locks);
			}
			free(buf);
			return -1;
		}
		buf = grown;
		do {
			n = read(locks, buf, cap);
		} while (n < 0 && errno == EINTR);
		close(locks);
		if (n < 0 || (size_t) n < cap || cap >= ((size_t) 64 << 20)) {
			break;
		}
		/* It filled the buffer: a bigger one, read again from the start. */
		cap *= 4;
	}
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	snprintf(want, sizeof(want), " %02x:%02x:%lu ", major(st.st_dev), minor(st.st_dev), (unsigned long) st.st_ino);
	for (char *line = buf; !held && line != NULL && *line != '\0';) {
		char *end = strchr(line, '\n');

		if (end != NULL) {
			*end = '\0';
		}
		held = strstr(line, " FLOCK ") != NULL && strstr(line, "->") == NULL && strstr(line, want) != NULL;
		line = end != NULL ? end + 1 : NULL;
	}
	free(buf);
	return held;
}

/* Whether a waiter that is still alive (its mark stands) queues in the header of fd. */
static int lkc_flock_queued(int fd)
{
	lkc_flock_hdr *hdr = lkc_flock_slot(fd)->hdr;

	for (int i = 0; i < LKC_FLOCK_QUEUE_SLOTS; i++) {
		if (__atomic_load_n(&hdr->queue[i].since_ns, __ATOMIC_ACQUIRE) != 0 && lkc_flock_marked(fd, LKC_FLOCK_QUEUE_BYTE + i)) {
			return 1;
		}
	}
	return 0;
}

/*
 * Whether the lock file fd is free for a waitUntilFree(): nobody holds it and no
 * waiter queues for it. 1, 0, -1 with err filled. Where /proc/locks cannot tell
 * (or on a network file system, whose holds it does not show), one attempt that
 * is given back at once: it holds the lock for an instant, so it wakes whoever
 * marked itself meanwhile.
 */
static int lkc_flock_free_now(const lkc_flock_store *s, const char *name, int fd, lkc_err *err)
{
	int held = s->emulated ? -1 : lkc_flock_held_proc(fd);

	if (held < 0) {
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno != EWOULDBLOCK && errno != EINTR) {
				lkc_flock_file_error(s, "lock", name, errno, err);
				return -1;
			}
			return 0;
		}
		flock(fd, LOCK_UN);
		lkc_flock_wake(s, name, fd);
		held = 0;
	}
	return !held && (s->emulated || !lkc_flock_queued(fd));
}

/*
 * Waits until nobody holds the resource's lock file and nobody queues for it,
 * taking nothing: marked as a waiter (so that releases post an inotify event),
 * not queued (so it passes nobody and delays nobody), watching the inode.
 */
static lkc_rc lkc_flock_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	char *name = lkc_flock_file_name(resource, len);
	uint64_t deadline;
	lkc_rc rc = LKC_OK;

	if (name == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	wait_ms = lkc_flock_clamp_wait(wait_ms);
	deadline = wait_ms > 0 ? lkc_now_ns() + (uint64_t) wait_ms * 1000000u : 0;
	for (;;) {
		struct stat st;
		lkc_flock_hdr *hdr;
		int fd, ino = -1, wd = -1, marked, stale = 0, slice_ms = 1;

		/* No file: nobody ever held it, or it was removed while idle. */
		if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
			break;
		}
		fd = lkc_flock_cache_take(s, name);
		if (fd < 0 && (fd = lkc_flock_open_file(s, name, err)) < 0) {
			rc = err->code;
			break;
		}
		hdr = lkc_flock_slot(fd)->hdr;
		/* Counted, marked, watched, then looked at: the order lkc_flock_let_go and lkc_flock_wake rely on. */
		__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
		marked = lkc_flock_mark_waiting(s, fd, 0);
		wd = marked ? lkc_flock_watch_begin(s, fd, &ino) : -1;
		for (;;) {
			struct pollfd pfd;
			int timeout, n, free_now;

			if (lkc_flock_dead(fd)) {
				/* Removed or replaced: look at what is at the path now. */
				stale = 1;
				break;
			}
			free_now = lkc_flock_free_now(s, name, fd, err);
			if (free_now != 0) {
				rc = free_now > 0 ? LKC_OK : err->code;
				break;
			}
			timeout = lkc_flock_left(wait_ms, deadline);
			if (timeout == 0) {
				rc = lkc_err_set(err, LKC_BUSY, "flock: lock file %s/%s is still held", s->dir, name);
				break;
			}
			if (wd < 0 || lkc_flock_queued(fd)) {
				/* Without a watch, or while a queued waiter takes its turn (which posts nothing): look again soon. */
				if (timeout < 0 || timeout > slice_ms) {
					timeout = slice_ms;
				}
				slice_ms = slice_ms >= 25 ? 50 : slice_ms * 2;
			}
			pfd.fd = wd >= 0 ? ino : -1;
			pfd.events = POLLIN;
			pfd.revents = 0;
			n = poll(&pfd, 1, timeout);
			if (n < 0 && errno != EINTR) {
				rc = lkc_err_errno(err, LKC_ERR_SYSTEM, errno, "flock: cannot wait for lock file %s/%s", s->dir, name);
				break;
			}
			if (n < 0 && lkc_interrupted()) {
				rc = lkc_err_set(err, LKC_INTERRUPTED, "flock: the wait for lock file %s/%s was interrupted", s->dir, name);
				break;
			}
			if (n > 0) {
				lkc_flock_drain(ino);
			}
		}
		if (wd >= 0) {
			lkc_flock_watch_unref(s, ino, wd);
		}
		__atomic_sub_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
		if (marked) {
			lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WAITER_BYTE, 1);
		}
		lkc_flock_put(s, fd);
		if (!stale) {
			break;
		}
	}
	free(name);
	return rc;
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

/*
 * Breaks every holder of the resource: marks the file dead in its header, then
 * puts a fresh file at its name, atomically, carrying the counter ahead. Holders
 * keep their lock on the old inode, which their check() and release() see dead;
 * waiters get IN_ATTRIB on it (the link count) and move over.
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
	if (ofd >= 0) {
		close(ofd);
	}
	if (lkc_token_new(token, err) != LKC_OK) {
		free(name);
		return err->code;
	}
	/* The temporary name starts with '.', which no lock file name does. */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", token);
	fd = openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t) s->mode);
	if (fd < 0) {
		lkc_flock_file_error(s, "create", tmp, errno, err);
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
		free(name);
		return err->code;
	}
	close(fd);
	if (renameat(s->dirfd, tmp, s->dirfd, name) != 0) {
		lkc_flock_file_error(s, "replace", name, errno, err);
		unlinkat(s->dirfd, tmp, 0);
		free(name);
		return err->code;
	}
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
	.wait_free = lkc_flock_wait_free,
	.force_release = lkc_flock_force_release,
	.abandon = lkc_flock_abandon,
	.destroy = lkc_flock_destroy,
};
