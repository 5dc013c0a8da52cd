/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private MariaDB for benchmarks (bench/testdb.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/testdb.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

int bench_run_to(char *const argv[], const char *out)
{
	pid_t pid;
	int st;

	fflush(NULL); /* or the child would write our buffers again */
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out && !freopen(out, "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int bench_run(char *const argv[], bool quiet)
{
	return bench_run_to(argv, quiet ? "/dev/null" : NULL);
}

/* Connect to b->dir's server as the controller, schema brought up to
 * date; exits on failure. */
static void connect_dir(struct bench_db *b, bool stop_on_failure)
{
	fwd_error_t err = {{0}};

	snprintf(b->sock, sizeof(b->sock), "%s/mysql.sock", b->dir);
	snprintf(b->pass, sizeof(b->pass), "%s/db.pass", b->dir);
	memset(&b->cfg, 0, sizeof(b->cfg));
	b->cfg.socket = b->sock;
	b->cfg.name = (char *)"fwdalloc";
	b->cfg.user = (char *)"fwdalloc";
	b->cfg.password_file = b->pass;
	b->cfg.timeout = 600; /* bulk statements, not job launch */
	b->db = db_connect(&b->cfg, DB_ROLE_CONTROLLER, &err);
	if (!b->db || db_migrate(b->db, NULL, NULL, &err) < 0) {
		fprintf(stderr, "bench: %s: %s\n", b->dir, err.text);
		if (stop_on_failure)
			bench_db_stop(b);
		else
			db_close(b->db);
		exit(1);
	}
}

void bench_db_start(struct bench_db *b)
{
	char *argv[] = {(char *)TOP_SRCDIR "/scripts/testdb", (char *)"start",
			b->dir, NULL};

	snprintf(b->dir, sizeof(b->dir), "/tmp/fwd-bench.XXXXXX");
	if (!mkdtemp(b->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	if (bench_run(argv, true) != 0) {
		fprintf(stderr, "bench: scripts/testdb start %s failed\n",
			b->dir);
		exit(1);
	}
	connect_dir(b, true);
}

void bench_db_attach(struct bench_db *b, const char *dir)
{
	if ((size_t)snprintf(b->dir, sizeof(b->dir), "%s", dir) >=
	    sizeof(b->dir)) {
		fprintf(stderr, "bench: %s: directory name too long\n", dir);
		exit(1);
	}
	connect_dir(b, false);
}

void bench_db_keep(struct bench_db *b)
{
	db_close(b->db);
	b->db = NULL;
	printf("store kept: %s (running; scripts/testdb stop %s, then "
	       "remove it)\n",
	       b->dir, b->dir);
}

void bench_db_stop(struct bench_db *b)
{
	char *stop[] = {(char *)TOP_SRCDIR "/scripts/testdb", (char *)"stop",
			b->dir, NULL};
	char *rm[] = {(char *)"/bin/rm", (char *)"-rf", b->dir, NULL};

	db_close(b->db);
	b->db = NULL;
	bench_run(stop, true);
	bench_run(rm, true);
}

int bench_db_settle(struct db *db, const char *dbdir)
{
	char *flush[] = {(char *)TOP_SRCDIR "/scripts/testdb",
			 (char *)"sql",
			 (char *)dbdir,
			 (char *)"-e",
			 (char *)"SET GLOBAL innodb_max_dirty_pages_pct = 0",
			 NULL};
	char *keep[] = {(char *)TOP_SRCDIR "/scripts/testdb",
			(char *)"sql",
			(char *)dbdir,
			(char *)"-e",
			(char *)"SET GLOBAL innodb_max_dirty_pages_pct = 90",
			NULL};
	double t0 = fwd_clock_mono();
	int64_t dirty = -1, purge = -1;
	fwd_error_t err;

	if (bench_run(flush, true) != 0)
		return -1;
	while (fwd_clock_mono() - t0 < 120) {
		if (db_query_int64(db, &err, &dirty,
				   "SELECT VARIABLE_VALUE FROM "
				   "information_schema.GLOBAL_STATUS WHERE "
				   "VARIABLE_NAME = "
				   "'INNODB_BUFFER_POOL_PAGES_DIRTY'",
				   "") < 0 ||
		    db_query_int64(db, &err, &purge,
				   "SELECT VARIABLE_VALUE FROM "
				   "information_schema.GLOBAL_STATUS WHERE "
				   "VARIABLE_NAME = "
				   "'INNODB_HISTORY_LIST_LENGTH'",
				   "") < 0) {
			fprintf(stderr, "bench: settle: %s\n", err.text);
			bench_run(keep, true);
			return -1;
		}
		if (dirty <= 16 && purge <= 64)
			break;
		usleep(100000);
	}
	if (bench_run(keep, true) != 0)
		return -1;
	printf("  (settled: %.1f s; %lld dirty pages, %lld to purge)\n",
	       fwd_clock_mono() - t0, (long long)dirty, (long long)purge);
	fflush(stdout);
	return 0;
}
