/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only LD_PRELOAD shim (never installed, never linked into fwdalloc):
 * a database whose COMMIT is slow to answer once.  mysql_commit() runs
 * the real call, then sleeps FWD_TEST_COMMIT_DELAY seconds, so the
 * transaction is committed on the server while the client has not heard
 * back yet: what a slow or overloaded server looks like to the controller
 * prolog.  Only the first commit of the process tree is slowed: the one
 * that creates the file FWD_TEST_COMMIT_ONCE (O_EXCL); later commits (a
 * second worker's) are not.  Unset variables: no delay.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* MariaDB Connector/C: my_bool mysql_commit(MYSQL *mysql); my_bool is a
 * char. */
char mysql_commit(void *mysql);

char mysql_commit(void *mysql)
{
	char (*real)(void *) =
		(char (*)(void *))dlsym(RTLD_NEXT, "mysql_commit");
	const char *s = getenv("FWD_TEST_COMMIT_DELAY");
	const char *once = getenv("FWD_TEST_COMMIT_ONCE");
	char rc = real ? real(mysql) : 1;
	int fd;

	if (s && *s && once && *once &&
	    (fd = open(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) >=
		    0) {
		double t = atof(s);
		struct timespec ts = {(time_t)t,
				      (long)((t - (double)(time_t)t) * 1e9)};

		close(fd);
		nanosleep(&ts, NULL);
	}
	return rc;
}
