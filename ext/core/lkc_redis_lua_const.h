/*
 * The constants that the Redis store's C code and its scripts (ext/core/lua)
 * share. A script spells one as @NAME@; scripts/gen-lua.sh reads the values
 * from here, so this file is the only place they are set. Each must be a
 * plain decimal number on its #define line.
 */
#ifndef LKC_REDIS_LUA_CONST_H
#define LKC_REDIS_LUA_CONST_H

/* How long a waiter handed a hold has to pick it up (ms): what a waiter that died costs the others. */
#define LKC_RS_GRACE 200
/* Lifetime of a wake list (ms): only one nobody sleeps on (its waiter died) lives that long. */
#define LKC_RS_WAKE_TTL 10000
/*
 * How long the fencing counter outlives the last exclusive take (ms): an hour,
 * or LKC_RS_FENCE_TTLS times the hold's TTL when that is shorter. A counter
 * that expired jumps to the clock when next used, as a lost one does.
 */
#define LKC_RS_FENCE_TTL 3600000
#define LKC_RS_FENCE_TTLS 10
/* The expiry score of a reader without a TTL: 2^53 - 1, the largest whole number a double holds exactly. */
#define LKC_RS_FOREVER 9007199254740991
/* The most waiters Store::inspect() lists (the count of waiters goes as far). */
#define LKC_RS_INSPECT_MAX 1000

#endif
