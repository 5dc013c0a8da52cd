/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only LD_PRELOAD shim (never installed, never linked into fwdalloc):
 * a database whose COMMIT is slow to answer.  mysql_commit() runs the
 * real call, then sleeps, so the transaction is committed on the server
 * while the client has not heard back yet: what a slow or overloaded
 * server looks like to the controller prolog.
 *
 * FWD_TEST_COMMIT_DELAY is a list of delays in seconds ("3", "1.5 3"):
 * the k-th commit of the process tree sleeps the k-th delay, and commits
 * past the list are not slowed.  A commit is the k-th when it is the one
 * that creates the file FWD_TEST_COMMIT_ONCE (k = 1) or
 * FWD_TEST_COMMIT_ONCE.k (k > 1), each with O_EXCL, in that order: so a
 * second worker's commit is slowed by the second delay, whatever process
 * it runs in.  Unset variables: no delay.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* MariaDB Connector/C: my_bool mysql_commit(MYSQL *mysql); my_bool is a
 * char. */
char mysql_commit(void *mysql);

/* The delay of this commit (seconds), or a negative value for none. */
static double claim_delay(void)
{
	const char *s = getenv("FWD_TEST_COMMIT_DELAY");
	const char *once = getenv("FWD_TEST_COMMIT_ONCE");
	char path[4096];
	char *end;
	double t;
	int k, fd;

	if (!s || !*s || !once || !*once)
		return -1;
	for (k = 1;; k++) {
		t = strtod(s, &end);
		if (end == s)
			return -1;
		s = end;
		if (k == 1)
			snprintf(path, sizeof(path), "%s", once);
		else
			snprintf(path, sizeof(path), "%s.%d", once, k);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return t;
		}
	}
}

char mysql_commit(void *mysql)
{
	char (*real)(void *) =
		(char (*)(void *))dlsym(RTLD_NEXT, "mysql_commit");
	char rc = real ? real(mysql) : 1;
	double t = claim_delay();

	if (t > 0) {
		struct timespec ts = {(time_t)t,
				      (long)((t - (double)(time_t)t) * 1e9)};

		nanosleep(&ts, NULL);
	}
	return rc;
}
