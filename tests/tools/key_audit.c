/*
 * key_audit HOST PORT OUTFILE: watches a running redis-server through
 * MONITOR and appends to OUTFILE each distinct violation of "scripts declare
 * every key they touch in KEYS and touch none outside the lock key's slot"
 * (tests/core/monitor_audit.h): one line per (script, command, key shape),
 * with an example, as soon as it is first seen. It runs until SIGTERM or
 * SIGINT, then appends how often each was seen and how many times each of the
 * store's scripts ran, and exits 0 (1 when it could not attach, 2 when the
 * connection failed while it ran). The scripts are named by
 * tests/core/redis_scripts.h; another script's keys are checked too, and it
 * is listed once as "script not in the audit's table".
 *
 * Built by `make -C tests/core tools` (build/tools/key_audit). With the
 * phpt suite's shared redis-server, whose port scripts/test.sh exports as
 * LOCK_TEST_REDIS_PORT, one would run, with that port exported:
 *
 *   tests/core/build/tools/key_audit 127.0.0.1 "$LOCK_TEST_REDIS_PORT" "$work/key-audit.log" &
 *   audit_pid=$!
 *   until grep -q '^# key_audit: watching' "$work/key-audit.log"; do sleep 0.1; done
 *   ... the phpt run ...
 *   kill -TERM "$audit_pid"; wait "$audit_pid"
 *   grep -v '^#' "$work/key-audit.log"   # the violations; empty when there are none
 *
 * MONITOR slows the server down (every command is copied to the auditor),
 * so such a run is for an audit, not for timing figures.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/monitor_audit.h"
#include "../core/redis_scripts.h"

static volatile int stop;

static void on_signal(int sig)
{
	(void) sig;
	stop = 1;
}

/* Appends a new finding to the output file at once, so a run that is killed keeps what it saw. */
static void append_finding(void *ctx, const ma_finding *f)
{
	ma_print(ctx, "", f);
	fflush(ctx);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	redisContext *admin, *mon;
	ma_audit audit;
	FILE *out;
	char *end;
	long port;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: key_audit HOST PORT OUTFILE\n");
		return 1;
	}
	port = strtol(argv[2], &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535) {
		fprintf(stderr, "key_audit: bad port \"%s\"\n", argv[2]);
		return 1;
	}
	out = fopen(argv[3], "a");
	if (out == NULL) {
		perror(argv[3]);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	admin = redisConnect(argv[1], (int) port);
	if (admin == NULL || admin->err != 0) {
		fprintf(stderr, "key_audit: cannot connect to %s:%ld: %s\n", argv[1], port, admin != NULL ? admin->errstr : "out of memory");
		redisFree(admin);
		fclose(out);
		return 1;
	}
	ma_init(&audit, admin);
	audit.on_finding = append_finding;
	audit.ctx = out;
	for (size_t i = 0; i < T_REDIS_NSCRIPTS; i++) {
		if (ma_add_script(&audit, t_redis_scripts[i].name, t_redis_scripts[i].body) != 0) {
			fprintf(stderr, "key_audit: SCRIPT LOAD of %s failed on %s:%ld\n", t_redis_scripts[i].name, argv[1], port);
			ma_free(&audit);
			redisFree(admin);
			fclose(out);
			return 1;
		}
	}
	mon = ma_monitor(argv[1], (int) port);
	if (mon == NULL) {
		ma_free(&audit);
		redisFree(admin);
		fclose(out);
		return 1;
	}
	fprintf(out, "# key_audit: watching %s:%ld\n", argv[1], port);
	fflush(out);
	rc = ma_pump(&audit, mon, NULL, 0, -1, &stop);
	if (rc < 0) {
		fprintf(stderr, "key_audit: the MONITOR connection to %s:%ld failed: %s\n", argv[1], port,
			mon->err != 0 ? mon->errstr : "unreadable reply");
	}
	fprintf(out, "# key_audit: %lu lines, %lu script runs, %lu commands run by scripts, %zu distinct violations\n",
		audit.lines, audit.script_runs, audit.script_commands, audit.nfindings);
	for (size_t i = 0; i < audit.nscripts; i++) {
		fprintf(out, "# key_audit: script %s: %lu run%s\n", audit.scripts[i].name, audit.scripts[i].runs,
			audit.scripts[i].runs == 1 ? "" : "s");
	}
	for (size_t i = 0; i < audit.nfindings; i++) {
		ma_print(out, "# key_audit: total: ", &audit.findings[i]);
	}
	ma_free(&audit);
	redisFree(mon);
	redisFree(admin);
	fclose(out);
	return rc < 0 ? 2 : 0;
}
