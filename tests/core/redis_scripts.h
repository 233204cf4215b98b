/*
 * The Redis store's scripts by name, for the key audit (test_redis_keys.c,
 * tests/tools/key_audit.c): a script run that is not here reads as an
 * unknown script, and test_redis_keys fails until every one here has run.
 * A new ext/core/lua/NAME.lua must be added here.
 */
#ifndef LKC_T_REDIS_SCRIPTS_H
#define LKC_T_REDIS_SCRIPTS_H

#include "../../ext/core/lkc_redis_lua.h"

static const struct {
	const char *name;
	const char *body;
} t_redis_scripts[] = {
	{ "acquire", lkc_rs_acquire_lua },
	{ "release", lkc_rs_release_lua },
	{ "refresh", lkc_rs_refresh_lua },
	{ "check", lkc_rs_check_lua },
	{ "force", lkc_rs_force_lua },
	{ "watch", lkc_rs_watch_lua },
	{ "fence", lkc_rs_fence_lua },
};

#define T_REDIS_NSCRIPTS (sizeof(t_redis_scripts) / sizeof(t_redis_scripts[0]))

#endif
