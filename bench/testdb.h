/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_BENCH_TESTDB_H
#define FWD_BENCH_TESTDB_H

/*
 * Benchmarks that need a database start a private one with
 * scripts/testdb (no shell: execv with an argument vector) and connect to
 * it as the controller with a schema created.
 */

#include <stdbool.h>

#include "common/timeutil.h"
#include "db/db.h"
#include "policies/policy.h"

struct bench_db {
	char dir[64];
	char sock[128];
	char pass[128];
	struct db_config cfg;
	struct db *db;
};

/* Start, connect, create the schema.  Exits the program on failure. */
void bench_db_start(struct bench_db *b);
/* Connect to the running server of a directory an earlier run kept
 * (bench_db_keep()) and bring its schema up to date.  Exits the program
 * on failure. */
void bench_db_attach(struct bench_db *b, const char *dir);
/* Disconnect, stop the server, remove the directory. */
void bench_db_stop(struct bench_db *b);
/* Disconnect and leave the server running, its directory kept: a store
 * that took long to load, measured again with bench_db_attach(). */
void bench_db_keep(struct bench_db *b);

/*
 * Let the server of dbdir (scripts/testdb's directory; db connected to
 * it) finish what a bulk load leaves behind, dirty pages to flush and
 * old row versions to purge, before measuring: history is written over
 * time, not the second before.  Prints how long it took; at most 120 s.
 * 0, or -1 (message printed).
 */
int bench_db_settle(struct db *db, const char *dbdir);

/*
 * Run argv (argv[0] an absolute path; execv, no shell) and wait for it;
 * with quiet, its stdout goes to /dev/null.  Its exit status, or -1 when
 * it could not be started or was killed.
 */
int bench_run(char *const argv[], bool quiet);
/* The same, its stdout written to the file out (created or truncated),
 * or ours when out is NULL. */
int bench_run_to(char *const argv[], const char *out);

#endif
