/*
 * Calls side by side (lkc_fan.h): each call a context on a stack of its own, the fan a loop that resumes every call that can go on and polls
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

/*
 * A context: where a stack was left. On x86-64, a switch saves the registers
 * the ABI has callees keep (and the floating-point control words) on the
 * stack it leaves, and is a dozen instructions; ucontext's swapcontext() makes
 * two system calls for the signal mask each time, which no call here changes.
 * Elsewhere, and where the build asks for shadow stacks (a return onto
 * another stack would fault there), ucontext.
 */
#if defined(__x86_64__) && !defined(LKC_FAN_UCONTEXT) && !(defined(__CET__) && (__CET__ & 2))
typedef struct {
	void *sp;
} lkc_fan_ctx;

/* Saves the caller's registers on its stack, *from = its stack pointer, then resumes the stack at to. */
void lkc_fan_switch(void **from, void *to);
__asm__(
	".pushsection .text\n"
	".p2align 4\n"
	".globl lkc_fan_switch\n"
	".hidden lkc_fan_switch\n"
	".type lkc_fan_switch, @function\n"
	"lkc_fan_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tsubq $8, %rsp\n"
	"\tstmxcsr (%rsp)\n"
	"\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n"
	"\tfldcw 4(%rsp)\n"
	"\taddq $8, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size lkc_fan_switch, .-lkc_fan_switch\n"
	".popsection\n");

/*
 * A context that starts entry on the stack [stack, stack + size): the frame a
 * switch would have left, returning into entry as if it had been called.
 */
static void lkc_fan_ctx_make(lkc_fan_ctx *ctx, char *stack, size_t size, void (*entry)(void))
{
	uintptr_t top = ((uintptr_t) stack + size) & ~(uintptr_t) 15;
	uint64_t *frame = (uint64_t *) (top - 88);
	uint32_t mxcsr;
	uint16_t fpucw;

	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	memset(frame, 0, 88);
	/* The control words, r15, r14, r13, r12, rbx, rbp, the return address (entry), entry's own (none). */
	memcpy(frame, &mxcsr, 4);
	memcpy((char *) frame + 4, &fpucw, 2);
	frame[7] = (uint64_t) (uintptr_t) entry;
	ctx->sp = frame;
}

static void lkc_fan_ctx_swap(lkc_fan_ctx *from, lkc_fan_ctx *to)
{
	lkc_fan_switch(&from->sp, to->sp);
}
#else
typedef struct {
	ucontext_t uc;
} lkc_fan_ctx;

static void lkc_fan_ctx_make(lkc_fan_ctx *ctx, char *stack, size_t size, void (*entry)(void))
{
	getcontext(&ctx->uc);
	ctx->uc.uc_stack.ss_sp = stack;
	ctx->uc.uc_stack.ss_size = size;
	ctx->uc.uc_link = NULL;
	makecontext(&ctx->uc, entry, 0);
}

static void lkc_fan_ctx_swap(lkc_fan_ctx *from, lkc_fan_ctx *to)
{
	swapcontext(&from->uc, &to->uc);
}
#endif

typedef enum { LKC_FAN_READY, LKC_FAN_WAITING, LKC_FAN_ENDED } lkc_fan_state;

typedef struct {
	lkc_fan_ctx ctx;
	lkc_fan_state state;
	int fd;
	short events;
	uint64_t deadline;
	int ready;               /* what lkc_fan_wait answers when resumed */
	int protect;             /* not given up at the decision: what it delivers is not written yet */
} lkc_fan_call;

typedef struct {
	lkc_fan_ctx home;        /* the fan's own loop */
	lkc_fan_call calls[LKC_FAN_MAX];
	lkc_fan_call *current;
	const void *home_bottom; /* the caller's stack, for AddressSanitizer */
	size_t home_size;
	lkc_fan_fn fn;
	void *arg;
	int started;             /* index of the call being started, for lkc_fan_start */
	uint64_t deadline;       /* no wait lasts longer (0: none) */
	uint64_t cutoff;         /* waits end by then: the deadline, or decided and the grace gone (0: none) */
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

/* The entry of every call: runs it, marks it ended, and goes back to the fan's loop for good. */
static void lkc_fan_start(void)
{
	lkc_fan *fan = lkc_fan_now;
	int i = fan->started;

	LKC_FAN_ARRIVED(NULL, &fan->home_bottom, &fan->home_size);
	fan->fn(fan->arg, i);
	fan->calls[i].state = LKC_FAN_ENDED;
	fan->current = NULL;
	/* This stack is done with: nothing of it is kept, and it is never resumed. */
	LKC_FAN_LEAVING(NULL, fan->home_bottom, fan->home_size);
	lkc_fan_ctx_swap(&fan->calls[i].ctx, &fan->home);
	abort();
}

int lkc_fan_inside(void)
{
	return lkc_fan_now != NULL && lkc_fan_now->current != NULL;
}

void lkc_fan_sent(void)
{
	if (lkc_fan_inside()) {
		lkc_fan_now->current->protect = 0;
	}
}

/* When a waiting call's wait ends: its own deadline, or the fan's (the cutoff, unless it still delivers). */
static uint64_t lkc_fan_end(const lkc_fan *fan, const lkc_fan_call *call)
{
	uint64_t fan_end = call->protect ? fan->deadline : fan->cutoff;

	return call->deadline == 0 ? fan_end : (fan_end == 0 || fan_end > call->deadline ? call->deadline : fan_end);
}

int lkc_fan_given_up(void)
{
	if (!lkc_fan_inside()) {
		return 0;
	}
	{
		/* The fan's own end, not the call's last wait's: a call may wait again with a deadline of its own. */
		uint64_t end = lkc_fan_now->current->protect ? lkc_fan_now->deadline : lkc_fan_now->cutoff;

		return end != 0 && lkc_now_ns() >= end;
	}
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
		lkc_fan_ctx_swap(&call->ctx, &fan->home);
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
	lkc_fan_ctx_swap(&fan->home, &fan->calls[i].ctx);
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

void lkc_fan_run(int n, lkc_fan_fn fn, lkc_fan_decided_fn decided, void *arg, uint64_t deadline, int deliver)
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
	fan.deadline = deadline;
	fan.cutoff = deadline;
	lkc_fan_now = &fan;
	for (int i = 0; i < n; i++) {
		lkc_fan_call *call = &fan.calls[i];

		lkc_fan_ctx_make(&call->ctx, lkc_fan_stacks[i], LKC_FAN_STACK, lkc_fan_start);
		call->protect = deliver;
		fan.started = i;
		lkc_fan_resume(&fan, i);
		if (call->state == LKC_FAN_ENDED) {
			left--;
		}
	}
	while (left > 0) {
		struct pollfd pfd[LKC_FAN_MAX];
		int at[LKC_FAN_MAX], npfd = 0;
		uint64_t now, until = 0, wait_ns;
		struct timespec ts;

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
				until = lkc_fan_earlier(until, lkc_fan_end(&fan, &fan.calls[i]));
			}
		}
		now = lkc_now_ns();
		/* ppoll: a grace of a millisecond is not rounded up to two. */
		wait_ns = until == 0 ? 60000000000ull : until > now ? until - now : 0;
		if (wait_ns > 60000000000ull) {
			wait_ns = 60000000000ull;
		}
		ts.tv_sec = (time_t) (wait_ns / 1000000000u);
		ts.tv_nsec = (long) (wait_ns % 1000000000u);
		if (ppoll(pfd, (nfds_t) npfd, &ts, NULL) < 0 && errno != EINTR) {
			/* Nothing to wait on that poll() takes: every waiting call gives up as timed out. */
			for (int k = 0; k < npfd; k++) {
				pfd[k].revents = 0;
				fan.calls[at[k]].deadline = 1;
			}
		}
		now = lkc_now_ns();
		for (int k = 0; k < npfd; k++) {
			lkc_fan_call *call = &fan.calls[at[k]];
			uint64_t end = lkc_fan_end(&fan, call);

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
