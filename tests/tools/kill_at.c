/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only LD_PRELOAD shim (never installed, never linked into fwdalloc):
 * kill -9 at a chosen step of a controller hook's worker.  A step is a
 * database round trip: mysql_real_connect(), mysql_stmt_execute(),
 * mysql_commit() or mysql_rollback().  In a process forked from the one
 * the shim was loaded in (the bounded worker of fwdctl prolog/epilog, not
 * fwdctl itself), the FWD_TEST_KILL_AT-th step (1-based) kills the
 * process with SIGKILL, before the call reaches the server, or after it
 * returned when FWD_TEST_KILL_AFTER=1.  Only one process of the tree is
 * killed: the one that creates the file FWD_TEST_KILL_ONCE (O_EXCL), into
 * which it writes the step's name.  Unset variables: no kill.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static pid_t loaded_in;
static long steps;

__attribute__((constructor)) static void kill_at_init(void)
{
	loaded_in = getpid();
}

static void step(const char *name, int after)
{
	const char *at = getenv("FWD_TEST_KILL_AT");
	const char *once = getenv("FWD_TEST_KILL_ONCE");
	const char *a = getenv("FWD_TEST_KILL_AFTER");
	int fd;

	if (getpid() == loaded_in || !at || !*at || !once || !*once)
		return;
	if (!after)
		steps++;
	if ((a && !strcmp(a, "1")) != (after != 0) || steps != atol(at))
		return;
	fd = open(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, name, strlen(name)) < 0) {
		/* the file exists: that is what matters */
	}
	close(fd);
	kill(getpid(), SIGKILL);
}

#define REAL(ret, fn, ...) \
	ret (*real)(__VA_ARGS__) = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, fn)

/* MariaDB Connector/C prototypes; my_bool is a char. */
void *mysql_real_connect(void *m, const char *host, const char *user,
			 const char *passwd, const char *db, unsigned int port,
			 const char *unix_socket, unsigned long flags);
int mysql_stmt_execute(void *stmt);
char mysql_commit(void *m);
char mysql_rollback(void *m);

void *mysql_real_connect(void *m, const char *host, const char *user,
			 const char *passwd, const char *db, unsigned int port,
			 const char *unix_socket, unsigned long flags)
{
	REAL(void *, "mysql_real_connect", void *, const char *, const char *,
	     const char *, const char *, unsigned int, const char *,
	     unsigned long);
	void *r;

	step("connect", 0);
	r = real(m, host, user, passwd, db, port, unix_socket, flags);
	step("connect", 1);
	return r;
}

int mysql_stmt_execute(void *stmt)
{
	REAL(int, "mysql_stmt_execute", void *);
	int r;

	step("execute", 0);
	r = real(stmt);
	step("execute", 1);
	return r;
}

char mysql_commit(void *m)
{
	REAL(char, "mysql_commit", void *);
	char r;

	step("commit", 0);
	r = real(m);
	step("commit", 1);
	return r;
}

char mysql_rollback(void *m)
{
	REAL(char, "mysql_rollback", void *);
	char r;

	step("rollback", 0);
	r = real(m);
	step("rollback", 1);
	return r;
}
