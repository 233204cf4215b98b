/*
 * The flock store: one lock file per resource in one directory, held with
 * flock(2). The kernel drops a hold when the last descriptor of its open file
 * description closes, so a killed process never leaves a lock behind.
 *
 * A hold keeps its lock file open between holds, so that an uncontended
 * exclusive acquire is flock() + fstat() and a release is flock() + one fcntl()
 * that looks for waiters. Waiters sleep on inotify and mark themselves with an
 * OFD read lock on byte 0 (independent of flock locks on local file systems), so
 * that a releaser posts an event only when somebody waits.
 *
 * Writers are preferred: a writer that has to wait also marks byte 1, and a new
 * reader that finds such a mark holds back and waits as well, so a stream of
 * overlapping readers cannot starve a writer. That costs a shared acquire one
 * fcntl() more, except right after a release of the same hold that found
 * nobody waiting: the reader then takes the lock without looking, so a writer
 * that began to wait since sees each reader take at most one more hold (its
 * release finds the writer's mark, and its next acquire looks). As on the semaphore store, a process that holds a shared hold and
 * asks for another one while a writer waits waits on itself, until its timeout;
 * and a steady stream of writers can keep readers waiting. On network file
 * systems nobody marks anything (see lkc_flock_mark_waiting), and there readers
 * and writers are served in no particular order.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

/* How many bytes of the resource show in a lock file name, for people listing the directory. */
#define LKC_FLOCK_READABLE_MAX 48

/* Waits longer than this (about 34 years) are waits without bound, so deadlines never overflow. */
#define LKC_FLOCK_WAIT_MAX (INT64_C(1) << 40)

/* The bytes of the lock file that carry marks: OFD read locks, which conflict with no flock() hold. */
#define LKC_FLOCK_WAITER_BYTE 0 /* every waiter, so that a release knows whether to wake anybody */
#define LKC_FLOCK_WRITER_BYTE 1 /* waiting writers, before whom new readers hold back */

typedef struct {
	lkc_store base;
	int dirfd;          /* the lock directory, O_DIRECTORY */
	char *dir;          /* the directory as given, for messages */
	int mode;           /* permissions of new lock files */
	int emulated;       /* the directory is on a network file system: no marks, waits poll */
	int inotify_fd;     /* one instance for every wait of this store, -1 until needed */
	pid_t inotify_pid;  /* the process that created inotify_fd */
} lkc_flock_store;

/* What one locking step came to; lkc_flock_wait's result. */
typedef enum {
	LKC_FLOCK_GOT,      /* the lock is taken on the file that is at the path */
	LKC_FLOCK_BUSY,     /* somebody else holds it, after the allowed wait */
	LKC_FLOCK_STALE,    /* the file was replaced (force_release): open the new one */
	LKC_FLOCK_INTR,     /* the host ended the wait */
	LKC_FLOCK_FAIL      /* a system call failed; err is filled */
} lkc_flock_step;

static const lkc_store_ops lkc_flock_ops;

/*
 * The lock files this process keeps open for its holds, by descriptor, with the
 * inode each was opened on. A child forked while a lock file is open shares its
 * open file description, and with it any flock() hold on it: the hold would
 * outlive its holder for as long as the child lives. So the child lets go of
 * every one of them right after the fork, without unlocking, as the description
 * is its parent's too. An entry whose descriptor was closed elsewhere (a hold
 * disposed of by the lock layer) is left behind; the inode check keeps the child
 * from touching whatever reused the number.
 */
typedef struct {
	dev_t dev;
	ino_t ino;
	int used;
} lkc_flock_open_file;

static lkc_flock_open_file *lkc_flock_files;
static int lkc_flock_files_cap;
static pthread_once_t lkc_flock_fork_once = PTHREAD_ONCE_INIT;

/* In a forked child: points every inherited lock file descriptor at /dev/null, which closes the shared description. */
static void lkc_flock_after_fork_child(void)
{
	int null = -1;

	for (int fd = 0; fd < lkc_flock_files_cap; fd++) {
		lkc_flock_open_file *f = &lkc_flock_files[fd];
		struct stat st;

		if (!f->used) {
			continue;
		}
		f->used = 0;
		if (fstat(fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino) {
			continue;
		}
		if (null < 0) {
			null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		}
		/*
		 * The number stays taken (by /dev/null) until the inherited hold is abandoned
		 * and closes it: closing it here would let another file reuse the number
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

/* Records that fd, open on the inode st, is kept for a hold. */
static void lkc_flock_track(int fd, const struct stat *st)
{
	if (fd >= lkc_flock_files_cap) {
		int cap = fd < 32 ? 64 : fd * 2;
		lkc_flock_open_file *files = realloc(lkc_flock_files, (size_t) cap * sizeof(*files));

		if (files == NULL) {
			/* Untracked, a forked child keeps the hold alive as it did before this registry. */
			return;
		}
		memset(files + lkc_flock_files_cap, 0, (size_t) (cap - lkc_flock_files_cap) * sizeof(*files));
		lkc_flock_files = files;
		lkc_flock_files_cap = cap;
	}
	lkc_flock_files[fd].dev = st->st_dev;
	lkc_flock_files[fd].ino = st->st_ino;
	lkc_flock_files[fd].used = 1;
}

/* Forgets fd before it is closed. */
static void lkc_flock_untrack(int fd)
{
	if (fd >= 0 && fd < lkc_flock_files_cap) {
		lkc_flock_files[fd].used = 0;
	}
}


/* Maps an errno of a file operation to a result code (never LKC_ERR_INVALID: these are runtime failures). */
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
	*out = &s->base;
	return LKC_OK;
}

/* Whether the file at name is the inode st describes: 1 yes, 0 no (replaced or gone), -1 error with err filled. */
static int lkc_flock_at_path(const lkc_flock_store *s, const char *name, const struct stat *st, lkc_err *err)
{
	struct stat now;

	if (fstatat(s->dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT) {
			return 0;
		}
		lkc_flock_file_error(s, "inspect", name, errno, err);
		return -1;
	}
	return now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

/* Whether hold's descriptor is still the file at its path: 1, 0, or -1 with err filled. */
static int lkc_flock_still_ours(const lkc_flock_store *s, const lkc_hold *hold, lkc_err *err)
{
	struct stat st;

	if (fstat(hold->fd, &st) != 0) {
		lkc_flock_file_error(s, "inspect", hold->path, errno, err);
		return -1;
	}
	/* force_release and rm leave the old inode without a name: no need to look at the path. */
	if (st.st_nlink == 0) {
		return 0;
	}
	return lkc_flock_at_path(s, hold->path, &st, err);
}

/* Opens the lock file name without creating it; -1 with *missing set when there is none, -1 with err filled on failure. */
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
static int lkc_flock_probe(const lkc_flock_store *s, const char *name, lkc_err *err)
{
	int missing;
	int fd = lkc_flock_open_existing(s, name, &missing, err);
	int rc;

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
		rc = -1;
	}
	close(fd);
	return rc;
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

/* Unlocks and closes fd. */
static void lkc_flock_unlock_close(int fd)
{
	/*
	 * Unlock before closing: a descriptor inherited by a forked child keeps the open
	 * file description, and with it the lock, alive past our close().
	 */
	flock(fd, LOCK_UN);
	lkc_flock_untrack(fd);
	close(fd);
}

/* Unlocks and closes hold's descriptor. */
static void lkc_flock_drop(lkc_hold *hold)
{
	lkc_flock_unlock_close(hold->fd);
	hold->fd = -1;
}

/* The store's inotify instance (created on first use), or -1 when the system has none to give. */
static int lkc_flock_inotify(lkc_flock_store *s)
{
	pid_t pid = lkc_pid();

	if (s->inotify_fd >= 0 && s->inotify_pid != pid) {
		/* A forked child shares its parent's instance and would steal the parent's events. */
		close(s->inotify_fd);
		s->inotify_fd = -1;
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
 * One non-blocking attempt at op on fd; with yield, a waiting writer makes it busy
 * without an attempt. With *known set, st describes fd, and the file must still be
 * at the path. Without, st is filled here, and a successful attempt only checks
 * that the inode still has a name: force_release (a rename over it) and rm both
 * leave it with none, and one fstat() is cheaper than a path lookup. Moving the
 * file away by hand is not caught there.
 */
static lkc_flock_step lkc_flock_try(const lkc_flock_store *s, const char *name, int fd,
	struct stat *st, int *known, int op, int yield, lkc_err *err)
{
	int at, r;

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
	if (!*known) {
		if (fstat(fd, st) != 0) {
			lkc_flock_file_error(s, "inspect", name, errno, err);
			return LKC_FLOCK_FAIL;
		}
		*known = 1;
		if (st->st_nlink == 0) {
			return LKC_FLOCK_STALE;
		}
		if (r == 0) {
			return LKC_FLOCK_GOT;
		}
	}
	/*
	 * A holder of a replaced file blocks only that file, and force_release may have
	 * replaced the file between our open() and our flock(): look at the path.
	 */
	at = lkc_flock_at_path(s, name, st, err);
	if (at < 0) {
		return LKC_FLOCK_FAIL;
	}
	if (!at) {
		return LKC_FLOCK_STALE;
	}
	return r == 0 ? LKC_FLOCK_GOT : LKC_FLOCK_BUSY;
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
 * Takes op on fd, waiting as wait_ms allows (deadline_ns is its end), woken by the
 * kernel through inotify rather than by polling the lock. fresh is fd's inode when
 * fd was just opened, NULL for a descriptor kept from an earlier hold. With yield
 * (a new shared hold, never an exclusive one), waiting writers go first. An
 * exclusive wait marks itself as a waiting writer for as long as it lasts.
 */
static lkc_flock_step lkc_flock_wait(lkc_flock_store *s, const char *name, int fd, const struct stat *fresh,
	int op, lkc_flock_yield yield, int64_t wait_ms, uint64_t deadline_ns, lkc_err *err)
{
	struct stat st;
	lkc_flock_step step;
	int known = fresh != NULL;
	int writer = op == LOCK_EX;
	int ino = -1, wd = -1, marked = 0, writer_marked = 0, fallback = 0;
	int settle_ms = 0, slice_ms = 1;

	/* Network file systems have no marks to look for (and a look would see the emulated flock holds). */
	if (s->emulated) {
		yield = LKC_FLOCK_TAKE;
	}

	if (fresh != NULL) {
		st = *fresh;
	}
	for (;;) {
		struct pollfd pfd;
		int timeout, n;

		step = lkc_flock_try(s, name, fd, &st, &known, op, yield == LKC_FLOCK_YIELD, err);
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
			marked = lkc_flock_mark_waiting(s, fd, writer);
			writer_marked = marked && writer;
			ino = marked ? lkc_flock_inotify(s) : -1;
			wd = ino >= 0 ? lkc_flock_watch(ino, fd) : -1;
			if (wd >= 0) {
				lkc_flock_drain(ino);
				continue;
			}
			if (marked) {
				/* Releasers need not wake a waiter that polls; a writer's mark stays, to hold readers back. */
				lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WAITER_BYTE, 1);
				marked = 0;
			}
			fallback = 1;
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
		/* One process waits for one lock at a time: the watch ends with the wait, and its leftover events are drained by the next. */
		inotify_rm_watch(ino, wd);
	}
	if (marked || writer_marked) {
		/* However the wait ended, we wait no more: releasers can stop posting events for us. */
		lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WAITER_BYTE, writer_marked ? 2 : 1);
	}
	if (writer_marked && step != LKC_FLOCK_GOT) {
		/*
		 * Readers that held back for us may find the lock free now, and nothing else
		 * would wake them. A writer that got the lock wakes them with its release:
		 * readers that looked before our mark went find our flock() hold instead.
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

/*
 * Changes the mode of a hold we have: LKC_OK, LKC_BUSY, LKC_INTERRUPTED, an error,
 * or LKC_EXPIRED when the hold turned out to be gone (the caller then acquires anew).
 */
static lkc_rc lkc_flock_convert(lkc_flock_store *s, lkc_hold *hold, lkc_mode mode,
	int64_t wait_ms, uint64_t deadline_ns, lkc_err *err)
{
	int ours = lkc_flock_still_ours(s, hold, err);
	int old_op = hold->mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX;
	lkc_flock_step step;

	if (ours < 0) {
		return err->code;
	}
	if (!ours) {
		lkc_flock_drop(hold);
		return LKC_EXPIRED;
	}
	if (mode == hold->mode) {
		return LKC_OK;
	}
	/*
	 * flock() converts by dropping the old lock and then taking the new one, and it
	 * is not atomic: a promotion holds nothing while it waits (which is also why two
	 * promoting readers cannot deadlock). When it fails we take the old mode back;
	 * if even that fails the hold is gone, and check() and release() will say so.
	 * A waiting promotion marks itself as a waiting writer like any other; a
	 * demotion does not yield to waiting writers, as it holds the lock they wait for.
	 */
	step = lkc_flock_wait(s, hold->path, hold->fd, NULL, mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX, LKC_FLOCK_TAKE,
		wait_ms, deadline_ns, err);
	switch (step) {
		case LKC_FLOCK_GOT:
			if (mode == LKC_MODE_SHARED) {
				/* A writer turned reader lets the waiting readers in. */
				lkc_flock_wake(s, hold->path, hold->fd);
			}
			return LKC_OK;
		case LKC_FLOCK_STALE:
			lkc_flock_drop(hold);
			return LKC_EXPIRED;
		default:
			if (flock(hold->fd, old_op | LOCK_NB) != 0) {
				lkc_flock_drop(hold);
			}
			return step == LKC_FLOCK_BUSY ? LKC_BUSY : step == LKC_FLOCK_INTR ? LKC_INTERRUPTED : err->code;
	}
}

/*
 * Takes or converts the hold, waiting as wait_ms allows; on failure the hold keeps
 * what it had, if anything. The lock file stays open after the hold ends, for the
 * next acquire of the same hold.
 */
static lkc_rc lkc_flock_acquire(lkc_store *store, lkc_hold *hold, lkc_mode mode,
	int64_t ttl_ms, int64_t wait_ms, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	int op = mode == LKC_MODE_SHARED ? LOCK_SH : LOCK_EX;
	uint64_t deadline_ns;
	/* What the last release through the kept descriptor saw holds for this acquire alone. */
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
	if (hold->path == NULL) {
		hold->path = lkc_flock_file_name(hold->resource, hold->resource_len);
		if (hold->path == NULL) {
			return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
		}
	}
	if (hold->fd >= 0 && hold->forks != lkc_fork_count()) {
		/*
		 * A child forked since the last hold shares this open file description, and a
		 * lock taken through it would outlive us for as long as the child lives: open
		 * one of our own. hold->forks is at most the count when the descriptor was
		 * opened (the lock layer sets it on every acquire), so equal means no fork
		 * since. The descriptor locks nothing, so a plain close.
		 */
		lkc_flock_untrack(hold->fd);
		close(hold->fd);
		hold->fd = -1;
	}
	if (hold->fd >= 0) {
		lkc_flock_yield yield = op != LOCK_SH ? LKC_FLOCK_TAKE : quiet ? LKC_FLOCK_YIELD_LATER : LKC_FLOCK_YIELD;
		lkc_flock_step step;

		step = lkc_flock_wait(s, hold->path, hold->fd, NULL, op, yield, wait_ms, deadline_ns, err);

		if (step == LKC_FLOCK_GOT) {
			return LKC_OK;
		}
		if (step == LKC_FLOCK_BUSY || step == LKC_FLOCK_INTR) {
			return step == LKC_FLOCK_BUSY ? LKC_BUSY : LKC_INTERRUPTED;
		}
		/* The kept file was replaced or removed (or failed us): let it go and open the one at the path. */
		lkc_flock_drop(hold);
		if (step == LKC_FLOCK_FAIL) {
			return err->code;
		}
	}
	for (;;) {
		struct stat st;
		lkc_flock_step step;
		int fd;

		/* Read-write, so that the file can carry data for its holders (a fencing counter). */
		do {
			fd = openat(s->dirfd, hold->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, (mode_t) s->mode);
		} while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			return lkc_flock_file_error(s, "open", hold->path, errno, err);
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: lock file %s/%s is not a regular file", s->dir, hold->path);
		}
		lkc_flock_fix_mode(s, fd, &st);
		step = lkc_flock_wait(s, hold->path, fd, &st, op, op == LOCK_SH ? LKC_FLOCK_YIELD : LKC_FLOCK_TAKE,
			wait_ms, deadline_ns, err);
		if (step == LKC_FLOCK_STALE) {
			lkc_flock_unlock_close(fd);
			continue;
		}
		if (step == LKC_FLOCK_FAIL) {
			close(fd);
			return err->code;
		}
		/* Kept also when the lock was busy: the next attempt needs no open(). */
		hold->fd = fd;
		lkc_flock_track(fd, &st);
		return step == LKC_FLOCK_GOT ? LKC_OK : step == LKC_FLOCK_BUSY ? LKC_BUSY : LKC_INTERRUPTED;
	}
}

/*
 * Unlocks and keeps the lock file open for the next hold. A hold that force_release
 * broke lets go of the orphaned file and answers LKC_EXPIRED or LKC_LOST; the
 * next acquire opens the new file.
 */
static lkc_rc lkc_flock_release(lkc_store *store, lkc_hold *hold, int64_t delay_ms, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	int ours;

	(void) delay_ms; /* The lock layer refuses delays for stores without expiry. */
	if (hold->fd < 0) {
		/* A failed conversion lost the hold. */
		return lkc_flock_gone(s, hold->path);
	}
	/* A hold that force_release broke says so, as on the other stores. */
	ours = lkc_flock_still_ours(s, hold, err);
	if (ours < 0) {
		return err->code;
	}
	if (!ours) {
		lkc_flock_drop(hold);
		return lkc_flock_gone(s, hold->path);
	}
	/* The lock belongs to the open file description: this frees it even if a forked child shares the descriptor. */
	flock(hold->fd, LOCK_UN);
	hold->quiet = !lkc_flock_wake(s, hold->path, hold->fd);
	return LKC_OK;
}

/* LKC_OK while our descriptor is still the file at the path. */
static lkc_rc lkc_flock_check(lkc_store *store, lkc_hold *hold, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	int ours;

	if (hold->fd < 0) {
		return lkc_flock_gone(s, hold->path);
	}
	ours = lkc_flock_still_ours(s, hold, err);
	if (ours < 0) {
		return err->code;
	}
	return ours ? LKC_OK : lkc_flock_gone(s, hold->path);
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

/* Breaks every holder of the resource by putting a fresh file at its name. */
/*
 * The fencing counter lives at the start of the lock file as decimal text. It
 * is bumped the first time a hold asks for its token, which keeps the cycle of
 * holds that never ask at four system calls: tokens that were handed out still
 * strictly increase, since only an exclusive holder writes the counter.
 */
#define LKC_FLOCK_FENCE_BYTES 24

/* Reads the counter of the lock file fd: 0 for an empty or unreadable file, -1 with err filled on failure. */
static int64_t lkc_flock_read_counter(const lkc_flock_store *s, int fd, const char *name, lkc_err *err)
{
	char buf[LKC_FLOCK_FENCE_BYTES + 1];
	ssize_t n;
	int64_t value = 0;

	do {
		n = pread(fd, buf, LKC_FLOCK_FENCE_BYTES, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		lkc_flock_file_error(s, "read", name, errno, err);
		return -1;
	}
	for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (value > (INT64_MAX - 9) / 10) {
			break;
		}
		value = value * 10 + (buf[i] - '0');
	}
	return value;
}

/* Writes counter value to the lock file fd. */
static lkc_rc lkc_flock_write_counter(const lkc_flock_store *s, int fd, const char *name, int64_t value, lkc_err *err)
{
	char buf[LKC_FLOCK_FENCE_BYTES + 1];
	int len = snprintf(buf, sizeof(buf), "%020lld\n", (long long) value);
	ssize_t n;

	do {
		n = pwrite(fd, buf, (size_t) len, 0);
	} while (n < 0 && errno == EINTR);
	if (n != len) {
		return lkc_flock_file_error(s, "write the fencing counter of", name, n < 0 ? errno : EIO, err);
	}
	return LKC_OK;
}

/* Bumps the counter in the held lock file and hands out its new value. */
static lkc_rc lkc_flock_fence(lkc_store *store, lkc_hold *hold, int64_t *fence, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	int64_t value;

	if (hold->fd < 0) {
		return lkc_err_set(err, LKC_ERR_STATE, "flock: the lock is not held");
	}
	value = lkc_flock_read_counter(s, hold->fd, hold->path, err);
	if (value < 0) {
		return err->code;
	}
	if (value == INT64_MAX) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: the fencing counter of %s/%s is exhausted", s->dir, hold->path);
	}
	if (lkc_flock_write_counter(s, hold->fd, hold->path, value + 1, err) != LKC_OK) {
		return err->code;
	}
	*fence = value + 1;
	return LKC_OK;
}

/* How far a replaced file's counter jumps ahead, past tokens a broken holder may still take from the old file. */
#define LKC_FLOCK_FENCE_MARGIN 1024

/* Copies the fencing counter of the file at name into the new file fd, plus the margin. */
static lkc_rc lkc_flock_carry_counter(const lkc_flock_store *s, const char *name, int fd, lkc_err *err)
{
	int missing;
	int old = lkc_flock_open_existing(s, name, &missing, err);
	int64_t value;

	if (old < 0) {
		/* Nothing at the name, or something that is no lock file of ours (a planted link): no counter to carry. */
		(void) missing;
		lkc_err_clear(err);
		return LKC_OK;
	}
	value = lkc_flock_read_counter(s, old, name, err);
	close(old);
	if (value < 0) {
		return err->code;
	}
	if (value == 0) {
		return LKC_OK;
	}
	return lkc_flock_write_counter(s, fd, name, value > INT64_MAX - LKC_FLOCK_FENCE_MARGIN ? INT64_MAX : value + LKC_FLOCK_FENCE_MARGIN, err);
}

static lkc_rc lkc_flock_force_release(lkc_store *store, const char *resource, size_t len, lkc_err *err)
{
	lkc_flock_store *s = (lkc_flock_store *) store;
	char token[LKC_TOKEN_LEN + 1];
	char tmp[LKC_TOKEN_LEN + 16];
	char *name = lkc_flock_file_name(resource, len);
	struct stat st;
	int fd;

	if (name == NULL) {
		return lkc_err_set(err, LKC_ERR_SYSTEM, "flock: out of memory");
	}
	if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		lkc_rc rc = errno == ENOENT ? LKC_OK : lkc_flock_file_error(s, "inspect", name, errno, err);
		free(name);
		return rc;
	}
	/*
	 * Holders keep their lock on the inode, so the only way to break them is to put a
	 * new file at the name, atomically: they are left with an unlinked inode (their
	 * check() says so), and waiters get IN_ATTRIB on the old one and move over. The
	 * temporary name starts with '.', which no lock file name does.
	 */
	if (lkc_token_new(token, err) != LKC_OK) {
		free(name);
		return err->code;
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", token);
	fd = openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t) s->mode);
	if (fd < 0) {
		lkc_flock_file_error(s, "create", tmp, errno, err);
		free(name);
		return err->code;
	}
	fchmod(fd, (mode_t) s->mode);
	if (lkc_flock_carry_counter(s, name, fd, err) != LKC_OK) {
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

/* Closes the descriptor, held or kept, leaving any lock on it in place: it may be the parent's. */
static void lkc_flock_abandon(lkc_store *store, lkc_hold *hold)
{
	(void) store;
	if (hold->fd >= 0) {
		/*
		 * No LOCK_UN: the lock belongs to the open file description, which the parent
		 * still uses. Closing even a descriptor kept without a hold gives a forked child
		 * a description of its own on its next acquire.
		 */
		lkc_flock_untrack(hold->fd);
		close(hold->fd);
		hold->fd = -1;
	}
}

/* Closes the directory and the inotify instance and frees the store. */
static void lkc_flock_destroy(lkc_store *store)
{
	lkc_flock_store *s = (lkc_flock_store *) store;

	close(s->dirfd);
	if (s->inotify_fd >= 0) {
		close(s->inotify_fd);
	}
	free(s->dir);
	free(s);
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
	.force_release = lkc_flock_force_release,
	.abandon = lkc_flock_abandon,
	.destroy = lkc_flock_destroy,
};
