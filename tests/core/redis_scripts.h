/*
 * The Redis store's scripts by name, for the key audit (test_redis_keys.c,
 * tests/tools/key_audit.c): a script run that is not here reads as an
 * unknown script, and test_redis_keys fails until every one here has run.
 * The generated header lists every ext/core/lua/NAME.lua.
 */
#ifndef LKC_T_REDIS_SCRIPTS_H
#define LKC_T_REDIS_SCRIPTS_H

#include "../../ext/core/lkc_redis_lua.h"

static const struct {
	const char *name;
	const char *body;
} t_redis_scripts[] = {
#define T_REDIS_SCRIPT(name) { #name, lkc_rs_##name##_lua },
	LKC_RS_EACH_SCRIPT(T_REDIS_SCRIPT)
#undef T_REDIS_SCRIPT
};

#define T_REDIS_NSCRIPTS (sizeof(t_redis_scripts) / sizeof(t_redis_scripts[0]))

#endif
