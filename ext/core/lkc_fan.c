/*
 * Calls side by side (lkc_fan.h): each call a context (ucontext) on a stack
 * of its own, the fan a loop that resumes every call that can go on and polls
 * the descriptors of those that wait, all at once.
 *
 * The stacks are mapped once per process and kept (LKC_FAN_STACK bytes and a
 * guard page below each), so that a fan costs no system call for its memory.
 * A signal that arrives meanwhile runs its handler on whatever stack is
 * current, as it would on a thread's; the host's handlers only note that a
 * signal came (see lkc_interrupted), and no fan's wait is ended by one: each
 * call is bounded by its own deadline.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include "lkc_fan.h"
#include "lkc.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__has_include)
# if __has_include(<valgrind/valgrind.h>)
#  include <valgrind/valgrind.h>
#  define LKC_FAN_VALGRIND 1
# endif
#endif

/* AddressSanitizer follows the stack switches when told (its own tests, tests/core). */
#if defined(__SANITIZE_ADDRESS__)
# define LKC_FAN_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define LKC_FAN_ASAN 1
# endif
#endif
#ifdef LKC_FAN_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
# define LKC_FAN_LEAVING(save, bottom, size) __sanitizer_start_switch_fiber((save), (bottom), (size))
# define LKC_FAN_ARRIVED(save, bottom, size) __sanitizer_finish_switch_fiber((save), (bottom), (size))
#else
# define LKC_FAN_LEAVING(save, bottom, size) ((void) (save), (void) (bottom), (void) (size))
# define LKC_FAN_ARRIVED(save, bottom, size) ((void) (save), (void) (bottom), (void) (size))
#endif

/* Each call's stack: enough for a connect with a name to resolve, and TLS. */
#define LKC_FAN_STACK (256 * 1024)

typedef enum { LKC_FAN_READY, LKC_FAN_WAITING, LKC_FAN_ENDED } lkc_fan_state;

typedef struct {
	ucontext_t ctx;
	lkc_fan_state state;
	int fd;
	short events;
	uint64_t deadline;
	int ready;               /* what lkc_fan_wait answers when resumed */
} lkc_fan_call;

typedef struct {
	ucontext_t home;         /* the fan's own loop */
	lkc_fan_call calls[LKC_FAN_MAX];
	lkc_fan_call *current;
	const void *home_bottom; /* the caller's stack, for AddressSanitizer */
	size_t home_size;
	lkc_fan_fn fn;
	void *arg;
	int started;             /* index of the call being started, for lkc_fan_start */
	uint64_t cutoff;         /* waits end by then: the fan's deadline, or decided and the grace gone (0: none) */
	int decided;
} lkc_fan;

/* The fan this thread runs, NULL when none. */
static __thread lkc_fan *lkc_fan_now;

/* The stacks of this process, mapped on first use. */
static __thread char *lkc_fan_stacks[LKC_FAN_MAX];

static char *lkc_fan_stack(int i)
{
	size_t page = (size_t) sysconf(_SC_PAGESIZE);
	char *mem;

	if (lkc_fan_stacks[i] != NULL) {
		return lkc_fan_stacks[i];
	}
	mem = mmap(NULL, LKC_FAN_STACK + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		return NULL;
	}
	/* A guard page below the stack: an overflow faults rather than writing over memory. */
	if (mprotect(mem, page, PROT_NONE) != 0) {
		munmap(mem, LKC_FAN_STACK + page);
		return NULL;
	}
#ifdef LKC_FAN_VALGRIND
	(void) VALGRIND_STACK_REGISTER(mem + page, mem + page + LKC_FAN_STACK);
#endif
	lkc_fan_stacks[i] = mem + page;
	return lkc_fan_stacks[i];
}

/* The entry of every call: runs it, marks it ended, and goes back to the fan's loop (uc_link). */
static void lkc_fan_start(void)
{
	lkc_fan *fan = lkc_fan_now;
	int i = fan->started;

	LKC_FAN_ARRIVED(NULL, &fan->home_bottom, &fan->home_size);
	fan->fn(fan->arg, i);
	fan->calls[i].state = LKC_FAN_ENDED;
	fan->current = NULL;
	/* This stack is done with: nothing of it is kept. */
	LKC_FAN_LEAVING(NULL, fan->home_bottom, fan->home_size);
}

int lkc_fan_inside(void)
{
	return lkc_fan_now != NULL && lkc_fan_now->current != NULL;
}

int lkc_fan_wait(int fd, short events, uint64_t deadline)
{
	lkc_fan *fan = lkc_fan_now;
	lkc_fan_call *call = fan->current;

	call->state = LKC_FAN_WAITING;
	call->fd = fd;
	call->events = events;
	call->deadline = deadline;
	fan->current = NULL;
	{
		void *save = NULL;

		LKC_FAN_LEAVING(&save, fan->home_bottom, fan->home_size);
		swapcontext(&call->ctx, &fan->home);
		LKC_FAN_ARRIVED(save, &fan->home_bottom, &fan->home_size);
	}
	return call->ready;
}

/* Resumes call i until it waits or ends. */
static void lkc_fan_resume(lkc_fan *fan, int i)
{
	void *save = NULL;

	fan->current = &fan->calls[i];
	fan->calls[i].state = LKC_FAN_READY;
	LKC_FAN_LEAVING(&save, lkc_fan_stacks[i], LKC_FAN_STACK);
	swapcontext(&fan->home, &fan->calls[i].ctx);
	LKC_FAN_ARRIVED(save, NULL, NULL);
}

/* Runs the calls one after another: inside a fan (whose waits they share) or without stacks. */
static void lkc_fan_serial(int n, lkc_fan_fn fn, void *arg)
{
	for (int i = 0; i < n; i++) {
		fn(arg, i);
	}
}

/* The earlier of two deadlines, 0 being none. */
static uint64_t lkc_fan_earlier(uint64_t a, uint64_t b)
{
	return a == 0 ? b : (b == 0 || b > a ? a : b);
}

void lkc_fan_run(int n, lkc_fan_fn fn, lkc_fan_decided_fn decided, void *arg, uint64_t deadline)
{
	lkc_fan fan;
	uint64_t start = lkc_now_ns();
	int left = n;

	if (lkc_fan_now != NULL || n > LKC_FAN_MAX || n < 1) {
		lkc_fan_serial(n, fn, arg);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (lkc_fan_stack(i) == NULL) {
			lkc_fan_serial(n, fn, arg);
			return;
		}
	}
	memset(&fan, 0, sizeof(fan));
	fan.fn = fn;
	fan.arg = arg;
	fan.cutoff = deadline;
	lkc_fan_now = &fan;
	for (int i = 0; i < n; i++) {
		lkc_fan_call *call = &fan.calls[i];

		getcontext(&call->ctx);
		call->ctx.uc_stack.ss_sp = lkc_fan_stacks[i];
		call->ctx.uc_stack.ss_size = LKC_FAN_STACK;
		call->ctx.uc_link = &fan.home;
		makecontext(&call->ctx, lkc_fan_start, 0);
		fan.started = i;
		lkc_fan_resume(&fan, i);
		if (call->state == LKC_FAN_ENDED) {
			left--;
		}
	}
	while (left > 0) {
		struct pollfd pfd[LKC_FAN_MAX];
		int at[LKC_FAN_MAX], npfd = 0;
		uint64_t now, until = 0;
		int64_t ms;

		if (!fan.decided && decided != NULL && decided(arg)) {
			uint64_t took = lkc_now_ns() - start;

			fan.decided = 1;
			fan.cutoff = lkc_fan_earlier(fan.cutoff, lkc_now_ns() + (took < LKC_FAN_GRACE_NS ? LKC_FAN_GRACE_NS
				: took > LKC_FAN_GRACE_MAX_NS ? LKC_FAN_GRACE_MAX_NS : took));
		}
		for (int i = 0; i < n; i++) {
			if (fan.calls[i].state == LKC_FAN_WAITING) {
				pfd[npfd] = (struct pollfd) { .fd = fan.calls[i].fd, .events = fan.calls[i].events, .revents = 0 };
				at[npfd++] = i;
				until = lkc_fan_earlier(until, lkc_fan_earlier(fan.calls[i].deadline, fan.cutoff));
			}
		}
		ms = until == 0 ? 60000 : lkc_ms_left(until);
		if (until != 0 && ms == 0 && lkc_now_ns() < until) {
			ms = 1;
		}
		if (poll(pfd, (nfds_t) npfd, ms > 60000 ? 60000 : (int) ms) < 0 && errno != EINTR) {
			/* Nothing to wait on that poll() takes: every waiting call gives up as timed out. */
			for (int k = 0; k < npfd; k++) {
				pfd[k].revents = 0;
				fan.calls[at[k]].deadline = 1;
			}
		}
		now = lkc_now_ns();
		for (int k = 0; k < npfd; k++) {
			lkc_fan_call *call = &fan.calls[at[k]];
			uint64_t end = lkc_fan_earlier(call->deadline, fan.cutoff);

			if (pfd[k].revents != 0) {
				call->ready = 1;
			} else if (end != 0 && now >= end) {
				call->ready = 0;
			} else {
				continue;
			}
			lkc_fan_resume(&fan, at[k]);
			if (call->state == LKC_FAN_ENDED) {
				left--;
			}
		}
	}
	lkc_fan_now = NULL;
}
