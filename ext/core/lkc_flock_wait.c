/*
 * How the flock store waits (see lkc_flock_int.h, and the top of lkc_flock.c):
 * the marks a waiter sets on its lock file (OFD read locks) so that a release
 * knows whom to wake, the inotify watch it sleeps on, the queue in the shared
 * header that serves waiters in arrival order, the wait loop, and
 * waitUntilFree(), which waits in the same way and takes nothing.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_flock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Waits longer than this (about 34 years) are waits without bound, so deadlines never overflow. */
#define LKC_FLOCK_WAIT_MAX (INT64_C(1) << 40)

/* How long after the lock last moved a waiter lets older waiters go first: a stopped one then holds nobody back for long. */
#define LKC_FLOCK_DEFER_MAX_NS (UINT64_C(100) * 1000000u)
/* A slot this old is looked at: one whose waiter died (its mark gone) is freed. */
#define LKC_FLOCK_SLOT_CHECK_NS (UINT64_C(10) * 1000000u)

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

int lkc_flock_marked(int fd, off_t start, off_t len)
{
	struct flock fl;

	/* A write lock conflicts with every mark of another open file description, this process's included. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/*
 * Marks fd's open file description as waiting for its inode, asleep on inotify
 * (LKC_FLOCK_WAITER_BYTE) or, with futex, on the header's futex word; with
 * writer, as a waiting writer too (one call: the bytes are adjacent); whether it did.
 */
static int lkc_flock_mark_waiting(const lkc_flock_store *s, int fd, int writer, int futex)
{
	/*
	 * NFS, SMB and the like emulate flock() with byte-range locks on the server, where
	 * the marks would conflict with the holds themselves: waiters there poll instead.
	 */
	if (s->emulated) {
		return 0;
	}
	if (futex) {
		return lkc_flock_mark(fd, F_RDLCK, writer ? LKC_FLOCK_WRITER_BYTE : LKC_FLOCK_SLEEPER_BYTE, writer ? 2 : 1);
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
int lkc_flock_wake(const lkc_flock_store *s, const char *name, int fd)
{
	lkc_flock_hdr *hdr = lkc_flock_slot(fd)->hdr;
	struct flock fl;
	int nudge, woke = 0;

	if (!s->emulated && __atomic_load_n(&hdr->waiters, __ATOMIC_SEQ_CST) > 0) {
		/* First the waiters asleep on the futex: the kernel runs them at once. */
		lkc_flock_wake_sleepers(hdr);
		woke = 1;
	}
	/* As lkc_flock_marked, except that a look that fails wakes: a lost wake-up costs more than a spurious one. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = LKC_FLOCK_WAITER_BYTE;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_UNLCK) {
		return woke;
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

void lkc_flock_wake_sleepers(lkc_flock_hdr *hdr)
{
	__atomic_add_fetch(&hdr->wake, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &hdr->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
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

/* Whether an older waiter (for a reader: an older writer) still queues, so that we let it go first. */
static int lkc_flock_queue_behind(lkc_flock_hdr *hdr, int fd, int mine, uint64_t since, int writer, uint64_t now)
{
	for (int i = 0; i < LKC_FLOCK_QUEUE_SLOTS; i++) {
		uint64_t t = __atomic_load_n(&hdr->queue[i].since_ns, __ATOMIC_ACQUIRE);

		if (i == mine || t == 0 || t >= since || (!writer && !__atomic_load_n(&hdr->queue[i].writer, __ATOMIC_ACQUIRE))) {
			continue;
		}
		if (now - t > LKC_FLOCK_SLOT_CHECK_NS && !lkc_flock_marked(fd, LKC_FLOCK_QUEUE_BYTE + i, 1)) {
			/* Its waiter died without leaving: free the slot for the living. */
			__atomic_compare_exchange_n(&hdr->queue[i].since_ns, &t, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
			continue;
		}
		return 1;
	}
	return 0;
}

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
	if (yield && lkc_flock_marked(fd, LKC_FLOCK_WRITER_BYTE, 1)) {
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
 * Sleeps on the futex word of the header of fd until it no longer says seen,
 * for at most timeout ms (-1: LKC_FLOCK_SLICE_MS); whether the host wants the
 * wait to end. A futex wait with a timeout ends with EINTR when a signal
 * handler ran, whatever its SA_RESTART; the host is asked after every sleep,
 * so that a signal that came just before it costs one slice at most.
 */
static int lkc_flock_sleep(lkc_flock_hdr *hdr, uint32_t seen, int timeout)
{
	struct timespec ts;

	if (timeout < 0 || timeout > LKC_FLOCK_SLICE_MS) {
		timeout = LKC_FLOCK_SLICE_MS;
	}
	ts.tv_sec = timeout / 1000;
	ts.tv_nsec = (long) (timeout % 1000) * 1000000L;
	/* Not FUTEX_PRIVATE: the word lives in a file mapping shared with other processes. */
	syscall(SYS_futex, &hdr->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
	return lkc_interrupted();
}

/*
 * Takes op on fd, waiting as wait_ms allows (deadline_ns is its end), woken by a
 * release through the futex word in the lock file's shared header (the kernel
 * wakes the waiter directly, as it wakes one blocked in flock()), and looking
 * again every LKC_FLOCK_SLICE_MS for what posts no wake-up: a holder that died.
 * With yield (a new shared hold, never an exclusive one), waiting writers go
 * first. With queue, older waiters go first (see lkc_flock_queue_behind). An
 * exclusive wait marks itself as a waiting writer for as long as it lasts.
 */
lkc_flock_step lkc_flock_wait(lkc_flock_store *s, const char *name, int fd,
	int op, lkc_flock_yield yield, int queue, int64_t wait_ms, uint64_t deadline_ns, lkc_err *err)
{
	lkc_flock_hdr *hdr = lkc_flock_slot(fd)->hdr;
	lkc_flock_step step;
	int writer = op == LOCK_EX;
	int counted = 0, marked = 0, slice_ms = 1;
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
		/* Read before the attempt: a release after it changes the word, and the sleep below does not begin. */
		uint32_t seen = __atomic_load_n(&hdr->wake, __ATOMIC_SEQ_CST);
		int timeout, defer = 0;

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
		if (!counted && !s->emulated) {
			/*
			 * Count, mark, then try again: the order lkc_flock_let_go relies on. A
			 * releaser that sees no count unlocked before our next attempt. A reader
			 * held back by a writer's mark is woken in the same way: its look at the
			 * writer's mark comes after its count, and the writer drops its mark
			 * before it wakes the waiters (see the end of this function).
			 */
			__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
			counted = 1;
			if (fair) {
				slot = lkc_flock_queue_join(hdr, fd, since, writer);
			}
			marked = lkc_flock_mark_waiting(s, fd, writer, 1);
			continue;
		}
		if (defer && (timeout < 0 || timeout > 10)) {
			/* The older waiter we let go first may give up without a word: look again soon. */
			timeout = 10;
		}
		if (s->emulated) {
			/*
			 * A network file system shares no memory between machines, so nothing
			 * tells us of a release: we look again after short sleeps that grow to 50 ms.
			 */
			struct pollfd none = { -1, 0, 0 };

			if (timeout < 0 || timeout > slice_ms) {
				timeout = slice_ms;
			}
			slice_ms = slice_ms >= 25 ? 50 : slice_ms * 2;
			if (poll(&none, 0, timeout) < 0 && errno != EINTR) {
				lkc_err_errno(err, LKC_ERR_SYSTEM, errno, "flock: cannot wait for lock file %s/%s", s->dir, name);
				step = LKC_FLOCK_FAIL;
				break;
			}
			if (lkc_interrupted()) {
				step = LKC_FLOCK_INTR;
				break;
			}
			continue;
		}
		if (lkc_flock_sleep(hdr, seen, timeout)) {
			step = LKC_FLOCK_INTR;
			break;
		}
	}
	if (counted) {
		__atomic_sub_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	}
	if (slot >= 0) {
		/*
		 * However the wait ended, we wait no more: the slot is free, and one unlock
		 * drops our marks, the writer's and sleeper's bytes and the slot's (this open
		 * file description marks nothing else in that range).
		 */
		__atomic_store_n(&hdr->queue[slot].since_ns, 0, __ATOMIC_RELEASE);
		lkc_flock_mark(fd, F_UNLCK, 0, LKC_FLOCK_QUEUE_BYTE + slot + 1);
	} else if (marked) {
		lkc_flock_mark(fd, F_UNLCK, LKC_FLOCK_WRITER_BYTE, 2);
	}
	if (((marked && writer) || slot >= 0) && step != LKC_FLOCK_GOT) {
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
int64_t lkc_flock_clamp_wait(int64_t wait_ms)
{
	return wait_ms < 0 || wait_ms > LKC_FLOCK_WAIT_MAX ? LKC_WAIT_FOREVER : wait_ms;
}

/*
 * Whether a flock() hold exists on the inode of fd, looked up in /proc/locks
 * without taking anything: 2 a writer's, 1 readers', 0 none, or -1 when the table
 * cannot be read; with seen, every holder's pid is added to seen's holders. Waiters
 * blocked in flock() ("->" lines) hold nothing; our waiters never block there.
 * The table is read in one read(): the kernel writes it under its lock within one
 * call, while across calls (stdio's 4 kB reads) a hold taken or given up
 * meanwhile shifts the lines, and one could be skipped.
 */
int lkc_flock_held_proc(int fd, lkc_inspect *seen)
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
	if (seen != NULL) {
		seen->holders_known = 1;
	}
	for (char *line = buf; (!held || seen != NULL) && line != NULL && *line != '\0';) {
		char *end = strchr(line, '\n');
		long pid;

		if (end != NULL) {
			*end = '\0';
		}
		if (strstr(line, " FLOCK ") != NULL && strstr(line, "->") == NULL && strstr(line, want) != NULL) {
			held = strstr(line, " WRITE ") != NULL ? 2 : 1;
			/* "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF": the fifth field is the pid. */
			if (seen != NULL && sscanf(line, "%*s %*s %*s %*s %ld", &pid) == 1 && lkc_inspect_holder(seen, pid) != 0) {
				held = -1;
				break;
			}
		}
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
		if (__atomic_load_n(&hdr->queue[i].since_ns, __ATOMIC_ACQUIRE) != 0 && lkc_flock_marked(fd, LKC_FLOCK_QUEUE_BYTE + i, 1)) {
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
	int held = s->emulated ? -1 : lkc_flock_held_proc(fd, NULL);

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
lkc_rc lkc_flock_wait_free(lkc_store *store, const char *resource, size_t len, int64_t wait_ms, lkc_err *err)
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
		marked = lkc_flock_mark_waiting(s, fd, 0, 0);
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
