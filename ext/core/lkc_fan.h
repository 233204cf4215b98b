/*
 * Calls side by side in one thread: each call of a fan runs on a stack of
 * its own and gives way at its I/O waits (lkc_fan_wait), and the fan waits
 * for all of them in a single poll(). The Redis connection layer's one wait
 * (lkc_redis_io.c) goes through here, so that a store's operation, written as
 * a plain sequence of sends and reads, runs on several servers at once
 * unchanged: the combined store (lkc_combined.c) is built on it.
 *
 * Nothing runs between two waits but the call itself: a call's state is
 * never touched by another call half-way through a step.
 */
#ifndef LKC_FAN_H
#define LKC_FAN_H

#include <stdint.h>

/* The most calls one fan runs. */
#define LKC_FAN_MAX 16

/* Runs call i of a fan. */
typedef void (*lkc_fan_fn)(void *arg, int i);
/*
 * Whether the fan's outcome is decided (nobody waits for the rest), asked
 * after each call ends; NULL: every call runs to its end.
 */
typedef int (*lkc_fan_decided_fn)(void *arg);

/*
 * Runs fn(arg, i) for i in 0..n-1 side by side (n at most LKC_FAN_MAX) and
 * returns when every one ended. Once decided() says so, the calls still
 * waiting get a grace as long again as the decision took (at least
 * LKC_FAN_GRACE_NS, at most LKC_FAN_GRACE_MAX_NS), then see their deadlines
 * pass: they end as timed out. No wait lasts past deadline (lkc_now_ns(); 0
 * none), however many exchanges a call makes. With deliver, a call is given
 * up only once what it sends is written (lkc_fan_sent): a release must reach
 * its server, however late it answers.
 * Inside a fan's call, or when a stack cannot be had, the calls run one
 * after another.
 */
void lkc_fan_run(int n, lkc_fan_fn fn, lkc_fan_decided_fn decided, void *arg, uint64_t deadline, int deliver);
#define LKC_FAN_GRACE_NS 1000000
#define LKC_FAN_GRACE_MAX_NS 5000000

/* Whether the caller runs as a call of a fan. */
int lkc_fan_inside(void);
/* From a fan's call: what it had to deliver is written (see lkc_fan_run); a no-op elsewhere. */
void lkc_fan_sent(void);
/* Whether the caller is a call of a fan that no longer waits for it: it should give up, not retry. */
int lkc_fan_given_up(void);

/*
 * From a fan's call: waits until fd is ready for events (POLLIN, POLLOUT) or
 * the deadline (lkc_now_ns(); 0 none) passes, the other calls running
 * meanwhile: 1 ready, 0 timed out (or no longer waited for).
 */
int lkc_fan_wait(int fd, short events, uint64_t deadline);

#endif
