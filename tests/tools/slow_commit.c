/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only LD_PRELOAD shim (never installed, never linked into fwdalloc):
 * a database whose COMMIT is slow to answer.  mysql_commit() runs the real
 * call, then sleeps FWD_TEST_COMMIT_DELAY seconds (unset: no delay), so
 * the transaction is committed on the server while the client has not
 * heard back yet: what a slow or overloaded server looks like to the
 * controller prolog.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

/* MariaDB Connector/C: my_bool mysql_commit(MYSQL *mysql); my_bool is a
 * char. */
char mysql_commit(void *mysql);

char mysql_commit(void *mysql)
{
	char (*real)(void *) =
		(char (*)(void *))dlsym(RTLD_NEXT, "mysql_commit");
	const char *s = getenv("FWD_TEST_COMMIT_DELAY");
	char rc = real ? real(mysql) : 1;

	if (s && *s) {
		double t = atof(s);
		struct timespec ts = {(time_t)t,
				      (long)((t - (double)(time_t)t) * 1e9)};

		nanosleep(&ts, NULL);
	}
	return rc;
}
